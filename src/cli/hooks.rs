//! `git pair hooks install [--gate]` / `git pair hooks uninstall`: the git hooks that gate
//! commits on review, and the `notes.rewriteRef` setting that keeps review notes on rewrites.

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::install::hooks::{Chain, HookReport, Installed, Kept, Uninstalled};
use crate::ops;
use crate::ops::install::ConfigChange;

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
    let mut human = format!("hooks in {}:\n", done.hooks_dir.display());
    for hook in &done.hooks.hooks {
        let gated = gate && hook.hook == crate::install::hooks::Hook::PreCommit;
        human.push_str(&format!(
            "  {:<12} {}{}\n",
            hook.hook.name(),
            installed(hook),
            if gated {
                " — gates commits on review"
            } else {
                ""
            }
        ));
    }
    human.push_str(&format!(
        "notes.rewriteRef: {}\n",
        config_change(done.rewrite_ref)
    ));
    let json = json!({
        "hooks_dir": done.hooks_dir.display().to_string(),
        "gate": done.gate,
        "hooks": serde_json::to_value(&done.hooks.hooks).expect("hook reports serialize"),
        "notes_rewrite_ref": done.rewrite_ref,
    });
    Ok(Report::new(json, human))
}

fn uninstall(ctx: &Context) -> Result<Report, CommandError> {
    let done = ops::install::uninstall(ctx)?;
    let mut human = format!("hooks in {}:\n", done.hooks_dir.display());
    for hook in &done.hooks.hooks {
        human.push_str(&format!(
            "  {:<12} {}\n",
            hook.hook.name(),
            uninstalled(hook)
        ));
    }
    human.push_str(&format!(
        "notes.rewriteRef: {}\n",
        config_change(done.rewrite_ref)
    ));
    let json = json!({
        "hooks_dir": done.hooks_dir.display().to_string(),
        "hooks": serde_json::to_value(&done.hooks.hooks).expect("hook reports serialize"),
        "notes_rewrite_ref": done.rewrite_ref,
    });
    Ok(Report::new(json, human))
}

fn installed(report: &HookReport<Installed>) -> String {
    match &report.outcome {
        Installed::Created => "created".to_owned(),
        Installed::AlreadyInstalled => "already installed (unchanged)".to_owned(),
        Installed::Updated => "updated".to_owned(),
        Installed::Chained {
            how: Chain::InPlace,
        } => "chained: the existing hook keeps running after ours".to_owned(),
        Installed::Chained {
            how: Chain::MovedAside { chained },
        } => format!(
            "chained: the existing hook moved to {} and runs after ours",
            chained.display()
        ),
    }
}

fn uninstalled(report: &HookReport<Uninstalled>) -> String {
    match &report.outcome {
        Uninstalled::Restored => "restored as it was before install".to_owned(),
        Uninstalled::Removed => "removed".to_owned(),
        Uninstalled::BlockRemoved { why, backup } => {
            let why = match why {
                Kept::EditedSinceInstall => "edited since install: your changes are kept",
                Kept::NoBackup => "no backup: the rest of the file is kept",
            };
            match backup {
                Some(backup) => format!(
                    "git-pair block removed ({why}; the file as it was before install is in {})",
                    backup.display()
                ),
                None => format!("git-pair block removed ({why})"),
            }
        }
        Uninstalled::Missing { backup } => format!(
            "missing (deleted since install; the hook from before install is kept in {})",
            backup.display()
        ),
        Uninstalled::NotInstalled => "not installed".to_owned(),
    }
}

fn config_change(change: ConfigChange) -> &'static str {
    match change {
        ConfigChange::Set => "set to refs/notes/pair (amend and rebase carry the review notes)",
        ConfigChange::AlreadySet => "already names refs/notes/pair (unchanged)",
        ConfigChange::Unset => "refs/notes/pair removed (install had set it)",
        ConfigChange::LeftAlone => "kept (you set it, not git pair)",
        ConfigChange::NotSet => "not set (unchanged)",
    }
}
