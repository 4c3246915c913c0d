//! The `drop` report: what removing a run for good took away, here and on a remote.

use serde::Serialize;

use crate::model::RunId;

/// What `drop` removed.
#[derive(Debug, Clone, Serialize)]
pub struct Dropped {
    pub run_id: RunId,
    /// Whether the run was here at all (it may be dropped on a remote only).
    pub was_local: bool,
    /// The tombstone ref (`refs/pair/dropped/<run>`).
    pub tombstone: String,
    /// Whether the tombstone was left now (false: the run was dropped before).
    pub tombstone_created: bool,
    /// The refs deleted here (the run's ref and every staged copy of it).
    pub removed_refs: Vec<String>,
    /// Its lines removed from `refs/notes/pair`.
    pub removed_note_lines: usize,
    /// Rendered files removed (transcript cache, HANDOFF view, PR body).
    pub removed_files: Vec<String>,
    /// What the push of the drop did on `--remote`.
    pub remote: Option<DroppedRemote>,
}

/// What dropping did on a remote.
#[derive(Debug, Clone, Serialize)]
pub struct DroppedRemote {
    pub remote: String,
    /// The run was there and is deleted now.
    pub deleted: bool,
    pub tombstone_pushed: bool,
    pub notes_pushed: bool,
}
