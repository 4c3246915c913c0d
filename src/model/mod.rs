//! The run's data: versioned immutable records and the manifest projected from them.
//!
//! Pure: no git, no files, no terminal. Records are the truth; [`Manifest`] (round numbers,
//! `next_action`, counts) is computed from them by exactly one fold, [`Manifest::apply`], so
//! appending a record updates the projection in O(record) and a merge recomputes it from the
//! union of records with the same code.

mod approval;
mod carried_approvals;
pub mod checkpoint;
pub mod ids;
mod manifest;
mod record;
pub mod report;
pub mod reviewer;
pub mod settings;

pub use approval::{Approval, ApprovalFold, approvals, finish_matters, reviewed_snapshots};
pub use carried_approvals::{APPROVALS_TRAILER, ApprovalFacts, CarriedApprovals, MAX_CARRIED};
pub use checkpoint::{
    Assessment, CheckRun, Checkpoint, CheckpointArchived, CheckpointId, CheckpointIdError,
    CheckpointState, CheckpointVerified, Compaction, ContextUse, LatestCheckpoint, Mismatch,
    RepoIdentity, VerifyResult,
};
pub use ids::{CommitId, ObjectIdError, RunId, RunIdError, TreeId};
pub use manifest::fold::coder_rounds;
pub use manifest::next_action::Observed;
pub use manifest::rules::{Refusal, check_coder_done, check_finish, check_pr_review, check_review};
pub use manifest::summary::CarriedSummary;
pub use manifest::{Manifest, NextAction, Outcome, Role, RoundEntry, SessionSpend};
pub use record::{
    Abandon, AllowSecret, Allowance, Body, Coder, CostEntry, Finding, Finish, MAX_RECORD_BYTES,
    PanelLimit, PrDispatch, PrReview, PrReviewFailed, Record, RecordError, Response,
    ResponseStatus, Review, ReviewAttempt, ReviewDispatch, ReviewMember, Runner, SCHEMA_VERSION,
    SecretAt, SetSetting, Severity, Start, Verdict,
};
pub use settings::Setting;
