//! `git pair probe`: which reviewer realization binds here, to what, and why.

use super::{CommandError, Context, Report};
use crate::ops;

/// Show which reviewer would run and why, by probing what is installed.
///
/// For each reviewer a review would run now (the pair.reviewers panel, else the one reviewer
/// chosen as review chooses it: --reviewer-cmd, the active run's, pair.reviewer,
/// pair.reviewerCommand ("command"), then codex), lists every candidate probed: binary found or not, the capabilities its help output proves, and the
/// winner. A missing CLI falls back to the other vendor; nothing is decided by name or
/// version. The ACP agent of pair.acpCommand (reviewer acp) is started and asked
/// `initialize`: its name, version, protocol version and loadSession are shown.
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
    let report = Report::rendered(&probed, crate::render::probe::human);
    if !probed.all_bind() {
        let names: Vec<&str> = probed
            .reviewers
            .iter()
            .map(|r| r.configured.as_str())
            .collect();
        let mut err = CommandError::failed(format!(
            "no reviewer realization binds for {}",
            names.join(", ")
        ))
        .with_hint(
            "install codex or claude; or review offline with the built-in checks: git config pair.reviewer builtin; or set pair.reviewerCommand, or pair.acpCommand with pair.reviewer acp",
        )
        .with_partial("reviewers", report.json["reviewers"].clone())
        .with_partial("realizations", report.json["realizations"].clone());
        err.human = Some(report.human);
        return Err(err);
    }
    Ok(report)
}
