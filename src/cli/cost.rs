//! `git pair cost`: spend per run and per round, or one agent session priced whole.

use super::{CommandError, Context, Report};

/// Show what runs cost, per round and per session, from the agents' own logs.
///
/// Without --session: every run in this repository with its total, and the selected run
/// (--run, or the active one) round by round and session by session, tokens by kind.
/// With --session ID: one Claude Code or Codex session priced whole.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Price one Claude Code session id or Codex thread id whole.
    #[arg(long, value_name = "id")]
    pub session: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let Some(id) = &args.session else {
        let costs = crate::ops::cost::runs(ctx)?;
        return Ok(Report::rendered(&costs, crate::render::cost::human));
    };
    let priced = crate::ops::cost::session(ctx, id)?;
    let mut report = Report::rendered(&priced, crate::render::cost::session);
    if !priced.unknown_models.is_empty() {
        report = report.note(format!(
            "warning: no price for model(s) {}: their tokens are not in the total",
            priced.unknown_models.join(", ")
        ));
    }
    if priced.skipped_lines > 0 {
        report = report.note(format!(
            "note: {} unreadable log line(s) skipped",
            priced.skipped_lines
        ));
    }
    Ok(report)
}
