//! The review domain's one error type. Reviewer processes never produce one of these: a
//! failed, hung or silent reviewer is an [`crate::review::Attempt`] outcome, not an `Err`.

use std::path::PathBuf;

use crate::review::probe::ProbeReport;

/// What went wrong while loading reviewer surfaces or choosing a realization.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The surface file named by `pair.surfaceFile` could not be read.
    #[error("cannot read reviewer surface file {path}: {source}")]
    ReadSurfaceFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The surface document is not the JSON shape git pair reads.
    #[error("reviewer surfaces from {origin} do not parse: {source}")]
    ParseSurfaces {
        origin: String,
        source: serde_json::Error,
    },
    /// The surface document parses but contradicts itself (unknown placeholder, missing
    /// capability, a fallback naming nothing, …).
    #[error("reviewer surfaces from {origin}: realization `{realization}`: {reason}")]
    InvalidSurfaces {
        origin: String,
        realization: String,
        reason: String,
    },
    /// The configured reviewer names no realization in the surface document.
    #[error("unknown reviewer `{name}` (known: {known})")]
    UnknownRealization { name: String, known: String },
    /// The configured reviewer command is not a non-empty JSON array of strings.
    #[error("reviewer command {value} is invalid: {reason}")]
    InvalidReviewerCommand { value: String, reason: String },
    /// Nothing could be bound: every candidate was probed and each one failed.
    #[error("no reviewer realization binds for `{configured}`; probed: {probed}")]
    NothingBinds {
        configured: String,
        probed: String,
        report: Box<ProbeReport>,
    },
}
