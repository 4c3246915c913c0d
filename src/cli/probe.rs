//! `git pair probe`: which reviewer realization binds here, to what, and why.

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::ops;

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
    let command = args
        .reviewer_cmd
        .as_deref()
        .map(crate::review::probe::parse_reviewer_command)
        .transpose()?;
    let probed = ops::probe::probe(ctx, command)?;
    let reports = &probed.reviewers;
    let names: Vec<String> = reports.iter().map(|r| r.configured.clone()).collect();
    let mut human = String::from("realizations here:\n");
    for c in &probed.realizations {
        human.push_str(&format!(
            "  {:<8} {}  {}\n",
            c.name,
            if c.binds { "ok    " } else { "no    " },
            c.reason
        ));
    }
    let mut all_bind = true;
    for report in reports {
        let name = &report.configured;
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
    }
    let json = json!({
        "realizations": probed.realizations.iter().map(|c| json!({
            "name": c.name,
            "binds": c.binds,
            "reason": c.reason,
            "path": c.path,
        })).collect::<Vec<_>>(),
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
        err = err
            .with_partial("reviewers", json["reviewers"].clone())
            .with_partial("realizations", json["realizations"].clone());
        err.human = Some(human);
        return Err(err);
    }
    Ok(Report::new(json, human))
}
