//! The review domain's one error type. Reviewer processes never produce one of these: a
//! failed, hung or silent reviewer is an [`crate::review::Attempt`] outcome, not an `Err`.

use crate::review::binding::ProbeReport;
use crate::review::surface::SurfaceError;

/// What went wrong while loading reviewer surfaces or choosing a realization.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The surface document could not be loaded, or names no such reviewer.
    #[error(transparent)]
    Surface(#[from] SurfaceError),
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
