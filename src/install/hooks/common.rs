//! The vocabulary of hook installation: which hooks there are, where they and their
//! backups live, how to install, and what can go wrong.

use std::path::Path;

use crate::util::fs::Failure;

/// How to get `git-pair` onto `PATH`, as the shims say when it is missing.
pub const INSTALL_HINT: &str = "from a clone of the git-pair repository, cargo install --locked --path . (its README says more)";

/// What went wrong installing or uninstalling a hook.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} holds a git-pair begin marker without its end marker; remove the partial block by hand"
    )]
    BrokenBlock { path: String },
    #[error("cannot chain the existing {hook} hook: {chained} already exists; move it away first")]
    ChainedExists { hook: &'static str, chained: String },
    #[error(
        "{path} is a symbolic link to a file holding a different git-pair block; change that file instead"
    )]
    SymlinkedBlock { path: String },
    #[error("the hook backup {path} is unusable: {detail}")]
    BadBackup { path: String, detail: String },
}

/// A failed atomic write (see [`crate::install`]'s `InstalledFile`) names what it did and where.
impl From<Failure> for Error {
    fn from((action, path, source): Failure) -> Error {
        Error::io(action, &path)(source)
    }
}

impl Error {
    pub(super) fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.display().to_string();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }
}

pub use crate::model::report::hooks::Hook;

/// Whether a hook's failure fails the git command (post hooks cannot).
pub(super) fn can_refuse(hook: Hook) -> bool {
    !matches!(hook, Hook::PostCommit)
}

/// Where hooks live and where their backups go.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The directory git runs hooks from (`core.hooksPath`, resolved, or `.git/hooks`).
    pub hooks_dir: &'a Path,
    /// A directory owned by git pair, outside the work tree (e.g. `.git/pair/hooks-backup`),
    /// holding what each hook file was before the first install, in one subdirectory per
    /// hooks directory (so a `core.hooksPath` that changed between installs keeps both).
    pub backup_dir: &'a Path,
}

/// How to install.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// `pre-commit` gates the commit on the review (`--gate`), and fails the commit when
    /// `git-pair` is missing instead of letting it through.
    pub gate: bool,
}
