//! `git pair diff`: what changed between two reviewed snapshots of a run.

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::ops;

/// Show what changed between two reviewed snapshots — "what changed since my last review".
///
/// Compares round N's reviewed snapshot with round M's (--since-round; default N-1, or the
/// run's base for round 1). The output is `git diff` text.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id (see git pair list); `--run <id>` names it too.
    pub run_id: Option<String>,
    /// The reviewed round to show.
    #[arg(long, value_name = "n")]
    pub round: u32,
    /// Compare with this earlier reviewed round (default: the one before).
    #[arg(long, value_name = "m")]
    pub since_round: Option<u32>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let state = ops::show::run(ctx, args.run_id.as_deref())?;
    let (text, files) = ops::show::diff(ctx, &state, args.round, args.since_round)?;
    Ok(Report::new(
        json!({
            "run_id": state.run_id.as_str(),
            "round": args.round,
            "since_round": args.since_round.or(args.round.checked_sub(1).filter(|m| *m > 0)),
            "files": files,
            "diff": text,
        }),
        text,
    ))
}
