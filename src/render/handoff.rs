//! The `HANDOFF.md` transcript (SPEC §4): a header, then one section per record that a reader
//! needs, in record order.
//!
//! The transcript is the concatenation of [`header`] and one [`section`] per record, where a
//! section depends only on its record and the projection right after it. That makes an
//! append-only re-render exact: the text for N+1 records is the text for N plus one section.

use std::fmt::Write as _;

use crate::model::{
    Abandon, AllowSecret, Body, CheckpointVerified, Coder, Finding, Finish, Manifest, Record,
    Review, SetSetting,
};
use crate::util::time;

/// The title and the one-line summary of the run: always exactly two lines.
pub fn header(manifest: &Manifest) -> String {
    format!(
        "# Pair-Loop Handoff — {}\nTask: {} · Branch: {} · Coder: {} · Reviewer: {}\n",
        one_line(&manifest.run_id),
        one_line(&manifest.task),
        one_line(&manifest.branch),
        one_line(&manifest.coder),
        one_line(&manifest.reviewer)
    )
}

/// `transcript` (a [`render`]ed one) with `sections` appended and its header rendered again
/// from `manifest`, the projection after the last of them: the header names the run's
/// reviewer and coder as of now, which a later record can change.
pub fn with_header(manifest: &Manifest, transcript: &str, sections: &str) -> String {
    let old_sections = transcript.splitn(3, '\n').nth(2).unwrap_or_default();
    let mut out = header(manifest);
    out.push_str(old_sections);
    out.push_str(sections);
    out
}

/// The transcript section for `record`, given the projection after it; empty for records
/// that are bookkeeping (dispatches, costs).
pub fn section(record: &Record, after: &Manifest) -> String {
    let when = time::parse_rfc3339_secs(&record.at)
        .map(time::human)
        .unwrap_or_else(|| record.at.clone());
    let mut out = String::new();
    match &record.body {
        Body::Coder(coder) => {
            let round = after.current_coder_round().unwrap_or(1);
            coder_section(&mut out, coder, round, &when);
        }
        Body::Review(review) => review_section(&mut out, review, &when),
        Body::Finish(finish) => finish_section(&mut out, finish, after, &when),
        Body::Set(set) => set_line(&mut out, set, &when),
        Body::Abandon(abandon) => abandon_section(&mut out, abandon, &when),
        Body::Pr {
            number,
            final_round,
        } => {
            let _ = writeln!(out, "\nPR: #{number} · {when}");
            if *final_round {
                let _ = writeln!(
                    out,
                    "Its final review comes next: git pair review --pr {number}"
                );
            }
        }
        Body::PrReview(review) => pr_review_section(&mut out, review, &when),
        Body::PrReviewFailed(failed) => {
            let _ = writeln!(
                out,
                "\nPR #{} final review by {} got no review onto the PR ({}); nothing was posted · {when}",
                failed.number,
                one_line(&failed.tool),
                one_line(&failed.outcome)
            );
        }
        Body::Checkpoint(checkpoint) => {
            let _ = writeln!(
                out,
                "\n## Checkpoint {} · {when}\nAssessment: {} · Next: {}",
                checkpoint.checkpoint,
                checkpoint.assessment.as_str(),
                one_line(&checkpoint.next)
            );
        }
        Body::CheckpointVerified(verified) => verified_section(&mut out, verified, &when),
        Body::CheckpointArchived(archived) => {
            let _ = writeln!(
                out,
                "\nCheckpoint {}: SOURCE_ARCHIVED_CONFIRMED · {when}",
                archived.checkpoint
            );
        }
        Body::Compaction(_) => {
            let _ = writeln!(
                out,
                "\nContext compaction observed ({} in this context) · {when}",
                after.compactions
            );
        }
        Body::AllowSecret(allow) => allow_secret_line(&mut out, allow, &when),
        Body::Start(_)
        | Body::ReviewDispatch(_)
        | Body::PrDispatch(_)
        | Body::ReviewMember(_)
        | Body::Cost(_)
        | Body::Unknown { .. } => {}
    }
    out
}

/// A coder round: the summary, how many findings it addressed, and each response.
fn coder_section(out: &mut String, coder: &Coder, round: u32, when: &str) {
    let _ = writeln!(out, "\n## Round {round} — CODER ({}) · {when}", coder.tool);
    out.push_str(coder.summary.trim_end());
    out.push('\n');
    if let Some(n) = coder.findings_addressed {
        let _ = writeln!(out, "Findings addressed: {n}");
    }
    for response in &coder.responses {
        let status = serde_json::to_value(response.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = match &response.reason {
            Some(reason) => writeln!(
                out,
                "- finding {}: {status} — {}",
                response.finding,
                one_line(reason)
            ),
            None => writeln!(out, "- finding {}: {status}", response.finding),
        };
    }
}

/// The PR's final review: what was reviewed (the PR as the remote had it), the findings
/// posted on the PR and its verdict.
fn pr_review_section(out: &mut String, review: &crate::model::PrReview, when: &str) {
    let _ = writeln!(
        out,
        "\n## PR #{} final review — REVIEWER ({}) · {when}",
        review.number, review.tool
    );
    let _ = writeln!(
        out,
        "Reviewed {}..{} ({} → {}, as the remote has it); findings {} on the PR.",
        review.merge_base.to_string().get(..12).unwrap_or_default(),
        review.head.to_string().get(..12).unwrap_or_default(),
        one_line(&review.base_ref),
        one_line(&review.head_ref),
        review.comment
    );
    if !review.findings.is_empty() {
        out.push_str("### Findings\n");
        for f in &review.findings {
            finding_line(out, f);
        }
    }
    let _ = writeln!(out, "VERDICT: {}", review.verdict.as_str());
}

/// `Reviewer model: gpt-5.2 · effort: high` when the review asked for either.
pub fn choices_line(review: &Review) -> Option<String> {
    let parts: Vec<String> = [("model", &review.model), ("effort", &review.effort)]
        .into_iter()
        .filter_map(|(what, value)| Some(format!("{what}: {}", one_line(value.as_deref()?))))
        .collect();
    (!parts.is_empty()).then(|| format!("Reviewer {}", parts.join(" · ")))
}

/// A review round: its findings, coverage warning and verdict, or why it has no verdict.
fn review_section(out: &mut String, review: &Review, when: &str) {
    let _ = writeln!(
        out,
        "\n## Round {} — REVIEWER ({}) · {when}",
        review.round, review.tool
    );
    if let Some(line) = choices_line(review) {
        let _ = writeln!(out, "{line}");
    }
    let Some(verdict) = review.verdict else {
        let _ = writeln!(
            out,
            "Review failed ({}): no verdict recorded, no round used.",
            review.outcome
        );
        if let Some(error) = &review.error {
            let _ = writeln!(out, "{}", one_line(error));
        }
        return;
    };
    if !review.findings.is_empty() {
        out.push_str("### Findings\n");
        for f in &review.findings {
            finding_line(out, f);
        }
    }
    if let Some(warning) = &review.coverage_warning {
        let _ = writeln!(out, "Coverage: {warning}");
    }
    let _ = writeln!(out, "VERDICT: {}", verdict.as_str());
}

/// `N. [category] [severity: s] location — text`, without the parts a finding lacks.
fn finding_line(out: &mut String, f: &Finding) {
    let severity = f
        .severity
        .map(|s| format!(" [severity: {s}]"))
        .unwrap_or_default();
    if f.location.is_empty() {
        let _ = writeln!(
            out,
            "{}. [{}]{severity} {}",
            f.n,
            f.category,
            one_line(&f.text)
        );
    } else {
        let _ = writeln!(
            out,
            "{}. [{}]{severity} {} — {}",
            f.n,
            f.category,
            f.location,
            one_line(&f.text)
        );
    }
}

/// The run's end: its outcome (and whether it was forced) and its PR.
fn finish_section(out: &mut String, finish: &Finish, after: &Manifest, when: &str) {
    let _ = writeln!(out, "\n## Finished · {when}");
    let _ = writeln!(
        out,
        "Outcome: {}{}",
        finish.verdict.as_str(),
        if finish.override_ {
            " (override: finished with --force)"
        } else {
            ""
        }
    );
    if let Some(pr) = finish.pr.or(after.pr) {
        let _ = writeln!(out, "PR: #{pr}");
    }
}

/// A checkpoint's verification: the result and each mismatch found.
fn verified_section(out: &mut String, verified: &CheckpointVerified, when: &str) {
    let _ = writeln!(
        out,
        "\nCheckpoint {}: {} · {when}",
        verified.checkpoint,
        verified.result.as_str()
    );
    for m in &verified.mismatches {
        let _ = writeln!(
            out,
            "- {}: expected {}, found {}",
            m.field,
            one_line(&m.expected),
            one_line(&m.found)
        );
    }
}

/// A run setting set (the run's own value) or cleared (git config again).
fn set_line(out: &mut String, set: &SetSetting, when: &str) {
    let _ = match &set.value {
        Some(value) => writeln!(out, "\nSetting: {} = {value} (run's own) · {when}", set.key),
        None => writeln!(
            out,
            "\nSetting: {} follows git config again · {when}",
            set.key
        ),
    };
}

/// The run abandoned, with the reason given.
fn abandon_section(out: &mut String, abandon: &Abandon, when: &str) {
    let _ = writeln!(out, "\n## Abandoned · {when}");
    if let Some(reason) = &abandon.reason {
        let _ = writeln!(out, "Reason: {}", one_line(reason));
    }
}

/// Secrets allowed for push as known false positives.
fn allow_secret_line(out: &mut String, allow: &AllowSecret, when: &str) {
    let allowed: Vec<String> = allow.allowed.iter().map(ToString::to_string).collect();
    let _ = writeln!(
        out,
        "\nSecret allowed for push (known false positive): {} · {when}",
        one_line(&allowed.join(", "))
    );
}

/// The whole transcript of `records` (in stored order).
pub fn render(records: &[Record]) -> String {
    let mut manifest = Manifest::empty();
    let mut sections = String::new();
    for record in records {
        manifest.apply(record);
        sections.push_str(&section(record, &manifest));
    }
    let mut out = header(&manifest);
    out.push_str(&sections);
    out
}

pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Start, Verdict};

    fn rec(seq: u64, at: &str, body: Body) -> Record {
        Record::new(seq, at.into(), body)
    }

    fn records() -> Vec<Record> {
        vec![
            rec(
                1,
                "2026-11-29T23:15:00Z",
                Body::Start(Start {
                    run_id: "20261129-231500-a1b2c3".into(),
                    task: "Add retries".into(),
                    cwd: "/w".into(),
                    branch: "feature".into(),
                    base: None,
                    coder: "claude".into(),
                    reviewer: "codex".into(),
                    max_rounds: 5,
                    budget_usd: None,
                    config: Default::default(),
                    flags: None,
                    claimed: false,
                    carrier: false,
                    base_tree: None,
                }),
            ),
            rec(
                2,
                "2026-11-29T23:20:00Z",
                Body::Coder(Coder {
                    summary: "Added retry loop".into(),
                    tool: "claude".into(),
                    findings_addressed: None,
                    session_id: None,
                    responses: vec![],
                    extra_round: false,
                    round: None,
                }),
            ),
            rec(
                3,
                "2026-11-29T23:25:00Z",
                Body::Review(Review {
                    model: None,
                    effort: None,
                    dispatch: "d".into(),
                    round: 1,
                    verdict: Some(Verdict::ChangesRequested),
                    outcome: "completed".into(),
                    tool: "codex".into(),
                    findings: vec![
                        Finding {
                            n: 1,
                            category: "bug".into(),
                            severity: None,
                            location: "src/lib.rs:10".into(),
                            text: "retries forever".into(),
                        },
                        Finding {
                            n: 2,
                            category: "test".into(),
                            severity: None,
                            location: String::new(),
                            text: "no test".into(),
                        },
                    ],
                    reviewers: vec![],
                    fallback_used: false,
                    snapshot: None,
                    coverage_warning: None,
                    error: None,
                }),
            ),
        ]
    }

    #[test]
    fn renders_the_documented_format() {
        let text = render(&records());
        assert_eq!(
            text,
            "# Pair-Loop Handoff — 20261129-231500-a1b2c3\n\
             Task: Add retries · Branch: feature · Coder: claude · Reviewer: codex\n\
             \n## Round 1 — CODER (claude) · 2026-11-29 23:20 UTC\n\
             Added retry loop\n\
             \n## Round 1 — REVIEWER (codex) · 2026-11-29 23:25 UTC\n\
             ### Findings\n\
             1. [bug] src/lib.rs:10 — retries forever\n\
             2. [test] no test\n\
             VERDICT: CHANGES_REQUESTED\n"
        );
    }

    #[test]
    fn appending_a_record_appends_its_section() {
        let all = records();
        let prefix = render(&all[..2]);
        let full = render(&all);
        let after = Manifest::project(&all);
        assert_eq!(full, format!("{prefix}{}", section(&all[2], &after)));
    }

    #[test]
    fn a_new_header_replaces_the_old_and_keeps_every_section() {
        let records = records();
        let mut m = Manifest::empty();
        for r in &records {
            m.apply(r);
        }
        let old = render(&records);
        let mut changed = m.clone();
        changed.reviewer = "command:approve.sh".into();
        let text = with_header(&changed, &old, "\nmore\n");
        assert!(text.starts_with(&header(&changed)), "{text}");
        assert_eq!(
            text.strip_prefix(&header(&changed)),
            Some(format!("{}\nmore\n", old.strip_prefix(&header(&m)).expect("header")).as_str())
        );
        // Stored text with line breaks cannot add a line to the header.
        changed.coder = "a\nb".into();
        assert_eq!(header(&changed).lines().count(), 2);
    }
}
