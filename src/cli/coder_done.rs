//! `git pair coder-done`: record the coder's round.

use super::{CommandError, Context, Report};
use crate::ops;

/// Record that the coder finished a round.
///
/// Before the round is reviewed, a second coder-done adds to the same round (summaries are
/// kept in order); after a review it opens the next round. Past the round cap it needs
/// --extra-round (the human chose to go on).
///
/// Next: `git pair review`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the coder did this round (the reviewer and the transcript read it).
    #[arg(long, value_name = "text")]
    pub summary: String,
    /// How many of the previous review's findings this round addresses.
    #[arg(long, value_name = "n")]
    pub findings_addressed: Option<u32>,
    /// The coder's agent session id (for cost), e.g. a Claude Code session UUID.
    #[arg(long, value_name = "id")]
    pub session: Option<String>,
    /// JSON file with responses to open findings:
    /// [{"finding": 1, "status": "addressed|deferred|disputed", "reason": "…"}].
    #[arg(long, value_name = "file")]
    pub responses: Option<std::path::PathBuf>,
    /// Go past the round cap (a human decided to continue).
    #[arg(long)]
    pub extra_round: bool,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let responses = match &args.responses {
        Some(path) => ops::coder_done::read_responses(path)?,
        None => Vec::new(),
    };
    let done = ops::coder_done::coder_done(
        ctx,
        &ops::coder_done::Request {
            summary: args.summary.clone(),
            findings_addressed: args.findings_addressed,
            session: args.session.clone(),
            responses,
            extra_round: args.extra_round,
        },
    )?;
    let mut report = Report::rendered(&done, crate::render::coder_done::human);
    report.notes = done.warnings;
    Ok(report)
}
