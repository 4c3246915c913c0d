//! Human views of `review`: the verdict and findings of a recorded round, the prompt of a dry
//! run, and the notes both leave on stderr.

use std::io::Write;

use crate::model::SecretAt;
use crate::model::report::review::{DryRun, Round};

/// The note when `pair.review.redactSecrets=false` is set: redaction cannot be turned off
/// (SPEC §6.2), so the key is read, and said to do nothing.
pub const REDACTION_ALWAYS_ON: &str = "note: pair.review.redactSecrets=false has no effect: secrets are always redacted from what a reviewer sees";

/// A recorded round's text: the verdict, one line per finding, partial coverage, next step.
pub fn round(report: &Round, out: &mut dyn Write) -> std::io::Result<()> {
    let verdict = report.verdict.map(|v| v.as_str()).unwrap_or_default();
    writeln!(out, "Round {} review: {verdict}", report.round)?;
    for f in &report.findings {
        let location = if f.location.is_empty() {
            String::new()
        } else {
            format!("{} — ", f.location)
        };
        let severity = f
            .severity
            .map(|s| format!(" [severity: {}]", s.as_str()))
            .unwrap_or_default();
        writeln!(
            out,
            "{}. [{}]{severity} {location}{}",
            f.n, f.category, f.text
        )?;
    }
    if report.coverage.passes > 1 {
        writeln!(
            out,
            "reviewed in {} passes (the change is larger than one packet)",
            report.coverage.passes
        )?;
    }
    if let Some(summary) = &report.partial_coverage {
        writeln!(out, "coverage: {summary}")?;
        if !report.coverage.unreviewed.is_empty() {
            writeln!(out, "unreviewed: {}", report.coverage.unreviewed.join(", "))?;
        }
        if report.verdict == Some(crate::model::Verdict::Approved) {
            writeln!(
                out,
                "this approval is partial: it opens no commit gate and passes no verify; finish it only with git pair finish --accept-partial"
            )?;
        }
    }
    if report.outcome == "failed-validation" {
        writeln!(
            out,
            "the reviewer's answer could not be read (a [process] finding, not a problem in the code)"
        )?;
        writeln!(
            out,
            "next: review — git pair review (again; if it keeps failing, fix the reviewer: git pair probe)"
        )
    } else {
        writeln!(out, "next: {}", super::common::next_step(report.next))
    }
}

/// Why a round has no verdict, for its `error:` line.
pub fn no_verdict(report: &Round) -> String {
    let why = report
        .error
        .clone()
        .unwrap_or_else(|| format!("the review ended {} without a verdict", report.outcome));
    format!("no verdict for round {}: {why}", report.round)
}

/// A recorded round's stderr notes: fallbacks used, secrets redacted.
pub fn round_notes(report: &Round) -> Vec<String> {
    let mut notes: Vec<String> = report
        .fallbacks
        .iter()
        .map(|f| {
            format!(
                "note: {} is not available here; using {} instead (fallback, recorded)",
                f.configured, f.bound
            )
        })
        .collect();
    notes.extend(secrets_note(&report.secrets));
    notes
}

/// A dry run's text: the prompt the first attempt would send.
pub fn dry_run(report: &DryRun, out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(report.prompt.as_bytes())
}

/// A dry run's stderr notes: secrets redacted, who would review, who cannot.
pub fn dry_run_notes(report: &DryRun) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(note) = secrets_note(&report.secrets) {
        notes.push(format!(
            "dry run: {note}; a review would get a blocking [secret] finding for each"
        ));
    }
    if !report.members.is_empty() {
        notes.push(format!(
            "dry run: round {} would go to {}; nothing stored, nothing spawned",
            report.round,
            report.members.join(", ")
        ));
    }
    // The command line each bound reviewer would run (the prompt goes to it as the
    // realization says; stdout above is that prompt).
    for r in &report.reviewers {
        let line = if r.reviewer == "builtin" {
            "in-process (git pair's built-in checks; no program is started)".to_owned()
        } else {
            super::escape::line(&command_line(&r.argv)).into_owned()
        };
        notes.push(format!("dry run: {} would run: {line}", r.reviewer));
    }
    for r in &report.unbound {
        notes.push(format!(
            "dry run: no reviewer realization binds for {} here (probed: {}); a real review would fail — see git pair probe",
            r.configured,
            r.probed
                .iter()
                .map(|c| format!("{}: {}", c.name, c.reason))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    notes
}

/// `argv` as a POSIX shell reads it back.
fn command_line(argv: &[String]) -> String {
    argv.iter()
        .map(|word| super::common::shell_word(word))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What was redacted from the packet: kinds and places, never a secret.
fn secrets_note(secrets: &[SecretAt]) -> Option<String> {
    if secrets.is_empty() {
        return None;
    }
    let places: Vec<String> = secrets
        .iter()
        .map(|s| format!("{} in {}:{}", s.kind, s.path, s.line))
        .collect();
    Some(format!(
        "{} secret{} redacted from the packet: {}",
        secrets.len(),
        if secrets.len() == 1 { "" } else { "s" },
        places.join(", ")
    ))
}

/// `review --pr N`: the PR's final review, what was done on the PR, and the next step.
pub fn pr_round(
    report: &crate::model::report::review::PrRound,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "PR #{} final review: {} ({} finding{}; comment {} on the PR)",
        report.pr,
        report.verdict.as_str(),
        report.findings.len(),
        if report.findings.len() == 1 { "" } else { "s" },
        report.comment
    )?;
    writeln!(
        out,
        "reviewed {}..{} as the remote has it",
        report.merge_base.get(..12).unwrap_or_default(),
        report.head.get(..12).unwrap_or_default()
    )?;
    for f in &report.findings {
        let location = if f.location.is_empty() {
            String::new()
        } else {
            format!("{} — ", f.location)
        };
        writeln!(out, "{}. [{}] {location}{}", f.n, f.category, f.text)?;
    }
    writeln!(out, "next: {}", super::common::next_step(report.next))
}

/// `review --plan FILE` with no run: the verdict and findings, and that nothing was stored.
pub fn plan_review(
    report: &crate::model::report::review::PlanReview,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "Plan review ({}): {}",
        report.reviewers.join(", "),
        report.verdict.map_or("no verdict", |v| v.as_str())
    )?;
    for f in &report.findings {
        let location = if f.location.is_empty() {
            String::new()
        } else {
            format!("{} — ", f.location)
        };
        writeln!(out, "{}. [{}] {location}{}", f.n, f.category, f.text)?;
    }
    writeln!(
        out,
        "not stored: there is no run here (git pair start --task \"…\" makes one, and review --plan then reviews into it)"
    )
}
