//! `git pair diff`: what changed between two reviewed snapshots of a run.

use serde_json::json;

use super::{CommandError, Context, Report};

/// Show what changed between two reviewed snapshots — "what changed since my last review".
///
/// Compares round N's reviewed snapshot with round M's (--since-round; default N-1, or the
/// run's base for round 1). The output is `git diff` text.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id (see git pair list).
    pub run_id: String,
    /// The reviewed round to show.
    #[arg(long, value_name = "n")]
    pub round: u32,
    /// Compare with this earlier reviewed round (default: the one before).
    #[arg(long, value_name = "m")]
    pub since_round: Option<u32>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let run_id = ctx.run_id(Some(&args.run_id))?;
    let state = ctx.load(&run_id)?;
    let snapshot_of = |round: u32| -> Result<gix::ObjectId, CommandError> {
        ctx.repo
            .run_subtree(&state, &format!("reviews/{round}/snapshot"))?
            .ok_or_else(|| {
                CommandError::failed(format!(
                    "round {round} of run {run_id} has no reviewed snapshot"
                ))
                .with_hint(format!(
                    "see the reviewed rounds with: git pair show {run_id}"
                ))
            })
    };
    let new = snapshot_of(args.round)?;
    let old = match args.since_round {
        Some(m) if m >= args.round => {
            return Err(CommandError::usage(
                "--since-round must name an earlier round than --round",
            ));
        }
        Some(m) => Some(snapshot_of(m)?),
        None if args.round > 1 => Some(snapshot_of(args.round - 1)?),
        None => match &state.manifest.base {
            Some(base) => {
                let commit = gix::ObjectId::from_hex(base.as_bytes()).map_err(|_| {
                    CommandError::failed(format!("run {run_id} has a malformed base id"))
                })?;
                Some(ctx.repo.commit_tree(commit)?)
            }
            None => None,
        },
    };
    let repo = ctx.repo.gix();
    let options = crate::diff::Options::from_config(repo)
        .map_err(|e| CommandError::failed(super::error::single_line(&e.to_string())))?;
    let files = crate::diff::diff_trees(repo, old, new, &options)
        .map_err(|e| CommandError::failed(super::error::single_line(&e.to_string())))?;
    let mut text = Vec::new();
    crate::diff::render(&files, &mut text)
        .map_err(|e| CommandError::failed(format!("cannot render the diff: {e}")))?;
    let text = String::from_utf8_lossy(&text).into_owned();
    Ok(Report::new(
        json!({
            "run_id": run_id.as_str(),
            "round": args.round,
            "since_round": args.since_round.or(args.round.checked_sub(1).filter(|m| *m > 0)),
            "files": files.len(),
            "diff": text,
        }),
        text,
    ))
}
