//! `git pair probe`: which reviewer realization binds here, to what, and why.

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::review::{ProbeRequest, Surfaces};

/// Show which reviewer would run and why, by probing what is installed.
///
/// For each configured reviewer (the active run's, pair.reviewer, or the pair.reviewers
/// panel; "command" when pair.reviewerCommand or --reviewer-cmd is set), lists every
/// candidate probed: binary found or not, the capabilities its help output proves, and the
/// winner. A missing CLI falls back to the other vendor; nothing is decided by name or
/// version.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Probe this reviewer command (JSON array) instead of the configured reviewer.
    #[arg(long, value_name = "json-array")]
    pub reviewer_cmd: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let o = &ctx.options;
    let surfaces = Surfaces::load(o.surface_file.as_deref())
        .map_err(|e| CommandError::failed(super::error::single_line(&e.to_string())))?;
    let command = match &args.reviewer_cmd {
        Some(text) => Some(text.clone()),
        None => o
            .reviewer_command
            .as_ref()
            .map(|argv| serde_json::to_string(argv).expect("argv serializes")),
    };
    let names: Vec<String> = if command.is_some() {
        vec!["command".to_owned()]
    } else if !o.reviewers.is_empty() {
        o.reviewers.clone()
    } else {
        let from_run = ctx
            .run_id(None)
            .ok()
            .and_then(|id| ctx.load(&id).ok())
            .map(|s| s.manifest.reviewer);
        vec![from_run.unwrap_or_else(|| o.reviewer.clone())]
    };
    let mut reports = Vec::new();
    let mut human = String::new();
    let mut all_bind = true;
    for name in &names {
        let report = crate::review::probe(
            &surfaces,
            &ProbeRequest {
                configured: name,
                reviewer_command: command.as_deref(),
                path_env: None,
            },
        )
        .map_err(|e| CommandError::failed(super::error::single_line(&e.to_string())))?;
        human.push_str(&format!("reviewer {name}:\n"));
        for c in &report.probed {
            human.push_str(&format!(
                "  {:<8} {}  {}\n",
                c.name,
                if c.binds { "binds " } else { "no    " },
                c.reason
            ));
        }
        match &report.winner {
            Some(w) if report.fallback_used => {
                human.push_str(&format!("  → {w} (fallback: {name} is not available)\n"))
            }
            Some(w) => human.push_str(&format!("  → {w}\n")),
            None => {
                all_bind = false;
                human.push_str("  → nothing binds\n");
            }
        }
        reports.push(report);
    }
    let json = json!({
        "reviewers": reports.iter().map(|r| json!({
            "configured": r.configured,
            "winner": r.winner,
            "fallback_used": r.fallback_used,
            "probed": r.probed,
        })).collect::<Vec<_>>(),
    });
    if !all_bind {
        let mut err = CommandError::failed(format!(
            "no reviewer realization binds for {}",
            names.join(", ")
        ))
        .with_hint(
            "install codex or claude, set pair.reviewer=builtin, or set pair.reviewerCommand",
        );
        err = err.with_partial("reviewers", json["reviewers"].clone());
        return Err(err);
    }
    Ok(Report::new(json, human))
}
