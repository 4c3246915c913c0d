//! Errors of the run store, each naming what failed.

use crate::model::{RecordError, Refusal};

/// What went wrong reading or writing run state.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("not a git repository (or any parent up to the root): {path}")]
    NotARepository { path: String },
    #[error("this operation needs a work tree, and {git_dir} is a bare repository")]
    Bare { git_dir: String },
    #[error("unknown run '{run_id}'")]
    UnknownRun { run_id: String },
    #[error("corrupted record {path} in run {run_id}: {source}")]
    CorruptRecord {
        run_id: String,
        path: String,
        #[source]
        source: RecordError,
    },
    #[error("corrupted run {run_id}: {detail}")]
    CorruptRun { run_id: String, detail: String },
    #[error(transparent)]
    Refused(Refusal),
    /// Another writer moved the run's ref first; the caller reloads and re-applies.
    #[error("run {run_id} was updated concurrently")]
    LostRace { run_id: String },
    #[error("run {run_id} kept changing underneath: gave up after {attempts} attempts")]
    Contention { run_id: String, attempts: u32 },
    #[error("{name} kept changing underneath: gave up after {attempts} attempts")]
    RefContention { name: String, attempts: u32 },
    #[error("a note line must be one non-empty line, got '{line}'")]
    BadNoteLine { line: String },
    /// `git -c …` handed down overrides gix cannot apply (GIT_CONFIG_PARAMETERS).
    #[error("cannot apply the configuration given with git -c (GIT_CONFIG_PARAMETERS): {detail}")]
    BadOverrides { detail: String },
    #[error("cannot resolve revision '{rev}': {detail}")]
    BadRevision { rev: String, detail: String },
    #[error("cannot {action}: {}", crate::util::chain::error_chain(source))]
    Git {
        action: String,
        #[source]
        source: gix::Error,
    },
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps a gix error with the action that failed, for `map_err`.
    pub(crate) fn git<E: Into<gix::Error>>(action: &str) -> impl FnOnce(E) -> Error + '_ {
        move |source| Error::Git {
            action: action.to_owned(),
            source: source.into(),
        }
    }

    /// Wraps an I/O error with the action and path, for `map_err`.
    pub(crate) fn io(
        action: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.display().to_string();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }

    /// Names the run in a generic object-reading error.
    pub(crate) fn in_run(self, run_id: &crate::model::RunId) -> Error {
        match self {
            Error::Git { action, source } => Error::CorruptRun {
                run_id: run_id.to_string(),
                detail: format!(
                    "cannot {action}: {}",
                    crate::util::chain::error_chain(&source)
                ),
            },
            other => other,
        }
    }
}
