//! The `probe` report: every realization probed on its own, and for each configured reviewer
//! the candidates tried in order and the winner.

use std::path::PathBuf;

use serde::Serialize;

use crate::review::Candidate;

/// What probing found.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    /// Every realization, probed on its own: whether it could run here, and why.
    pub realizations: Vec<Realization>,
    /// For each configured reviewer: the candidates tried in order and the winner (if any).
    pub reviewers: Vec<Reviewer>,
}

impl Probe {
    /// Whether every configured reviewer has a realization that binds here.
    pub fn all_bind(&self) -> bool {
        self.reviewers.iter().all(|r| r.winner.is_some())
    }
}

/// One realization, probed as if it were the configured reviewer.
#[derive(Debug, Clone, Serialize)]
pub struct Realization {
    pub name: String,
    pub binds: bool,
    /// Why it binds or not, in one line.
    pub reason: String,
    /// Where its executable was found.
    pub path: Option<PathBuf>,
}

/// One configured reviewer's binding.
#[derive(Debug, Clone, Serialize)]
pub struct Reviewer {
    pub configured: String,
    /// The realization that binds.
    pub winner: Option<String>,
    /// The winner is not the configured reviewer.
    pub fallback_used: bool,
    /// Every candidate probed, in order.
    pub probed: Vec<Candidate>,
}
