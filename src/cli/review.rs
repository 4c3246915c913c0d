//! `git pair review`: the reviewer round — packet, write-ahead dispatch, reviewers, outcome.

use serde_json::json;

use super::{CommandError, Context, Report, Ui};
use crate::ops;

/// Have the reviewer read the change (base → work tree) and give a verdict.
///
/// Snapshots the work tree, builds a bounded review packet (over pair.diffBudgetBytes it
/// degrades and says "reviewed X of Y files"), records the dispatch BEFORE spawning anything,
/// runs the reviewer (or the pair.reviewers panel) with a timeout, retries a failed reviewer
/// once, re-asks once when no verdict can be read, and records everything. Nothing that
/// cannot be read is ever taken as approval.
///
/// Exit 0 for APPROVED and CHANGES_REQUESTED alike (the verdict is data); exit 1 when no
/// verdict could be obtained (no round is used; `git pair review` again retries).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run this command as the reviewer: a JSON array, e.g. '["my-reviewer", "--strict"]'
    /// (prompt on stdin, review on stdout). Overrides pair.reviewerCommand.
    #[arg(long, value_name = "json-array")]
    pub reviewer_cmd: Option<String>,
    /// Seconds to wait for each reviewer attempt (default: pair.reviewTimeout, else 600).
    #[arg(long, value_name = "seconds")]
    pub timeout: Option<u64>,
    /// Review a plan (no code changes yet) or the change against this plan.
    #[arg(long, value_name = "file")]
    pub plan: Option<std::path::PathBuf>,
    /// Build and print the packet and the reviewer command lines; store and spawn nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Review again although this coder round was already reviewed.
    #[arg(long)]
    pub again: bool,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let request = request(args)?;
    let report = ops::review::review(ctx, &request, &|message| ui.progress(message))?;
    // Redaction cannot be turned off (SPEC §6.2): the key is read, and said to do nothing.
    let ignored_key = (!ctx.options.redact_secrets).then(|| {
        "note: pair.review.redactSecrets=false has no effect: secrets are always redacted from what a reviewer sees".to_owned()
    });
    let (outcome, plan, next) = match report {
        ops::review::Report::DryRun(plan, argv) => {
            let mut report = dry_run(&plan, &argv);
            report.notes.extend(ignored_key);
            return Ok(report);
        }
        ops::review::Report::Recorded(outcome, plan, next) => (outcome, plan, next),
    };
    let coverage = coverage_json(&plan.coverage);
    let outcomes: Vec<_> = outcome
        .members
        .iter()
        .map(|m| {
            json!({
                "reviewer": m.name,
                "outcome": m.outcome.as_str(),
                "attempts": m.attempts.len(),
                "session_id": m.session_id,
            })
        })
        .collect();
    let json = json!({
        "run_id": plan.run_id.as_str(),
        "round": outcome.round,
        "verdict": outcome.verdict,
        "findings": outcome.findings,
        "outcome": outcome.outcome,
        "outcomes": outcomes,
        "fallback_used": outcome.fallback_used,
        "coverage": coverage,
        "next_action": next.as_str(),
    });
    let Some(verdict) = outcome.verdict else {
        let message = outcome
            .error
            .clone()
            .unwrap_or_else(|| format!("the review ended {} without a verdict", outcome.outcome));
        let mut err = CommandError::failed(format!(
            "no verdict for round {}: {message}",
            outcome.round
        ))
        .with_hint(
            "no round was used; run git pair review again (see git pair probe, or --timeout)",
        );
        if let serde_json::Value::Object(map) = json {
            for (k, v) in map {
                err = err.with_partial(&k, v);
            }
        }
        return Err(err);
    };
    let mut human = format!("Round {} review: {}\n", outcome.round, verdict.as_str());
    for f in &outcome.findings {
        let location = if f.location.is_empty() {
            String::new()
        } else {
            format!("{} — ", f.location)
        };
        human.push_str(&format!("{}. [{}] {location}{}\n", f.n, f.category, f.text));
    }
    if let Some(summary) = outcome
        .coverage
        .summary
        .as_ref()
        .filter(|_| outcome.coverage.is_partial())
    {
        human.push_str(&format!("coverage: {summary}\n"));
    }
    if outcome.outcome == "failed-validation" {
        human.push_str(
            "the reviewer's answer could not be read (a [process] finding, not a problem in the code)\n",
        );
        human.push_str(
            "next: review — git pair review (again; if it keeps failing, fix the reviewer: git pair probe)\n",
        );
    } else {
        human.push_str(&format!("next: {}\n", super::render::next_step(next)));
    }
    let mut report = Report::new(json, human);
    report.notes = plan
        .members
        .iter()
        .filter(|m| m.bound.fallback_used)
        .map(|m| {
            format!(
                "note: {} is not available here; using {} instead (fallback, recorded)",
                m.report.configured, m.bound.name
            )
        })
        .collect();
    report.notes.extend(secrets_note(&plan.secrets));
    report.notes.extend(ignored_key);
    Ok(report)
}

fn dry_run(plan: &ops::review::Plan, argv: &[(String, Vec<String>)]) -> Report {
    let reviewers: Vec<_> = argv
        .iter()
        .map(|(name, argv)| json!({ "reviewer": name, "argv": argv }))
        .collect();
    let prompt = plan.prompt(plan.attempt_base + 1);
    let unbound: Vec<_> = plan
        .unbound
        .iter()
        .map(|r| {
            json!({
                "configured": r.configured,
                "probed": r.probed.iter().map(|c| json!({"name": c.name, "reason": c.reason})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut report = Report::new(
        json!({
            "dry_run": true,
            "run_id": plan.run_id.as_str(),
            "round": plan.round,
            "mode": plan.mode.as_str(),
            "reviewers": reviewers,
            "unbound": unbound,
            "coverage": coverage_json(&plan.coverage),
            "secrets": plan.secrets,
            "prompt": prompt,
        }),
        prompt,
    );
    if let Some(note) = secrets_note(&plan.secrets) {
        report = report.note(format!(
            "dry run: {note}; a review would get a blocking [secret] finding for each"
        ));
    }
    if !plan.members.is_empty() {
        report = report.note(format!(
            "dry run: round {} would go to {}; nothing stored, nothing spawned",
            plan.round,
            plan.members
                .iter()
                .map(|m| m.bound.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for r in &plan.unbound {
        report = report.note(format!(
            "dry run: no reviewer realization binds for {} here (probed: {}); a real review would fail — see git pair probe",
            r.configured,
            r.probed
                .iter()
                .map(|c| format!("{}: {}", c.name, c.reason))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    report
}

/// What was redacted from the packet, for stderr: kinds and places, never a secret.
fn secrets_note(secrets: &[crate::model::SecretAt]) -> Option<String> {
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

/// The round's request from the flags.
fn request(args: &Args) -> Result<ops::review::Request, CommandError> {
    let reviewer_command = args
        .reviewer_cmd
        .as_deref()
        .map(crate::review::probe::parse_reviewer_command)
        .transpose()?;
    if args.timeout == Some(0) {
        return Err(CommandError::usage("--timeout must be at least 1 second"));
    }
    let plan = match &args.plan {
        Some(path) => {
            Some(
                std::fs::read_to_string(path).map_err(|source| ops::Error::ReadFile {
                    what: "--plan file",
                    path: path.display().to_string(),
                    source,
                })?,
            )
        }
        None => None,
    };
    Ok(ops::review::Request {
        reviewer_command,
        timeout_secs: args.timeout,
        plan,
        again: args.again,
        dry_run: args.dry_run,
    })
}

/// The compact coverage summary `review --json` prints (the full manifest is stored).
pub fn coverage_json(c: &crate::packet::Coverage) -> serde_json::Value {
    json!({
        "files_total": c.files_total,
        "full": c.full.count,
        "clipped": c.clipped.count,
        "names_only": c.names_only.count,
        "not_included": c.not_included.count,
        "bytes_included": c.bytes_included,
        "summary": c.summary,
    })
}
