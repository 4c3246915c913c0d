//! The `hooks install` / `hooks uninstall` reports: what happened to each git hook shim and
//! to `notes.rewriteRef`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What `hooks install` did.
#[derive(Debug, Clone, Serialize)]
pub struct HooksInstalled {
    /// The directory git runs hooks from.
    pub hooks_dir: String,
    /// `pre-commit`, `pre-merge-commit` and `commit-msg` gate commits on review.
    pub gate: bool,
    pub hooks: Vec<HookReport<Installed>>,
    pub notes_rewrite_ref: ConfigChange,
    /// The hooks directory relative to the work tree when it is a tracked folder of the
    /// project (`core.hooksPath=.husky`): the shims are then changes in the work tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracked_hooks_dir: Option<String>,
}

/// What `hooks uninstall` did.
#[derive(Debug, Clone, Serialize)]
pub struct HooksUninstalled {
    pub hooks_dir: String,
    pub hooks: Vec<HookReport<Uninstalled>>,
    pub notes_rewrite_ref: ConfigChange,
}

/// What happened to `notes.rewriteRef`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConfigChange {
    /// Install added `refs/notes/pair` to it.
    Set,
    /// It already named `refs/notes/pair` (set by the user, or by an earlier install).
    AlreadySet,
    /// Uninstall removed the value install had added.
    Unset,
    /// The user set it, not install: uninstall leaves it.
    LeftAlone,
    /// It was not set, and install had not set it.
    NotSet,
}

/// A git hook git pair installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hook {
    PreCommit,
    CommitMsg,
    PostCommit,
    /// `git merge`'s pre-commit: runs before a merge commit is written (not on a fast-forward).
    PreMergeCommit,
}

impl Hook {
    /// Every hook: a commit's three in the order git runs them, then `pre-merge-commit`, which
    /// a merge commit runs in place of `pre-commit`.
    pub const ALL: [Hook; 4] = [
        Hook::PreCommit,
        Hook::CommitMsg,
        Hook::PostCommit,
        Hook::PreMergeCommit,
    ];

    /// The hook's file name, which is also its name in `git pair hook <name>`.
    pub fn name(self) -> &'static str {
        match self {
            Hook::PreCommit => "pre-commit",
            Hook::CommitMsg => "commit-msg",
            Hook::PostCommit => "post-commit",
            Hook::PreMergeCommit => "pre-merge-commit",
        }
    }

    /// Whether the hook gates the commit when installed with `--gate`: `pre-commit` and
    /// `pre-merge-commit` before the commit, and `commit-msg` again on the tree that will
    /// really be committed (it runs after every pre-commit step, so a later step that
    /// re-stages is caught there).
    pub fn gates(self) -> bool {
        matches!(
            self,
            Hook::PreCommit | Hook::PreMergeCommit | Hook::CommitMsg
        )
    }

    /// The hook with this file name.
    pub fn from_name(name: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|hook| hook.name() == name)
    }
}

/// What `install` did to one hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Installed {
    /// There was no hook: a new shim was written.
    Created,
    /// The shim was there already, exactly as asked: nothing was written.
    AlreadyInstalled,
    /// The shim was there with other settings (`--gate`): only its block was replaced.
    Updated,
    /// A hook was there: it still runs, after ours.
    Chained {
        #[serde(flatten)]
        how: Chain,
    },
}

/// How an existing hook was chained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "how", rename_all = "kebab-case")]
pub enum Chain {
    /// A shell script: the block went in right after its shebang line.
    InPlace,
    /// Anything else: moved to `chained` and run by a shim after ours.
    MovedAside { chained: PathBuf },
}

/// What `uninstall` did to one hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Uninstalled {
    /// The hook that was there before is back, byte for byte and with its mode.
    Restored,
    /// There was no hook before: the shim was deleted.
    Removed,
    /// Only the block was removed, the rest of the file was kept as it is now; `backup` (when
    /// there is one) still holds the file as it was before the install.
    BlockRemoved { why: Kept, backup: Option<PathBuf> },
    /// The hook file was deleted since the install; the original is kept at `backup`.
    Missing { backup: PathBuf },
    /// No git-pair block and no backup: nothing to do.
    NotInstalled,
}

/// Why `uninstall` removed only its block instead of restoring the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kept {
    /// The file was changed outside the block since the install: those changes are kept.
    EditedSinceInstall,
    /// No backup exists (a vendored shim, or backups removed): the rest is kept as it is.
    NoBackup,
}

/// One hook's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookReport<T> {
    pub hook: Hook,
    /// The hook file.
    pub path: PathBuf,
    #[serde(flatten)]
    pub outcome: T,
}
