//! `gate`'s report: why the commit gate is open.

use serde::Serialize;

use crate::model::RunId;

/// Why the gate is open (`git pair gate --json`; a closed gate is an error).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Gate {
    /// This clone has no run (active or finished) on this branch.
    NoActiveRun(NoActiveRun),
    /// The staged tree is the approved snapshot.
    Approved(Approved),
}

/// This clone has no run on `branch` (runs pulled from another clone do not count): nothing
/// gates commits.
#[derive(Debug, Clone, Serialize)]
pub struct NoActiveRun {
    /// Always true.
    pub open: bool,
    /// Always `no-active-run`.
    pub reason: &'static str,
    pub branch: String,
}

/// The staged tree is the snapshot `run_id`'s reviewer approved in `round`.
#[derive(Debug, Clone, Serialize)]
pub struct Approved {
    /// Always true.
    pub open: bool,
    /// Always `approved`.
    pub reason: &'static str,
    pub run_id: RunId,
    pub round: u32,
    pub reviewer: String,
    /// The approved tree id (hex).
    pub tree: String,
}
