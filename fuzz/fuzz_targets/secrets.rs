//! The secret scanner on any bytes, as a file and as a diff: `scan`, `redact`, `scan_diff`,
//! `redact_diff` and `redact_diff_bytes` never panic, findings lie inside the input, and
//! redacted output never holds a finding's bytes, unless the input also holds them outside
//! every finding (an allow-marked line, a skipped path).
#![no_main]

use git_pair::secrets::{Finding, Scanner};
use libfuzzer_sys::fuzz_target;

fn contains(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Every finding's bytes are gone from `output` unless `input` holds them outside all findings.
fn check(input: &[u8], output: &[u8], findings: &[Finding]) {
    for f in findings {
        let secret = input
            .get(f.range.clone())
            .expect("a finding lies inside the input");
        assert!(!secret.is_empty(), "{f:?}");
        if contains(output, secret).is_none() {
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
