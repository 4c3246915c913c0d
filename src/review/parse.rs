//! Reading a reviewer's answer (SPEC §6.3), fail-closed: the text contract (numbered
//! findings, last `VERDICT:` line wins) and the JSON contract (read strictly as the shipped
//! schema describes it). Pure over bytes: no process, no repository, no I/O. Never yields
//! APPROVED from anything but an explicit, well-formed approval.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::review::schema;

pub use crate::model::{Finding, Severity, Verdict};

/// What an answer says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Parsed {
    /// A verdict was found.
    Verdict {
        /// The verdict (the last verdict line of a text answer).
        verdict: Verdict,
        /// The findings, in order.
        findings: Vec<Finding>,
    },
    /// No verdict could be read; the caller re-asks once, then records CHANGES_REQUESTED.
    NoVerdict {
        /// Why, for the record and the user.
        reason: String,
    },
}

/// Parses a reviewer's answer. A JSON object (bare, or as the single fenced block of the
/// answer) is read with the JSON contract; anything else with the text contract, falling back
/// to a fenced JSON block when the text holds no verdict line. Invalid UTF-8 is decoded lossily.
pub fn parse_answer(bytes: &[u8]) -> Parsed {
    let text = String::from_utf8_lossy(bytes);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return no_verdict("the answer is empty");
    }
    if trimmed.starts_with('{') {
        return parse_json(trimmed);
    }
    let blocks = fenced_blocks(trimmed);
    if let [only] = blocks.as_slice()
        && only.whole
    {
        return if only.body.trim_start().starts_with('{') {
            parse_json(only.body)
        } else {
            parse_text(only.body)
        };
    }
    match parse_text(trimmed) {
        verdict @ Parsed::Verdict { .. } => verdict,
        Parsed::NoVerdict { reason } => {
            match blocks
                .iter()
                .rev()
                .find(|b| b.body.trim_start().starts_with('{'))
            {
                Some(json) => parse_json(json.body),
                None => Parsed::NoVerdict { reason },
            }
        }
    }
}

/// Parses the JSON contract: one object as the shipped review schema describes it.
pub fn parse_json(text: &str) -> Parsed {
    let value: Value = match serde_json::from_str(text.trim()) {
        Ok(v) => v,
        Err(e) => return no_verdict(format!("the answer is not valid JSON: {e}")),
    };
    match schema::Answer::from_value(&value) {
        Ok(answer) => Parsed::Verdict {
            verdict: answer.verdict,
            findings: answer.into_findings(),
        },
        Err(what) => no_verdict(format!(
            "the JSON answer does not match the review schema: {what}"
        )),
    }
}

/// Parses the text contract: `N. [category] [severity: s] path:line — text` lines and a
/// whole-line `VERDICT: APPROVED|CHANGES_REQUESTED|REVISE`; the last verdict line wins.
/// Lines inside fenced code blocks are quoted material and count for nothing.
pub fn parse_text(text: &str) -> Parsed {
    let mut verdict = None;
    let mut findings: Vec<Finding> = Vec::new();
    let mut in_fence = false;
    let mut continuing = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            continuing = false;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(v) = verdict_line(line) {
            verdict = Some(v);
            continuing = false;
            continue;
        }
        if let Some(mut finding) = finding_line(line) {
            finding.n = u32::try_from(findings.len() + 1).unwrap_or(u32::MAX);
            findings.push(finding);
            continuing = true;
            continue;
        }
        // An indented line right below a finding continues its text.
        let indented = raw.starts_with("  ") || raw.starts_with('\t');
        match findings.last_mut() {
            Some(last) if continuing && indented && !line.is_empty() => {
                last.text.push(' ');
                last.text.push_str(line);
            }
            _ => continuing = false,
        }
    }
    match verdict {
        Some(verdict) => Parsed::Verdict { verdict, findings },
        None => no_verdict(format!(
            "no line `VERDICT: APPROVED` or `VERDICT: CHANGES_REQUESTED` in the answer ({} finding lines read)",
            findings.len()
        )),
    }
}

fn no_verdict(reason: impl Into<String>) -> Parsed {
    Parsed::NoVerdict {
        reason: reason.into(),
    }
}

fn verdict_line(line: &str) -> Option<Verdict> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?i)^VERDICT\s*:\s*(APPROVED|CHANGES[_ ]REQUESTED|REVISE)\.?$")
            .expect("verdict regex is valid")
    });
    let line = line.trim_start_matches(['#', '>', ' ']);
    // Markdown emphasis and code spans anywhere on the line (`**VERDICT:** APPROVED`); the
    // words themselves must still be whole and alone on the line.
    if !line
        .trim_start_matches(['*', '_', '`'])
        .get(..7)
        .is_some_and(|w| w.eq_ignore_ascii_case("verdict"))
    {
        return None;
    }
    let plain: String = line.chars().filter(|c| *c != '*' && *c != '`').collect();
    let caps = re.captures(plain.trim_matches('_').trim())?;
    let word = caps[1].to_ascii_uppercase();
    Some(if word == "APPROVED" {
        Verdict::Approved
    } else {
        Verdict::ChangesRequested
    })
}

fn finding_line(line: &str) -> Option<Finding> {
    static HEAD: OnceLock<Regex> = OnceLock::new();
    static SEVERITY: OnceLock<Regex> = OnceLock::new();
    let head = HEAD.get_or_init(|| {
        Regex::new(r"^(?:\*\*)?(\d{1,4})[.)](?:\*\*)?\s+(.*)$").expect("finding regex is valid")
    });
    let severity_re = SEVERITY.get_or_init(|| {
        Regex::new(r"(?i)\[\s*severity\s*:\s*(critical|high|medium|low)\s*\]")
            .expect("severity regex is valid")
    });
    let caps = head.captures(line)?;
    let mut rest = caps.get(2)?.as_str().trim();
    let mut category = None;
    let mut severity = None;
    // Leading bracket groups: the category and, in either order, a severity tag.
    loop {
        let unbolded = rest.trim_start_matches("**");
        if !unbolded.starts_with('[') {
            break;
        }
        let Some(close) = unbolded.find(']') else {
            break;
        };
        let group = &unbolded[..=close];
        if let Some(c) = severity_re
            .captures(group)
            .filter(|c| c[0].len() == group.len())
        {
            severity = Severity::parse(&c[1]);
        } else if category.is_none() {
            let name = group[1..group.len() - 1].trim();
            if name.is_empty() {
                return None;
            }
            category = Some(name.to_owned());
        } else {
            break;
        }
        rest = unbolded[close + 1..].trim_start_matches("**").trim_start();
    }
    let category = category?;
    let mut rest = rest.to_owned();
    if severity.is_none()
        && let Some(m) = severity_re.find(&rest)
    {
        severity = Severity::parse(&severity_re.captures(m.as_str())?[1]);
        rest.replace_range(m.range(), "");
    }
    let rest = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    let (location, text) = split_location(&rest);
    Some(Finding {
        n: 0,
        category,
        severity,
        location: location.to_owned(),
        text: text.to_owned(),
    })
}

/// Splits `path:line — text` at the first separator (`—`, `--` or `-` between spaces; `—`
/// also without them) when what precedes it looks like a location.
fn split_location(rest: &str) -> (&str, &str) {
    let candidates = [" — ", "—", " -- ", " - ", " – "];
    let first = candidates
        .iter()
        .filter_map(|sep| rest.find(sep).map(|at| (at, sep.len())))
        .min_by_key(|&(at, _)| at);
    if let Some((at, len)) = first {
        let head = rest[..at].trim().trim_matches('`');
        let tail = rest[at + len..].trim();
        if looks_like_location(head) {
            return (head, tail);
        }
    }
    ("", rest.trim())
}

fn looks_like_location(s: &str) -> bool {
    !s.is_empty()
        && !s.contains(char::is_whitespace)
        && s.contains(['/', '.', ':'])
        && !s.ends_with('.')
        && s.chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || "./_~".contains(c))
}

/// A fenced code block of an answer.
struct Fence<'a> {
    body: &'a str,
    /// The block is the entire (trimmed) answer.
    whole: bool,
}

fn fenced_blocks(text: &str) -> Vec<Fence<'_>> {
    let mut blocks = Vec::new();
    // (where the opening fence line starts, where the body starts)
    let mut open: Option<(usize, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            match open.take() {
                None => open = Some((offset, offset + line.len())),
                Some((opener, body_start)) => blocks.push(Fence {
                    body: &text[body_start..offset],
                    whole: opener == 0 && text[offset + line.len()..].trim().is_empty(),
                }),
            }
        }
        offset += line.len();
    }
    blocks
}

/// Shortens `text` for display to at most about `max_bytes`, keeping its head and tail
/// around a marker saying how much was left out. Returns the text untouched when it fits.
pub fn truncate_for_display(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let half = max_bytes / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let omitted = tail_start - head_end;
    Cow::Owned(format!(
        "{}\n[… {omitted} bytes omitted …]\n{}",
        &text[..head_end],
        &text[tail_start..]
    ))
}

/// Writes findings and a verdict in the text contract, the inverse of [`parse_text`].
pub fn render_contract(verdict: Verdict, findings: &[Finding]) -> String {
    let mut out = String::new();
    for (i, f) in findings.iter().enumerate() {
        out.push_str(&format!("{}. [{}]", i + 1, f.category));
        if let Some(s) = f.severity {
            out.push_str(&format!(" [severity: {}]", s.as_str()));
        }
        if !f.location.is_empty() {
            out.push_str(&format!(" {} —", f.location));
        }
        out.push(' ');
        out.push_str(&f.text.split_whitespace().collect::<Vec<_>>().join(" "));
        out.push('\n');
    }
    out.push_str("VERDICT: ");
    out.push_str(verdict.as_str());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    type FindingShape = (String, Option<Severity>, String, String);

    fn f(category: &str, severity: Option<Severity>, location: &str, text: &str) -> FindingShape {
        (category.into(), severity, location.into(), text.into())
    }

    fn shape(p: &Parsed) -> (Option<Verdict>, Vec<FindingShape>) {
        match p {
            Parsed::Verdict { verdict, findings } => (
                Some(*verdict),
                findings
                    .iter()
                    .map(|x| {
                        (
                            x.category.clone(),
                            x.severity,
                            x.location.clone(),
                            x.text.clone(),
                        )
                    })
                    .collect(),
            ),
            Parsed::NoVerdict { .. } => (None, vec![]),
        }
    }

    #[test]
    fn text_contract_table() {
        use Severity::*;
        use Verdict::*;
        type Row = (
            &'static str,
            &'static str,
            Option<Verdict>,
            Vec<FindingShape>,
        );
        let rows: Vec<Row> = vec![
            (
                "location with em dash",
                "1. [correctness] src/lib.rs:42 — off by one\nVERDICT: CHANGES_REQUESTED\n",
                Some(ChangesRequested),
                vec![f("correctness", None, "src/lib.rs:42", "off by one")],
            ),
            (
                "double hyphen separator",
                "1. [bug] src/a.rs:3 -- wrong sign\nVERDICT: CHANGES_REQUESTED",
                Some(ChangesRequested),
                vec![f("bug", None, "src/a.rs:3", "wrong sign")],
            ),
            (
                "single hyphen separator, hyphenated path",
                "1. [bug] src/my-file.rs:3 - wrong sign\nVERDICT: CHANGES_REQUESTED",
                Some(ChangesRequested),
                vec![f("bug", None, "src/my-file.rs:3", "wrong sign")],
            ),
            (
                "em dash without spaces",
                "1. [bug] a.rs:1—tight\nVERDICT: REVISE",
                Some(ChangesRequested),
                vec![f("bug", None, "a.rs:1", "tight")],
            ),
            (
                "no location",
                "1. [tests] No test covers the new branch\n2. [docs] README.md — outdated section\nVERDICT: CHANGES_REQUESTED",
                Some(ChangesRequested),
                vec![
                    f("tests", None, "", "No test covers the new branch"),
                    f("docs", None, "README.md", "outdated section"),
                ],
            ),
            (
                "prose before a separator is not a location",
                "1. [style] Variable naming — inconsistent\nVERDICT: APPROVED",
                Some(Approved),
                vec![f("style", None, "", "Variable naming — inconsistent")],
            ),
            (
                "severity tags before, after and at the end",
                "1. [security] [severity: critical] src/auth.rs:9 — token logged\n\
                 2. [severity: LOW] [perf] src/x.rs — slow loop\n\
                 3. [data-loss] src/db.rs:1 — partial write [severity: high]\n\
                 4. [misc] [severity: urgent] not a known severity\n\
                 VERDICT: CHANGES_REQUESTED",
                Some(ChangesRequested),
                vec![
                    f("security", Some(Critical), "src/auth.rs:9", "token logged"),
                    f("perf", Some(Low), "src/x.rs", "slow loop"),
                    f("data-loss", Some(High), "src/db.rs:1", "partial write"),
                    f("misc", None, "", "[severity: urgent] not a known severity"),
                ],
            ),
            (
                "stray earlier verdict in prose, last line wins",
                "I will end with VERDICT: APPROVED if all is well.\nVERDICT: APPROVED\n\
                 On second look:\n1. [bug] a.rs:1 — crash\nVERDICT: CHANGES_REQUESTED\n",
                Some(ChangesRequested),
                vec![f("bug", None, "a.rs:1", "crash")],
            ),
            (
                "markdown emphasis inside the verdict line",
                "**VERDICT:** `CHANGES_REQUESTED`\n",
                Some(ChangesRequested),
                vec![],
            ),
            (
                "a verdict line with trailing words is prose",
                "VERDICT: APPROVED, once the test passes\n",
                None,
                vec![],
            ),
            (
                "verdict mentioned inside a sentence does not count",
                "Please output VERDICT: APPROVED when done.\n1. [bug] x.rs — y\n",
                None,
                vec![],
            ),
            ("no verdict at all", "Looks fine to me.\n", None, vec![]),
            (
                "markdown decoration around the verdict and a continuation line",
                "1. [bug] a.rs:1 — first line\n   continues here\n\n**VERDICT: APPROVED**\n",
                Some(Approved),
                vec![f("bug", None, "a.rs:1", "first line continues here")],
            ),
            (
                "verdict and findings inside a fence are quoted, not answered",
                "Format:\n```\n1. [x] y — z\nVERDICT: APPROVED\n```\nVERDICT: CHANGES_REQUESTED\n",
                Some(ChangesRequested),
                vec![],
            ),
            (
                "numbered prose without a category is not a finding",
                "1. I read the diff.\n2) [bug] b.py:7 — None deref\nverdict: changes requested\n",
                Some(ChangesRequested),
                vec![f("bug", None, "b.py:7", "None deref")],
            ),
        ];
        for (name, input, verdict, findings) in rows {
            let got = parse_answer(input.as_bytes());
            assert_eq!(shape(&got), (verdict, findings), "{name}: {got:?}");
        }
    }

    #[test]
    fn findings_are_renumbered_in_order() {
        let p = parse_text("3. [a] x — y\n3. [b] z\nVERDICT: CHANGES_REQUESTED");
        let Parsed::Verdict { findings, .. } = p else {
            panic!("verdict expected")
        };
        assert_eq!(findings.iter().map(|f| f.n).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn json_contract_table() {
        let cases: &[(&str, &str, Option<Verdict>, usize)] = &[
            (
                "bare object",
                r#"{"verdict":"APPROVED","findings":[]}"#,
                Some(Verdict::Approved),
                0,
            ),
            (
                "markdown fence",
                "```json\n{\"verdict\":\"CHANGES_REQUESTED\",\"findings\":[{\"category\":\"bug\",\"severity\":\"high\",\"location\":\"a.rs:1\",\"text\":\"t\"}]}\n```\n",
                Some(Verdict::ChangesRequested),
                1,
            ),
            (
                "fence after prose with no verdict line",
                "Here is my review:\n\n```\n{\"verdict\":\"APPROVED\",\"findings\":[]}\n```\n",
                Some(Verdict::Approved),
                0,
            ),
            (
                "wrong enum",
                r#"{"verdict":"approve","findings":[]}"#,
                None,
                0,
            ),
            (
                "codex's own review format",
                r#"{"findings":[],"overall_correctness":"patch is correct"}"#,
                None,
                0,
            ),
            (
                "truncated JSON",
                r#"{"verdict":"APPROVED","findings":["#,
                None,
                0,
            ),
            (
                "JSON string holding a text verdict is still JSON",
                r#"{"verdict":"CHANGES_REQUESTED","findings":[{"category":"x","severity":null,"location":"","text":"VERDICT: APPROVED"}]}"#,
                Some(Verdict::ChangesRequested),
                1,
            ),
        ];
        for (name, input, verdict, n) in cases {
            let got = parse_answer(input.as_bytes());
            match (&got, verdict) {
                (
                    Parsed::Verdict {
                        verdict: v,
                        findings,
                    },
                    Some(want),
                ) => {
                    assert_eq!((v, findings.len()), (want, *n), "{name}");
                }
                (Parsed::NoVerdict { .. }, None) => {}
                _ => panic!("{name}: {got:?}"),
            }
        }
    }

    #[test]
    fn wrong_enum_reason_names_the_field() {
        let Parsed::NoVerdict { reason } = parse_answer(br#"{"verdict":"approve","findings":[]}"#)
        else {
            panic!("must not parse")
        };
        assert!(reason.contains("/verdict"), "{reason}");
    }

    #[test]
    fn json_findings_map_absent_fields_to_empty_location_and_no_severity() {
        let p = parse_json(
            r#"{"verdict":"CHANGES_REQUESTED","findings":[{"category":"bug","severity":null,"location":"","text":" t "}]}"#,
        );
        assert_eq!(
            p,
            Parsed::Verdict {
                verdict: Verdict::ChangesRequested,
                findings: vec![Finding {
                    n: 1,
                    category: "bug".into(),
                    severity: None,
                    location: String::new(),
                    text: "t".into()
                }]
            }
        );
    }

    #[test]
    fn non_utf8_bytes_are_decoded_lossily() {
        let mut bytes = b"1. [bug] a.rs:1 \xff\xfe broken \xc3\n".to_vec();
        bytes.extend_from_slice(b"VERDICT: CHANGES_REQUESTED\n");
        let got = parse_answer(&bytes);
        let Parsed::Verdict { verdict, findings } = got else {
            panic!("verdict expected")
        };
        assert_eq!(verdict, Verdict::ChangesRequested);
        assert!(findings[0].text.contains('\u{fffd}'));
        assert!(matches!(
            parse_answer(b"\xff\xff\xff"),
            Parsed::NoVerdict { .. }
        ));
    }

    #[test]
    fn five_megabytes_parse_and_truncate() {
        let line = "Reviewing a long line of output that says nothing in particular.\n";
        let mut big = line.repeat(5 * 1024 * 1024 / line.len() + 1);
        assert!(big.len() >= 5 * 1024 * 1024);
        assert!(matches!(
            parse_answer(big.as_bytes()),
            Parsed::NoVerdict { .. }
        ));
        big.push_str("1. [bug] a.rs:1 — late finding\nVERDICT: CHANGES_REQUESTED\n");
        let got = parse_answer(big.as_bytes());
        assert_eq!(shape(&got).0, Some(Verdict::ChangesRequested));
        assert_eq!(shape(&got).1.len(), 1);

        let shown = truncate_for_display(&big, 4096);
        assert!(shown.len() < 4096 + 64, "{}", shown.len());
        assert!(shown.starts_with("Reviewing"));
        assert!(shown.ends_with("VERDICT: CHANGES_REQUESTED\n"));
        assert!(shown.contains("bytes omitted"));
        assert!(matches!(
            truncate_for_display("short", 10),
            Cow::Borrowed("short")
        ));
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        let s = "é".repeat(100);
        let t = truncate_for_display(&s, 11);
        assert!(t.contains("bytes omitted"));
        let omitted: usize = t
            .split("[… ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("marker");
        assert_eq!(t.matches('é').count() * 2 + omitted, s.len());
    }

    #[test]
    fn rendered_contract_parses_back_to_the_same_findings() {
        let findings = vec![
            Finding {
                n: 1,
                category: "secret".into(),
                severity: Some(Severity::Critical),
                location: "a/b.rs:3".into(),
                text: "AWS key".into(),
            },
            Finding {
                n: 2,
                category: "tests".into(),
                severity: None,
                location: String::new(),
                text: "no test changed".into(),
            },
        ];
        let text = render_contract(Verdict::ChangesRequested, &findings);
        assert_eq!(
            text,
            "1. [secret] [severity: critical] a/b.rs:3 — AWS key\n2. [tests] no test changed\nVERDICT: CHANGES_REQUESTED\n"
        );
        assert_eq!(
            parse_answer(text.as_bytes()),
            Parsed::Verdict {
                verdict: Verdict::ChangesRequested,
                findings
            }
        );
    }
}
