//! `verify`'s report: the verdict on every commit of a range.

use serde::Serialize;

use crate::model::RunId;

/// The verdict on a range (`git pair verify --json`).
#[derive(Debug, Clone, Serialize)]
pub struct Verified {
    /// The range as verified (the default spelled out).
    pub range: String,
    pub ok: bool,
    pub allow_forced: bool,
    /// Oldest first.
    pub commits: Vec<CommitLine>,
    /// Runs that could not be read (a ref that is not a commit, a record or manifest that
    /// does not parse): skipped, so they approve nothing; the rest is verified as usual.
    pub malformed_runs: Vec<MalformedRun>,
    /// Why the range fails, when it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Verified {
    /// How many commits fail the gate.
    pub fn failing(&self) -> usize {
        self.commits.iter().filter(|c| !c.passes).count()
    }
}

/// One commit's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct CommitLine {
    /// The commit id (hex).
    pub commit: String,
    /// `approved`, `forced`, `changed-after-review` or `unreviewed`.
    pub status: &'static str,
    pub passes: bool,
    /// The run whose review the status refers to.
    pub run: Option<RunId>,
    pub round: Option<u32>,
    pub reviewer: Option<String>,
    pub cost_usd: Option<f64>,
    /// The differing (or unreviewed) paths, at most a few.
    pub paths: Vec<String>,
    /// How many more paths there were.
    pub paths_omitted: usize,
    /// How the approval was found: `note`, `trailer`, `tree` or `parents`.
    pub via: Option<&'static str>,
    pub subject: String,
    /// One line saying why, for humans.
    pub detail: String,
}

/// A run `verify` skipped because it could not be read.
#[derive(Debug, Clone, Serialize)]
pub struct MalformedRun {
    pub run: RunId,
    /// What is wrong with it, one line.
    pub reason: String,
}
