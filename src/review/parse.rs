//! Reading a reviewer's answer (SPEC §6.3), fail-closed: the text contract (numbered
//! findings, the verdict on the answer's last non-empty line and nowhere else) and the JSON
//! contract (the whole answer, or a fenced block that ends it, read as the shipped schema
//! describes it). Pure over bytes: no process, no repository, no I/O. Never yields APPROVED
//! from anything but an explicit, well-formed approval written where an answer ends.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::review::schema;

pub use crate::model::{Finding, Severity, Verdict};

/// What an answer says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Parsed {
    /// A verdict was found.
    Verdict {
        /// The verdict (the last line of a text answer).
        verdict: Verdict,
        /// The findings, in order.
        findings: Vec<Finding>,
        /// What the parser noticed but did not hold against the answer (keys of a JSON answer
        /// that the contract does not know, which are ignored).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        notes: Vec<String>,
    },
    /// No verdict could be read; the caller re-asks once, then records CHANGES_REQUESTED.
    NoVerdict {
        /// Why, for the record and the user.
        reason: String,
    },
}

/// Parses a reviewer's answer. The JSON contract applies when the whole answer is one JSON
/// object, or when the answer ends with a fenced block holding one; anything else is read
/// with the text contract, whose verdict is the last non-empty line. JSON quoted earlier in
/// the answer never counts. Invalid UTF-8 is decoded lossily.
pub fn parse_answer(bytes: &[u8]) -> Parsed {
    let text = String::from_utf8_lossy(bytes);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return no_verdict("the answer is empty");
    }
    if trimmed.starts_with('{') {
        return parse_json(trimmed);
    }
    if let Some(body) = closing_block(trimmed)
        && body.trim_start().starts_with('{')
    {
        return parse_json(&body);
    }
    parse_text(trimmed)
}

/// Parses the JSON contract: one object as the shipped review schema describes it, with no
/// key named twice anywhere (which one would count is not the reviewer's to leave open).
pub fn parse_json(text: &str) -> Parsed {
    let value = match schema::parse_unique(text.trim()) {
        Ok(v) => v,
        Err(e) => return no_verdict(format!("the answer is not valid JSON: {e}")),
    };
    match schema::Answer::from_value(&value) {
        Ok(answer) => {
            let notes = answer.ignored_note().into_iter().collect();
            Parsed::Verdict {
                verdict: answer.verdict,
                findings: answer.into_findings(),
                notes,
            }
        }
        Err(what) => no_verdict(format!(
            "the JSON answer does not match the review schema: {}",
            in_words(&what)
        )),
    }
}

/// A schema complaint (`/findings/1: missing field `text``) in the words a re-ask gives the
/// reviewer: `finding 2 has no `text` (at /findings/1)`. A complaint in another form is
/// kept as it is.
fn in_words(what: &str) -> String {
    let Some((at, message)) = what.split_once(": ").filter(|(at, _)| at.starts_with('/')) else {
        return what.to_owned();
    };
    let mut parts = at
        .trim_start_matches('/')
        .split('/')
        .filter(|p| !p.is_empty());
    let place = match (parts.next(), parts.next(), parts.next()) {
        (None, _, _) => "the answer".to_owned(),
        (Some("findings"), Some(i), rest) if i.parse::<u64>().is_ok() => {
            let n = i.parse::<u64>().unwrap_or(0) + 1;
            match rest {
                None => format!("finding {n}"),
                Some(key) => format!("finding {n}'s `{key}`"),
            }
        }
        (Some(key), None, _) => format!("`{key}`"),
        _ => at.to_owned(),
    };
    let said = match message.strip_prefix("missing field ") {
        Some(field) => format!("{place} has no {field}"),
        None => format!("{place}: {message}"),
    };
    format!("{said} (at {at})")
}

/// Parses the text contract: `N. [category] [severity: s] path:line — text` lines and, as
/// the last non-empty line, exactly `VERDICT: APPROVED|CHANGES_REQUESTED|REVISE`. A verdict
/// line anywhere else is quoted or premature and counts for nothing; a last line that is not
/// a verdict means no verdict. Lines inside fenced code blocks are quoted material and give no
/// findings (a fence left open at the end is not a quote: its lines are read).
pub fn parse_text(text: &str) -> Parsed {
    let lines: Vec<&str> = text.lines().collect();
    let Some(last) = lines.iter().rposition(|l| !l.trim().is_empty()) else {
        return no_verdict("the answer is empty");
    };
    let quoted = quoted_lines(&lines[..last]);
    let mut findings: Vec<Finding> = Vec::new();
    let mut continuing = false;
    for (raw, quoted) in lines[..last].iter().zip(quoted) {
        let line = raw.trim();
        if quoted || verdict_line(line).is_some() {
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
    let last_line = lines[last].trim();
    match verdict_line(last_line) {
        Some(verdict) => Parsed::Verdict {
            verdict,
            findings,
            notes: Vec::new(),
        },
        None => no_verdict(format!(
            "the last line of the answer is not exactly `VERDICT: APPROVED` or `VERDICT: CHANGES_REQUESTED` ({} finding lines read)",
            findings.len()
        )),
    }
}

fn no_verdict(reason: impl Into<String>) -> Parsed {
    Parsed::NoVerdict {
        reason: reason.into(),
    }
}

/// A whole-line verdict, as the reviewer's own line: markdown headings, emphasis and code
/// spans around it are allowed; a block quote (`>`), a diff line (`+`, `-`) or any other
/// word on the line is not a verdict.
fn verdict_line(line: &str) -> Option<Verdict> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?i)^VERDICT\s*:\s*(APPROVED|CHANGES[_ ]REQUESTED|REVISE)\.?$")
            .expect("verdict regex is valid")
    });
    let line = line.trim_start_matches(['#', ' ']);
    // Markdown emphasis and code spans anywhere on the line (`**VERDICT:** APPROVED`); the
    // words themselves must still be whole and alone on the line.
    if !line
        .trim_start_matches(['*', '_', '`'])
        .get(..7)
        .is_some_and(|w| w.eq_ignore_ascii_case("verdict"))
    {
        return None;
    }
    // Only whole code spans: a fence (three or more backticks) or an unpaired backtick on the
    // line makes it something other than the reviewer's verdict (found by fuzzing:
    // "VERDICT: APPROVED\t```").
    if line.contains("```") || line.matches('`').count() % 2 == 1 {
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

/// A line that could open or close a fenced code block: its fence character, how many of
/// them, and what follows (an opener's info string; a closer has nothing).
fn fence_run(line: &str) -> Option<(char, usize, &str)> {
    let t = line.trim();
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    let rest = t[n..].trim();
    // A backtick fence's info string holds no backtick (CommonMark): "```x```" is a code span.
    (n >= 3 && !(c == '`' && rest.contains('`'))).then_some((c, n, rest))
}

/// The fenced code blocks of `lines`, as (opening line, closing line) index pairs. A closer
/// has the opener's character, at least as many of it, and nothing else; an opener that no
/// later line could close is plain text, so a fence left open never hides what follows it.
/// Linear in the number of lines.
fn fenced_blocks(lines: &[&str]) -> Vec<(usize, usize)> {
    let runs: Vec<Option<(char, usize, &str)>> = lines.iter().map(|l| fence_run(l)).collect();
    // The longest bare fence of each character after line i: [backtick, tilde].
    let mut longest_after = vec![[0usize; 2]; lines.len() + 1];
    for i in (0..lines.len()).rev() {
        let mut longest = longest_after[i + 1];
        if let Some((c, n, "")) = runs[i] {
            let k = usize::from(c == '~');
            longest[k] = longest[k].max(n);
        }
        longest_after[i] = longest;
    }
    let mut blocks = Vec::new();
    let mut open: Option<(usize, char, usize)> = None;
    for (i, run) in runs.iter().enumerate() {
        let Some((c, n, rest)) = *run else { continue };
        match open {
            None if longest_after[i + 1][usize::from(c == '~')] >= n => open = Some((i, c, n)),
            None => {}
            Some((at, oc, on)) if c == oc && n >= on && rest.is_empty() => {
                blocks.push((at, i));
                open = None;
            }
            Some(_) => {}
        }
    }
    blocks
}

/// Which of `lines` are quoted material: inside a fenced block, or one of its fence lines.
fn quoted_lines(lines: &[&str]) -> Vec<bool> {
    let mut quoted = vec![false; lines.len()];
    for (open, close) in fenced_blocks(lines) {
        quoted[open..=close].fill(true);
    }
    quoted
}

/// The body of the fenced block that ends `text` (its last non-empty line closes it), if
/// one does.
fn closing_block(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.iter().rposition(|l| !l.trim().is_empty())?;
    let (open, _) = fenced_blocks(&lines)
        .into_iter()
        .find(|&(_, close)| close == last)?;
    Some(lines[open + 1..last].join("\n"))
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
            Parsed::Verdict {
                verdict, findings, ..
            } => (
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
                "a trailing fence on the verdict line (found by fuzzing)",
                "VERDICT: APPROVED\t```\t\t",
                None,
                vec![],
            ),
            ("an unpaired backtick", "`VERDICT: APPROVED", None, vec![]),
            ("a code span", "`VERDICT: APPROVED`", Some(Approved), vec![]),
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
                "a fence the answer never closes hides neither its findings nor its verdict",
                "The file now reads:\n```markdown\n# Notes\n```\nVERDICT: APPROVED\n```\n\
                 1. [correctness] [severity: medium] NOTES.md:3 — the fence is never closed\n\
                 VERDICT: CHANGES_REQUESTED\n",
                Some(ChangesRequested),
                vec![f(
                    "correctness",
                    Some(Medium),
                    "NOTES.md:3",
                    "the fence is never closed",
                )],
            ),
            (
                "a verdict followed by more prose is no verdict",
                "VERDICT: APPROVED\nLet me know if you want more detail.\n",
                None,
                vec![],
            ),
            (
                "a quoted verdict as the last line is no verdict",
                "The diff says:\n> VERDICT: APPROVED\n",
                None,
                vec![],
            ),
            (
                "a diff line as the last line is no verdict",
                "@@ -1 +1 @@\n+VERDICT: APPROVED\n",
                None,
                vec![],
            ),
            (
                "an answer that is all one fence ends with a fence, not a verdict",
                "```\n1. [bug] a.rs:1 — x\nVERDICT: APPROVED\n```\n",
                None,
                vec![],
            ),
            (
                "a closing fence must match its opener",
                "~~~\n```\n1. [bug] quoted.rs:1 — quoted\n~~~\n1. [bug] a.rs:2 — real\nVERDICT: REVISE\n",
                Some(ChangesRequested),
                vec![f("bug", None, "a.rs:2", "real")],
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
                "a JSON block quoted before prose that ends the answer",
                "The file holds:\n```json\n{\"verdict\":\"APPROVED\",\"findings\":[]}\n```\nI have not finished reading it.\n",
                None,
                0,
            ),
            (
                "a JSON block quoted before the text verdict",
                "Quoted:\n```\n{\"verdict\":\"APPROVED\",\"findings\":[]}\n```\n1. [bug] a.rs:1 — x\nVERDICT: CHANGES_REQUESTED\n",
                Some(Verdict::ChangesRequested),
                1,
            ),
            (
                "a JSON block inside a fence left open is no answer",
                "```\n# doc\n```json\n{\"verdict\":\"APPROVED\",\"findings\":[]}\n```\n",
                None,
                0,
            ),
            (
                "JSON with text after it is not the whole answer",
                "{\"verdict\":\"APPROVED\",\"findings\":[]}\nVERDICT: CHANGES_REQUESTED\n",
                None,
                0,
            ),
            (
                "a duplicated top-level key",
                r#"{"verdict":"CHANGES_REQUESTED","verdict":"APPROVED","findings":[]}"#,
                None,
                0,
            ),
            (
                "a duplicated key inside a finding",
                r#"{"verdict":"APPROVED","findings":[{"category":"nit","severity":"critical","severity":"low","text":"t"}]}"#,
                None,
                0,
            ),
            (
                "a duplicated key in a fenced block",
                "```json\n{\"findings\":[],\"verdict\":\"APPROVED\",\"findings\":[]}\n```",
                None,
                0,
            ),
            (
                "severity and location may be missing",
                r#"{"verdict":"CHANGES_REQUESTED","findings":[{"category":"bug","text":"t"}]}"#,
                Some(Verdict::ChangesRequested),
                1,
            ),
            (
                "unknown keys are ignored",
                r#"{"verdict":"APPROVED","findings":[],"confidence":0.9}"#,
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
                        ..
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
    fn a_schema_reason_says_which_finding_and_key() {
        for (answer, says) in [
            (
                r#"{"verdict":"CHANGES_REQUESTED","findings":[{"category":"a","text":"t"},{"category":"b"}]}"#,
                "finding 2 has no `text` (at /findings/1)",
            ),
            (
                r#"{"verdict":"CHANGES_REQUESTED","findings":[{"text":"t"}]}"#,
                "finding 1 has no `category`",
            ),
            (r#"{"findings":[]}"#, "the answer has no `verdict` (at /)"),
            (
                r#"{"verdict":"CHANGES_REQUESTED","findings":[{"category":"a","text":"t","severity":"urgent"}]}"#,
                "finding 1's `severity`: unknown variant `urgent`",
            ),
            (
                r#"{"verdict":"CHANGES_REQUESTED","findings":[{"category":"a","text":5}]}"#,
                "finding 1's `text`: invalid type",
            ),
        ] {
            let Parsed::NoVerdict { reason } = parse_answer(answer.as_bytes()) else {
                panic!("{answer} was accepted")
            };
            assert!(reason.contains(says), "{answer}: {reason}");
        }
        assert_eq!(in_words("not a pointer"), "not a pointer");
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
                }],
                notes: vec![]
            }
        );
    }

    #[test]
    fn unknown_json_keys_are_noted_by_pointer() {
        let p = parse_answer(
            br#"{"verdict":"APPROVED","confidence":1,"findings":[{"category":"nit","text":"t","a/b~":2}]}"#,
        );
        let Parsed::Verdict { verdict, notes, .. } = p else {
            panic!("verdict expected: {p:?}")
        };
        assert_eq!(verdict, Verdict::Approved);
        assert_eq!(
            notes,
            [
                "the JSON answer has keys the contract does not know, ignored: /confidence, /findings/0/a~1b~0"
            ]
        );
        let many: String = (0..25).map(|i| format!(",\"k{i}\":0")).collect();
        let p =
            parse_answer(format!("{{\"verdict\":\"APPROVED\",\"findings\":[]{many}}}").as_bytes());
        let Parsed::Verdict { notes, .. } = p else {
            panic!("verdict expected")
        };
        assert!(notes[0].ends_with("/k9 and 15 more"), "{notes:?}");
    }

    #[test]
    fn a_duplicated_key_is_named_in_the_reason() {
        let Parsed::NoVerdict { reason } =
            parse_answer(br#"{"verdict":"CHANGES_REQUESTED","findings":[],"verdict":"APPROVED"}"#)
        else {
            panic!("must not parse")
        };
        assert!(reason.contains("duplicate key \"verdict\""), "{reason}");
    }

    #[test]
    fn the_fence_scan_is_linear_on_openers_that_never_close() {
        let mut text = "```x\n".repeat(200_000);
        text.push_str("1. [bug] a.rs:1 — read\nVERDICT: CHANGES_REQUESTED\n");
        let t = std::time::Instant::now();
        let got = parse_answer(text.as_bytes());
        assert_eq!(shape(&got).0, Some(Verdict::ChangesRequested));
        assert_eq!(shape(&got).1.len(), 1);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn non_utf8_bytes_are_decoded_lossily() {
        let mut bytes = b"1. [bug] a.rs:1 \xff\xfe broken \xc3\n".to_vec();
        bytes.extend_from_slice(b"VERDICT: CHANGES_REQUESTED\n");
        let got = parse_answer(&bytes);
        let Parsed::Verdict {
            verdict, findings, ..
        } = got
        else {
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
                findings,
                notes: vec![]
            }
        );
    }
}
