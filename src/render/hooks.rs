//! Human views of `hooks install` and `hooks uninstall`: one line per hook saying what
//! happened to it, and one for `notes.rewriteRef`.

use std::io::Write;

use crate::model::report::hooks::{
    Chain, ConfigChange, HookReport, HooksInstalled, HooksUninstalled, Installed, Kept, Uninstalled,
};

/// `git pair hooks install`'s text.
pub fn installed(report: &HooksInstalled, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "hooks in {}:", report.hooks_dir)?;
    for hook in &report.hooks {
        let gated = report.gate && hook.hook.gates();
        writeln!(
            out,
            "  {:<12} {}{}",
            hook.hook.name(),
            install_outcome(hook),
            if gated {
                " — gates commits on review"
            } else {
                ""
            }
        )?;
    }
    writeln!(
        out,
        "notes.rewriteRef: {}",
        config_change(report.notes_rewrite_ref)
    )
}

/// `git pair hooks uninstall`'s text.
pub fn uninstalled(report: &HooksUninstalled, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "hooks in {}:", report.hooks_dir)?;
    for hook in &report.hooks {
        writeln!(
            out,
            "  {:<12} {}",
            hook.hook.name(),
            uninstall_outcome(hook)
        )?;
    }
    writeln!(
        out,
        "notes.rewriteRef: {}",
        config_change(report.notes_rewrite_ref)
    )
}

fn install_outcome(report: &HookReport<Installed>) -> String {
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

fn uninstall_outcome(report: &HookReport<Uninstalled>) -> String {
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
