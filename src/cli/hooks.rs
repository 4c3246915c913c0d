//! `git pair hooks install [--gate]` / `git pair hooks uninstall`: the git hooks that gate
//! commits on review, and the `notes.rewriteRef` setting that keeps review notes on rewrites.

use super::{CommandError, Context, Report};
use crate::ops;

/// Install or remove the git hooks that tie commits to reviews.
///
/// `install` writes pre-commit, commit-msg and post-commit shims (`git pair hook <name>`)
/// into the directory git runs hooks from (core.hooksPath honoured, so Husky's directory
/// works), chaining any hook already there, and sets notes.rewriteRef=refs/notes/pair so
/// `git commit --amend` and `git rebase` keep the review notes. Installing twice changes
/// nothing; `uninstall` puts back exactly what was there.
///
/// pre-commit refuses HANDOFF.md and pair.neverCommit paths; with --gate it also refuses a
/// commit whose staged tree is not the snapshot the active run's reviewer approved. commit-msg
/// adds Pair-Run: and Reviewed-by: trailers to a commit of approved work; post-commit writes
/// its refs/notes/pair line. Bypass deliberately with `git commit --no-verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Install the hook shims and set notes.rewriteRef=refs/notes/pair.
    Install {
        /// pre-commit also refuses commits whose staged tree is not the active run's approved
        /// snapshot (and refuses every commit when git-pair is missing from PATH).
        #[arg(long)]
        gate: bool,
    },
    /// Remove the shims, put back the hooks that were there, and unset notes.rewriteRef if
    /// install set it.
    Uninstall,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    match args.action {
        Action::Install { gate } => install(ctx, gate),
        Action::Uninstall => uninstall(ctx),
    }
}

fn install(ctx: &Context, gate: bool) -> Result<Report, CommandError> {
    let done = ops::install::install(ctx, gate)?;
    let mut report = Report::rendered(&done, crate::render::hooks::installed);
    if let Some(dir) = &done.tracked_hooks_dir {
        report.notes.push(format!(
            "warning: the hooks directory {dir}/ (core.hooksPath) is tracked by this project: the shims written there are work-tree changes, and git pair start refuses a dirty tree; commit them for the team (git add {dir} && git commit -m \"git pair hooks\"), or undo with git pair hooks uninstall"
        ));
    }
    Ok(report)
}

fn uninstall(ctx: &Context) -> Result<Report, CommandError> {
    let done = ops::install::uninstall(ctx)?;
    Ok(Report::rendered(&done, crate::render::hooks::uninstalled))
}
