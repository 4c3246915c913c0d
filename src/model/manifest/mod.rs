//! The manifest: the projection of a run's records (`manifest.json`) and what it answers
//! about them. It is computed by one fold ([`Manifest::apply`], `fold.rs`); what to do next
//! is `next_action.rs`, what may be recorded next is `rules.rs`.

use serde::{Deserialize, Serialize};

use super::checkpoint::LatestCheckpoint;
use super::record::{Runner, SCHEMA_VERSION, Verdict};

pub(super) mod fold;
pub(super) mod next_action;
pub(super) mod rules;
pub(super) mod summary;
#[cfg(test)]
mod tests;

/// Who acted in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Coder,
    Reviewer,
}

/// One entry of `rounds`: a coder round or a reviewer round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundEntry {
    pub n: u32,
    pub role: Role,
    pub tool: String,
    pub session_id: Option<String>,
    pub started_at: String,
    pub ended_at: String,
    pub findings: u32,
    pub findings_addressed: Option<u32>,
    pub verdict: Option<Verdict>,
    pub outcome: Option<String>,
    pub cost_usd: Option<f64>,
    /// Coder rounds: how many `coder-done` summaries the round holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summaries: Option<u32>,
    /// Reviewer rounds: a digest of the open findings, to detect a stalled loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_findings_digest: Option<String>,
    /// Reviewer rounds: some file of the change reached no reviewer (coverage partial), so
    /// an APPROVED verdict is a partial approval.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// How the run ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub verdict: Option<Verdict>,
    pub rounds: u32,
    #[serde(rename = "override")]
    pub override_: bool,
    /// Closed with `git pair abandon` (or `start --replace`): no verdict.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abandoned: bool,
    /// Finished with `--accept-partial` on a partial approval.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accepted_partial: bool,
}

/// One agent session of the run and its latest stored cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSpend {
    /// `coder` or `reviewer`.
    pub role: String,
    /// The tool that ran it (`claude`, `codex`, …).
    pub agent: String,
    /// USD as last measured (0 until measured): the priced part only.
    #[serde(default)]
    pub usd: f64,
    /// Tokens of the models that had no price when last measured, by model id: priced when
    /// read with a table that knows them, else shown as unpriced (never as $0).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub unpriced: std::collections::BTreeMap<String, serde_json::Value>,
    /// The session's cost as its CLI reported it (the largest figure of its attempts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_usd: Option<f64>,
}

/// A review dispatched and not yet answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingReview {
    pub dispatch: String,
    pub round: u32,
    pub at: String,
    /// The process that dispatched it, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<Runner>,
}

/// The PR's final round as projected: the PR, and its final review once recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrRound {
    pub number: u64,
    /// The PR's final review: the coder round the PR held, and how many findings it had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed: Option<PrReviewed>,
    /// How many times its final review was dispatched: the next dispatch's material goes
    /// to `pr/<number>/<dispatched + 1>/`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dispatched: u32,
    /// Its final review dispatched and not answered yet (no `pr-review` or
    /// `pr-review-failed` for the newest `pr-dispatch`): while its process lives, no other
    /// review of the run starts (SPEC §5: one at a time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingReview>,
}

impl PrRound {
    /// Dispatch `dispatch` of the final review is answered: no longer pending. An answer
    /// to an older dispatch leaves a newer one pending.
    pub(super) fn answer(&mut self, dispatch: Option<&str>) {
        if self
            .pending
            .as_ref()
            .is_some_and(|p| dispatch.is_none_or(|d| d == p.dispatch))
        {
            self.pending = None;
        }
    }
}

/// The PR's final review, as the round rules read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrReviewed {
    /// The coder round the PR held when it was reviewed; the one more round is the next.
    pub round: u32,
    pub findings: usize,
}

impl Manifest {
    /// The PR's final review, once recorded.
    pub fn pr_reviewed(&self) -> Option<PrReviewed> {
        self.pr_round.as_ref().and_then(|p| p.reviewed)
    }

    /// Whether the coder round that addresses the PR's final review is open (or done).
    pub fn in_pr_round(&self) -> bool {
        self.pr_reviewed()
            .is_some_and(|r| self.current_coder_round().is_some_and(|n| n > r.round))
    }
}

/// What the loop should do next; the skill follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NextAction {
    #[serde(rename = "code")]
    Code,
    #[serde(rename = "review")]
    Review,
    #[serde(rename = "finish")]
    Finish,
    #[serde(rename = "stop:round-cap")]
    StopRoundCap,
    #[serde(rename = "stop:budget")]
    StopBudget,
    #[serde(rename = "stop:stalled")]
    StopStalled,
    /// The last review approved, but some of the change reached no reviewer (binary
    /// content, a file over `pair.maxFileBytes`): the human decides (`finish
    /// --accept-partial`, or split the change and review again).
    #[serde(rename = "stop:partial")]
    StopPartial,
    /// The run's PR exists and gets its final review as the remote has it
    /// (`pair.prFinalRound`): `git pair review --pr N`.
    #[serde(rename = "review:pr")]
    ReviewPr,
    #[serde(rename = "resume:review")]
    ResumeReview,
    #[serde(rename = "wait:review")]
    WaitReview,
    #[serde(rename = "done")]
    Done,
}

impl NextAction {
    /// Every value, for documentation and for the skill's coverage test.
    pub const ALL: [NextAction; 11] = [
        NextAction::Code,
        NextAction::Review,
        NextAction::Finish,
        NextAction::StopRoundCap,
        NextAction::StopBudget,
        NextAction::StopStalled,
        NextAction::StopPartial,
        NextAction::ReviewPr,
        NextAction::ResumeReview,
        NextAction::WaitReview,
        NextAction::Done,
    ];

    /// The value as `status --json` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            NextAction::Code => "code",
            NextAction::Review => "review",
            NextAction::Finish => "finish",
            NextAction::StopRoundCap => "stop:round-cap",
            NextAction::StopBudget => "stop:budget",
            NextAction::StopStalled => "stop:stalled",
            NextAction::StopPartial => "stop:partial",
            NextAction::ReviewPr => "review:pr",
            NextAction::ResumeReview => "resume:review",
            NextAction::WaitReview => "wait:review",
            NextAction::Done => "done",
        }
    }
}

/// The projection of a run (`manifest.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub v: u32,
    pub run_id: String,
    pub task: String,
    pub cwd: String,
    pub branch: String,
    pub base: Option<crate::model::CommitId>,
    pub coder: String,
    /// The run's reviewer by its one name ([`crate::model::reviewer::name`]), as the latest
    /// of its start, a `set` and a review (the one that ran) says. A run from before settings
    /// followed configuration keeps its reviewer setting here (reviews leave it as is).
    pub reviewer: String,
    pub max_rounds: u32,
    pub budget_usd: Option<f64>,
    #[serde(default = "default_warn_ratio")]
    pub budget_warn_ratio: f64,
    pub created_at: String,
    pub rounds: Vec<RoundEntry>,
    pub reviewer_fallback: bool,
    pub outcome: Outcome,
    pub pr: Option<u64>,
    pub next_action: NextAction,
    /// Spend measured and stored so far: the sum of each session's latest measurement.
    #[serde(default)]
    pub spent_usd: f64,
    /// Every agent session the run recorded, with its latest stored cost, by session id.
    #[serde(default)]
    pub sessions: std::collections::BTreeMap<String, SessionSpend>,
    #[serde(default)]
    pub pending_review: Option<PendingReview>,
    /// The settings the run owns, by `set` key (flags to `start`, `git pair set`; see
    /// `crate::model::settings`); every other setting follows `git config` when used.
    /// `None` for runs started before that: all their settings belong to the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_settings: Option<std::collections::BTreeMap<String, serde_json::Value>>,
    /// The start record's `claimed`: the starting clone recorded the run as its own in a
    /// local ref. False in runs started before runs belonged to a clone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub claimed: bool,
    /// The start record's `carrier`: the run only carries a checkpoint made with no run
    /// active, and is never chosen as the active run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub carrier: bool,
    /// Records written concurrently on two machines (same position); both are kept.
    #[serde(default)]
    pub conflicts: Vec<String>,
    /// Number of records projected.
    #[serde(default)]
    pub records: u64,
    /// Highest record position seen; the next record gets one more.
    #[serde(default)]
    pub last_seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_record: Option<String>,
    /// The PR's final round (`pair.prFinalRound`), once the PR was recorded for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr_round: Option<PrRound>,
    /// The id of the `records/` tree this projection is of, stamped by the store when it
    /// writes the manifest beside it: a stored manifest whose stamp is its tree's `records/`
    /// describes exactly those records, checked without listing them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_tree: Option<String>,
    /// Round entries folded out of `rounds`: the manifest keeps the newest
    /// [`ROUNDS_KEPT`] rounds in full (and the last two reviews with a verdict), so it stays
    /// the same size however long the run; whatever needs every round projects it from the
    /// records ([`Manifest::unbounded`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rounds_folded: u32,
    /// How many rounds `rounds` keeps (`None`: every one); not stored.
    #[serde(skip, default = "default_round_window")]
    round_window: Option<u32>,
    /// The run's latest checkpoint and where it stands (SPEC §10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<LatestCheckpoint>,
    /// Context compactions observed since the run's context was last handed over (archiving
    /// a checkpoint retires the old context, so the count starts again).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compactions: u32,
    /// Fields written by a newer version, kept as they were.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

fn default_warn_ratio() -> f64 {
    0.8
}

/// How many of the newest rounds a stored manifest keeps in `rounds`.
pub const ROUNDS_KEPT: u32 = 16;

fn default_round_window() -> Option<u32> {
    Some(ROUNDS_KEPT)
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Manifest {
    /// The projection of no records: what a run looks like before its start record.
    pub fn empty() -> Self {
        Manifest {
            v: SCHEMA_VERSION,
            run_id: String::new(),
            task: String::new(),
            cwd: String::new(),
            branch: String::new(),
            base: None,
            coder: String::new(),
            reviewer: String::new(),
            max_rounds: 0,
            budget_usd: None,
            budget_warn_ratio: default_warn_ratio(),
            created_at: String::new(),
            rounds: Vec::new(),
            reviewer_fallback: false,
            outcome: Outcome::default(),
            pr: None,
            next_action: NextAction::Code,
            spent_usd: 0.0,
            sessions: Default::default(),
            pending_review: None,
            run_settings: None,
            claimed: false,
            carrier: false,
            conflicts: Vec::new(),
            records: 0,
            last_seq: 0,
            last_record: None,
            records_tree: None,
            rounds_folded: 0,
            round_window: default_round_window(),
            checkpoint: None,
            compactions: 0,
            pr_round: None,
            extra: serde_json::Map::new(),
        }
    }

    /// The projection of no records that keeps every round in `rounds` (the stored one keeps
    /// the newest [`ROUNDS_KEPT`]): for views of the whole run (the PR body, `cost`), folded
    /// from its records.
    pub fn unbounded() -> Self {
        Manifest {
            round_window: None,
            ..Manifest::empty()
        }
    }

    /// The file name of the last record projected (the manifest's head): a stored manifest
    /// describes a records tree only when this is that tree's last record.
    pub fn last_record(&self) -> Option<&str> {
        self.last_record.as_deref()
    }

    /// The highest coder round, if any: the last coder entry's, since the fold appends each
    /// coder round one past the one before (and folding old rounds out keeps the order), so
    /// this reads from the end and not the whole of an unbounded projection.
    pub fn current_coder_round(&self) -> Option<u32> {
        self.rounds
            .iter()
            .rev()
            .find(|e| e.role == Role::Coder)
            .map(|e| e.n)
    }

    /// The last reviewer entry that carries a verdict.
    pub fn last_review(&self) -> Option<&RoundEntry> {
        self.rounds
            .iter()
            .rev()
            .find(|e| e.role == Role::Reviewer && e.verdict.is_some())
    }

    /// The verdict of the last completed review.
    pub fn last_verdict(&self) -> Option<Verdict> {
        self.last_review().and_then(|e| e.verdict)
    }

    /// Whether the last review with a verdict approved with something unreviewed.
    pub fn last_approval_is_partial(&self) -> bool {
        self.last_review()
            .is_some_and(|e| e.partial && e.verdict == Some(Verdict::Approved))
    }

    /// Whether coder round `n` has a completed review (failed reviews use no round). A round's
    /// reviews come after its coder entry, so the scan from the end stops at an older round.
    pub fn is_reviewed(&self, n: u32) -> bool {
        for e in self.rounds.iter().rev() {
            match e.role {
                Role::Reviewer if e.n == n && e.verdict.is_some() => return true,
                Role::Coder if e.n < n => return false,
                _ => {}
            }
        }
        false
    }

    /// Whether the run was closed: finished with a verdict, or abandoned.
    pub fn is_finished(&self) -> bool {
        self.outcome.verdict.is_some() || self.outcome.abandoned
    }

    /// Adds an agent session to the run's sessions (cost 0 until measured), once.
    pub fn register_session(&mut self, id: &str, role: &str, agent: &str) {
        self.sessions
            .entry(id.to_owned())
            .or_insert_with(|| SessionSpend {
                role: role.to_owned(),
                agent: agent.to_owned(),
                usd: 0.0,
                unpriced: Default::default(),
                reported_usd: None,
            });
    }

    fn stored_budget_alert(&self) -> bool {
        self.budget_usd
            .is_some_and(|limit| limit > 0.0 && self.spent_usd >= limit)
    }

    /// Whether the last completed review is a `[process]` CHANGES_REQUESTED: the reviewer
    /// gave no readable verdict, even when asked again.
    pub fn last_review_failed_to_answer(&self) -> bool {
        self.last_review()
            .is_some_and(|e| e.outcome.as_deref() == Some("failed-validation"))
    }

    /// The round a `coder-done` now would record into, and whether it opens it.
    pub fn coder_round_for_next(&self) -> (u32, bool) {
        match self.current_coder_round() {
            Some(n) if !self.is_reviewed(n) => (n, false),
            Some(n) => (n + 1, true),
            None => (1, true),
        }
    }
}
