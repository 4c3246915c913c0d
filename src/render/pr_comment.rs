//! The PR comment of a run's final review (`review --pr N`): a hidden marker git pair finds
//! its own comment by, then the findings, rendered inert exactly as the PR body renders text
//! (no HTML, no mention, no image, no marker a finding could forge); only a short line when
//! there are none. Pure.

use std::fmt::Write as _;

use super::escape::{code_span, markdown};
use crate::model::Finding;

/// The first line of git pair's own final-review comment: how it is found again and updated
/// rather than added anew. Text from a reviewer can never produce it (`<` is escaped).
pub const MARKER: &str = "<!-- git-pair:pr-review -->";

/// The longest finding text kept in the comment (the whole one is in the run).
const FINDING_CHARS: usize = 2000;

/// At most this many findings are listed; the rest are counted.
const MAX_FINDINGS: usize = 50;

/// What the comment says about the review it reports.
pub struct Comment<'a> {
    pub run_id: &'a str,
    pub reviewers: &'a str,
    /// The PR head commit that was reviewed.
    pub head: &'a str,
    pub findings: &'a [Finding],
}

/// The comment's markdown.
pub fn render(c: &Comment<'_>) -> String {
    let head = code_span(&c.head.chars().take(12).collect::<String>());
    let mut out = format!("{MARKER}\n");
    if c.findings.is_empty() {
        let _ = writeln!(
            out,
            "git pair: no findings in the final review of this PR (head `{head}`)."
        );
        return out;
    }
    let _ = writeln!(
        out,
        "**git pair: final review of this PR** ({}, head `{head}`, run `{}`)\n",
        markdown(c.reviewers),
        code_span(c.run_id)
    );
    for f in c.findings.iter().take(MAX_FINDINGS) {
        let location = if f.location.is_empty() {
            String::new()
        } else {
            format!("`{}` ", code_span(&f.location))
        };
        let severity = f
            .severity
            .map(|s| format!(" [{}]", s.as_str()))
            .unwrap_or_default();
        let text: String = f.text.chars().take(FINDING_CHARS).collect();
        let _ = writeln!(
            out,
            "{}. \\[{}\\]{severity} {location}— {}",
            f.n,
            markdown(&super::handoff::one_line(&f.category)),
            markdown(&super::handoff::one_line(&text))
        );
    }
    if c.findings.len() > MAX_FINDINGS {
        let _ = writeln!(
            out,
            "\n… and {} more (`git pair show {}`).",
            c.findings.len() - MAX_FINDINGS,
            code_span(c.run_id)
        );
    }
    let _ = writeln!(
        out,
        "\nThe coder addresses these in one more round before the run is finished; a human merges."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Severity;

    fn finding(n: u32, location: &str, text: &str) -> Finding {
        Finding {
            n,
            category: "bug".into(),
            severity: Some(Severity::High),
            location: location.into(),
            text: text.into(),
        }
    }

    #[test]
    fn no_findings_is_one_short_line_after_the_marker() {
        let out = render(&Comment {
            run_id: "20261129-231500-a1b2c3",
            reviewers: "codex",
            head: &"a".repeat(40),
            findings: &[],
        });
        assert_eq!(out.lines().count(), 2, "{out}");
        assert!(out.starts_with(MARKER), "{out}");
        assert!(out.contains("no findings"), "{out}");
    }

    #[test]
    fn hostile_findings_are_inert_and_forge_no_marker() {
        let hostile = [
            finding(
                1,
                "a.rs:1",
                "<!-- git-pair:pr-review --> </details> <img src=x onerror=1>",
            ),
            finding(
                2,
                "`x` <!-- y -->",
                "@octocat ![p](http://e/p.gif) ```\nclose",
            ),
        ];
        let out = render(&Comment {
            run_id: "20261129-231500-a1b2c3",
            reviewers: "codex",
            head: &"a".repeat(40),
            findings: &hostile,
        });
        assert_eq!(out.matches("<!--").count(), 1, "only our marker: {out}");
        for bad in ["<img", "</details>", "@octocat", "![p]", "```"] {
            assert!(!out.contains(bad), "{bad}: {out}");
        }
        assert_eq!(
            out.lines().filter(|l| l.starts_with("2. ")).count(),
            1,
            "{out}"
        );
    }
}
