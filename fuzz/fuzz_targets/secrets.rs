//! The secret scanner on any bytes, as a file and as a diff: `scan`, `redact`, `scan_diff`,
//! `redact_diff` and `redact_diff_bytes` never panic, findings lie inside the input, and
//! redacted output never holds a finding's bytes, unless the input also holds them outside
//! every finding (an allow-marked line, a skipped path). The `[REDACTED:<kind>]` markers are
//! the redactor's own text, not input: a secret such as `REDAC` may occur inside them.
#![no_main]

use git_pair::secrets::{Finding, Scanner, redaction_marker};
use libfuzzer_sys::fuzz_target;

fn contains(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `output` cut around every redaction marker of `findings`' kinds: the parts that are not
/// the redactor's own text.
fn outside_markers<'a>(output: &'a [u8], findings: &[Finding]) -> Vec<&'a [u8]> {
    let mut parts = vec![output];
    for f in findings {
        let marker = redaction_marker(&f.kind).into_bytes();
        parts = parts
            .into_iter()
            .flat_map(|part| {
                let mut pieces = Vec::new();
                let mut rest = part;
                while let Some(at) = contains(rest, &marker) {
                    pieces.push(&rest[..at]);
                    rest = &rest[at + marker.len()..];
                }
                pieces.push(rest);
                pieces
            })
            .collect();
    }
    parts
}

/// Every finding's bytes are gone from `output` unless `input` holds them outside all findings.
fn check(input: &[u8], output: &[u8], findings: &[Finding]) {
    let parts = outside_markers(output, findings);
    for f in findings {
        let secret = input
            .get(f.range.clone())
            .expect("a finding lies inside the input");
        assert!(!secret.is_empty(), "{f:?}");
        if parts.iter().all(|part| contains(part, secret).is_none()) {
            continue;
        }
        let elsewhere = (0..=input.len() - secret.len()).any(|at| {
            input[at..].starts_with(secret)
                && findings
                    .iter()
                    .all(|g| at + secret.len() <= g.range.start || g.range.end <= at)
        });
        assert!(elsewhere, "redacted output still holds the secret of {f:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    let scanner = Scanner::builtin();
    check(data, &[], &scanner.scan("src/app.rs", data));
    let text = String::from_utf8_lossy(data);
    let (out, findings) = scanner.redact("src/app.rs", &text);
    check(text.as_bytes(), out.as_bytes(), &findings);

    let (out, findings) = scanner.redact_diff_bytes(data);
    assert_eq!(findings, scanner.scan_diff(data));
    check(data, &out, &findings);
    if let Ok(diff) = std::str::from_utf8(data) {
        let (out, findings) = scanner.redact_diff(diff);
        check(data, out.as_bytes(), &findings);
    }
});
