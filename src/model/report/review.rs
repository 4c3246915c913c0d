//! The `review` reports: a recorded round (its verdict, findings, each reviewer's outcome and
//! the packet's coverage), or with `--dry-run` what would be sent to whom.

use serde::Serialize;

use crate::model::{Finding, NextAction, RunId, SecretAt, Verdict};

/// What `review` produced.
#[derive(Debug, Clone)]
pub enum Review {
    /// `--dry-run`: nothing stored, nothing spawned.
    DryRun(Box<DryRun>),
    /// The recorded round (its verdict may be missing: no reviewer gave one).
    Round(Box<Round>),
}

/// A recorded review round.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    pub run_id: RunId,
    pub round: u32,
    /// Null: no verdict could be obtained (the command fails; no round is used).
    pub verdict: Option<Verdict>,
    pub findings: Vec<Finding>,
    /// The round's outcome (`ok`, `failed-validation`, `timeout`, …).
    pub outcome: String,
    /// Each reviewer's outcome.
    pub outcomes: Vec<ReviewerOutcome>,
    pub fallback_used: bool,
    /// How many reviewers ran at once and which limit bound it.
    pub parallelism: Parallelism,
    pub coverage: CoverageSummary,
    /// The model the reviewers were asked for (null: each CLI's own default).
    pub model: Option<String>,
    /// The reasoning effort they were asked for (null: each CLI's own default).
    pub effort: Option<String>,
    /// The run's next action after the round.
    pub next_action: &'static str,
    /// The same, for the human "next:" line.
    #[serde(skip)]
    pub next: NextAction,
    /// Why there is no verdict, when a reviewer said.
    #[serde(skip)]
    pub error: Option<String>,
    /// `reviewed X of Y files`, when the reviewer saw only part of the change.
    #[serde(skip)]
    pub partial_coverage: Option<String>,
    /// Reviewers that stood in for a configured one that is not available here.
    #[serde(skip)]
    pub fallbacks: Vec<Fallback>,
    /// What was redacted from the packet (kinds and places, never a secret).
    #[serde(skip)]
    pub secrets: Vec<SecretAt>,
    /// Reviewers whose last attempt failed on authentication (their credentials were
    /// refused): reviewing again cannot help until they are fixed.
    #[serde(skip)]
    pub auth_failed: Vec<String>,
}

/// One reviewer's part in a round.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewerOutcome {
    pub reviewer: String,
    pub outcome: &'static str,
    /// How many attempts it took.
    pub attempts: usize,
    pub session_id: Option<String>,
}

/// A panel's effective parallel cap, `min(reviewers, pair.maxParallel, each surface's
/// ceiling)`, and the limit that binds: `reviewers`, `maxParallel` or `<realization> ceiling`.
#[derive(Debug, Clone, Serialize)]
pub struct Parallelism {
    pub limit: usize,
    pub bound_by: String,
}

/// A configured reviewer that is not available, and the one bound instead.
#[derive(Debug, Clone)]
pub struct Fallback {
    pub configured: String,
    pub bound: String,
}

/// The compact coverage summary (the full manifest is stored with the round).
#[derive(Debug, Clone, Serialize)]
pub struct CoverageSummary {
    pub files_total: usize,
    pub full: usize,
    pub clipped: usize,
    pub names_only: usize,
    pub not_included: usize,
    pub bytes_included: u64,
    /// `reviewed X of Y files` when not every file is shown completely.
    pub summary: Option<String>,
    /// How many packets the change was reviewed in (1 unless it is larger than the budget).
    pub passes: u32,
    /// Files no pass showed (binary content, over `pair.maxFileBytes`): the first ones; an
    /// approval with any is partial.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreviewed: Vec<String>,
}

/// `review --dry-run`: the packet and the reviewer command lines.
#[derive(Debug, Clone, Serialize)]
pub struct DryRun {
    /// Always true.
    pub dry_run: bool,
    pub run_id: RunId,
    pub round: u32,
    /// `code` or `plan`.
    pub mode: &'static str,
    /// Each bound reviewer and the command line it would run.
    pub reviewers: Vec<PlannedReviewer>,
    /// Configured reviewers that no realization binds for here.
    pub unbound: Vec<Unbound>,
    pub coverage: CoverageSummary,
    pub secrets: Vec<SecretAt>,
    /// The prompt the first attempt would send (the human output).
    pub prompt: String,
    /// The bound reviewers' names, for the note.
    #[serde(skip)]
    pub members: Vec<String>,
}

/// A reviewer a dry run would start.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedReviewer {
    pub reviewer: String,
    pub argv: Vec<String>,
}

/// A configured reviewer nothing binds for.
#[derive(Debug, Clone, Serialize)]
pub struct Unbound {
    pub configured: String,
    pub probed: Vec<Probed>,
}

/// One candidate probed, and why it does not bind.
#[derive(Debug, Clone, Serialize)]
pub struct Probed {
    pub name: String,
    pub reason: String,
}

/// `review --pr N`: the PR's final review as the remote has it, posted on the PR.
#[derive(Debug, Clone, Serialize)]
pub struct PrRound {
    pub run_id: RunId,
    pub pr: u64,
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
    /// `posted` (a new comment on the PR) or `updated` (git pair's own earlier one).
    pub comment: &'static str,
    /// The PR's head, base and merge base as fetched: the review saw merge base → head.
    pub head: String,
    pub base: String,
    pub merge_base: String,
    pub reviewers: Vec<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub next_action: &'static str,
    #[serde(skip)]
    pub next: NextAction,
}

/// `review --plan FILE` with no run (outside a repository, or with no active run): the
/// verdict and findings, stored nowhere.
#[derive(Debug, Clone, Serialize)]
pub struct PlanReview {
    /// Always false: no run holds this review.
    pub stored: bool,
    /// Always `plan`.
    pub mode: &'static str,
    /// Null when no reviewer gave a verdict (the command fails).
    pub verdict: Option<Verdict>,
    pub findings: Vec<Finding>,
    pub outcome: String,
    pub reviewers: Vec<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    #[serde(skip)]
    pub error: Option<String>,
}
