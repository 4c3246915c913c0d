//! The manifest: the projection of a run's records, computed by one fold ([`Manifest::apply`]),
//! plus the loop's rules that read it (`next_action`, what may be recorded next).

use serde::{Deserialize, Serialize};

use super::checkpoint::{CheckpointState, LatestCheckpoint};
use super::record::{Body, Coder, Finding, Record, Runner, SCHEMA_VERSION, Verdict};

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
}

/// One agent session of the run and its latest stored cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSpend {
    /// `coder` or `reviewer`.
    pub role: String,
    /// The tool that ran it (`claude`, `codex`, …).
    pub agent: String,
    /// USD as last measured (0 until measured).
    #[serde(default)]
    pub usd: f64,
}

/// A review dispatched and not yet answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingReview {
    pub dispatch: String,
    pub round: u32,
    pub at: String,
    /// The process that dispatched it, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<Runner>,
}

/// What the projection cannot know by itself, observed when a command runs: the spend as
/// measured now, and whether the process of a pending review is still alive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observed {
    /// The budget is spent (live measurement, or the stored one).
    pub budget_alert: bool,
    /// The pending review's process is alive right now.
    pub review_running: bool,
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
    #[serde(rename = "resume:review")]
    ResumeReview,
    #[serde(rename = "wait:review")]
    WaitReview,
    #[serde(rename = "done")]
    Done,
}

impl NextAction {
    /// Every value, for documentation and for the skill's coverage test.
    pub const ALL: [NextAction; 9] = [
        NextAction::Code,
        NextAction::Review,
        NextAction::Finish,
        NextAction::StopRoundCap,
        NextAction::StopBudget,
        NextAction::StopStalled,
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
    /// The settings the run owns, by `set` key (flags to `start`, `git pair set`); every
    /// other setting follows `git config` when used. `None` for runs started before that:
    /// all their settings belong to the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_settings: Option<std::collections::BTreeMap<String, serde_json::Value>>,
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

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The settings a run can own (`start` flags, `git pair set`), by `set` key.
pub const SETTING_KEYS: [&str; 6] = [
    "reviewer",
    "reviewers",
    "coder",
    "max-rounds",
    "budget-usd",
    "review-timeout",
];

/// A rule of the loop refused what was asked; nothing is recorded. The message names what
/// was refused; the command layer adds the way on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("run {run_id} is finished")]
    Finished { run_id: String },
    #[error("run {run_id} was finished meanwhile")]
    FinishedMeanwhile { run_id: String },
    #[error("run {run_id} is already finished")]
    AlreadyFinished { run_id: String },
    #[error(
        "round cap reached: run {run_id} allows {max_rounds} rounds, and round {max_rounds} has been reviewed"
    )]
    RoundCap { run_id: String, max_rounds: u32 },
    #[error("nothing to review yet in run {run_id}")]
    NothingToReview { run_id: String },
    #[error("round {round} of run {run_id} was already reviewed")]
    AlreadyReviewed { run_id: String, round: u32 },
    #[error("run {run_id} has no approving last review (last verdict: {last})")]
    NotApproved { run_id: String, last: String },
    #[error("run {run_id} already has PR #{number}; a run never gets a second PR")]
    SecondPr { run_id: String, number: u64 },
    #[error("nothing to review in run {run_id}: the work tree equals the base ({base})")]
    EmptyChange { run_id: String, base: String },
    #[error("--responses names finding {finding}, but the last review's open findings are {open}")]
    UnknownFinding { finding: u32, open: String },
    #[error(
        "--findings-addressed {claimed} is more than the {open} open finding(s) of the last review"
    )]
    TooManyAddressed { claimed: u32, open: u32 },
    #[error("branch '{branch}' already has an unfinished run, {run_id}")]
    UnfinishedRun { run_id: String, branch: String },
    #[error("a review of run {run_id} is running right now (git pair review, pid {pid} on {host})")]
    ReviewRunning {
        run_id: String,
        host: String,
        pid: u32,
    },
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
            conflicts: Vec::new(),
            records: 0,
            last_seq: 0,
            last_record: None,
            checkpoint: None,
            compactions: 0,
            extra: serde_json::Map::new(),
        }
    }

    /// Projects `records` (in stored order: by seq, then file name) from scratch.
    pub fn project<'a>(records: impl IntoIterator<Item = &'a Record>) -> Self {
        let mut manifest = Manifest::empty();
        for record in records {
            manifest.apply(record);
        }
        manifest
    }

    /// Folds one record into the projection. The only place the projection is computed.
    pub fn apply(&mut self, record: &Record) {
        if let Some(previous) = self
            .last_record
            .as_ref()
            .filter(|_| record.seq == self.last_seq && self.records > 0)
        {
            self.conflicts.push(format!(
                "{} and {} were recorded concurrently at position {}",
                previous,
                record.file_name(),
                record.seq
            ));
        }
        self.records += 1;
        self.last_seq = self.last_seq.max(record.seq);
        self.last_record = Some(record.file_name());
        match &record.body {
            Body::Start(start) => {
                self.run_id = start.run_id.clone();
                self.task = start.task.clone();
                self.cwd = start.cwd.clone();
                self.branch = start.branch.clone();
                self.base = start.base;
                self.coder = start.coder.clone();
                self.reviewer = start.reviewer.clone();
                self.max_rounds = start.max_rounds;
                self.budget_usd = start.budget_usd;
                if let Some(ratio) = start
                    .config
                    .get("pair.budgetWarnRatio")
                    .and_then(serde_json::Value::as_f64)
                {
                    self.budget_warn_ratio = ratio;
                }
                self.run_settings = start.flags.as_ref().map(|flags| {
                    flags
                        .iter()
                        .filter_map(|key| Some((key.clone(), self.setting_value(key)?)))
                        .collect()
                });
                self.created_at = record.at.clone();
            }
            Body::Coder(coder) => {
                if let Some(id) = &coder.session_id {
                    self.register_session(id, "coder", &coder.tool);
                }
                let open = self.current_coder_round().filter(|&n| !self.is_reviewed(n));
                match open.and_then(|n| self.entry_mut(n, Role::Coder)) {
                    Some(entry) => {
                        entry.ended_at = record.at.clone();
                        entry.summaries = Some(entry.summaries.unwrap_or(1).saturating_add(1));
                        // Saturating: a damaged record must not overflow the fold.
                        if coder.findings_addressed.is_some() {
                            entry.findings_addressed = Some(
                                entry
                                    .findings_addressed
                                    .unwrap_or(0)
                                    .saturating_add(coder.findings_addressed.unwrap_or(0)),
                            );
                        }
                        if entry.session_id.is_none() {
                            entry.session_id = coder.session_id.clone();
                        }
                    }
                    None => {
                        let n = self.current_coder_round().unwrap_or(0) + 1;
                        let started_at = self
                            .rounds
                            .last()
                            .map(|e| e.ended_at.clone())
                            .unwrap_or_else(|| self.created_at.clone());
                        self.rounds.push(RoundEntry {
                            n,
                            role: Role::Coder,
                            tool: coder.tool.clone(),
                            session_id: coder.session_id.clone(),
                            started_at,
                            ended_at: record.at.clone(),
                            findings: 0,
                            findings_addressed: coder.findings_addressed,
                            verdict: None,
                            outcome: None,
                            cost_usd: None,
                            summaries: Some(1),
                            open_findings_digest: None,
                        });
                    }
                }
            }
            Body::ReviewDispatch(dispatch) => {
                self.pending_review = Some(PendingReview {
                    dispatch: record.id.clone(),
                    round: dispatch.round,
                    at: record.at.clone(),
                    runner: dispatch.runner.clone(),
                });
            }
            Body::Review(review) => {
                let started_at = match &self.pending_review {
                    Some(p) if p.dispatch == review.dispatch => p.at.clone(),
                    _ => record.at.clone(),
                };
                if self
                    .pending_review
                    .as_ref()
                    .is_some_and(|p| p.dispatch == review.dispatch)
                {
                    self.pending_review = None;
                }
                if review.fallback_used {
                    self.reviewer_fallback = true;
                }
                for attempt in &review.reviewers {
                    if let Some(id) = &attempt.session_id {
                        self.register_session(id, "reviewer", &attempt.tool);
                    }
                }
                let open_findings_digest = (review.verdict == Some(Verdict::ChangesRequested))
                    .then(|| findings_digest(&review.findings));
                self.rounds.push(RoundEntry {
                    n: review.round,
                    role: Role::Reviewer,
                    tool: review.tool.clone(),
                    session_id: review.reviewers.iter().find_map(|r| r.session_id.clone()),
                    started_at,
                    ended_at: record.at.clone(),
                    findings: u32::try_from(review.findings.len()).unwrap_or(u32::MAX),
                    findings_addressed: None,
                    verdict: review.verdict,
                    outcome: Some(review.outcome.clone()),
                    cost_usd: None,
                    summaries: None,
                    open_findings_digest,
                });
            }
            Body::Cost(cost) => {
                let previous = self.sessions.get(&cost.session_id).map_or(0.0, |s| s.usd);
                // A lower figure means logs were lost since the last measurement: the
                // stored one stands.
                let growth = cost.usd - previous;
                if growth > 0.0 {
                    self.spent_usd += growth;
                    self.sessions.insert(
                        cost.session_id.clone(),
                        SessionSpend {
                            role: cost.role.clone(),
                            agent: cost.agent.clone(),
                            usd: cost.usd,
                        },
                    );
                    let role = if cost.role == "reviewer" {
                        Role::Reviewer
                    } else {
                        Role::Coder
                    };
                    if let Some(entry) = self
                        .rounds
                        .iter_mut()
                        .rev()
                        .find(|e| e.n == cost.round && e.role == role)
                    {
                        entry.cost_usd = Some(entry.cost_usd.unwrap_or(0.0) + growth);
                    }
                }
            }
            Body::Finish(finish) => {
                self.outcome = Outcome {
                    verdict: Some(finish.verdict),
                    rounds: self.current_coder_round().unwrap_or(0),
                    override_: finish.override_,
                    abandoned: false,
                };
                if finish.pr.is_some() {
                    self.pr = finish.pr;
                }
            }
            Body::Pr { number } => self.pr = Some(*number),
            Body::Set(set) => {
                if self.run_settings.is_none() {
                    // A run from before settings could follow configuration owns all of
                    // them; from now on it records which.
                    let owned = SETTING_KEYS
                        .iter()
                        .filter_map(|key| Some(((*key).to_owned(), self.setting_value(key)?)))
                        .collect();
                    self.run_settings = Some(owned);
                }
                let settings = self.run_settings.get_or_insert_with(Default::default);
                match &set.value {
                    Some(value) => {
                        settings.insert(set.key.clone(), value.clone());
                        self.set_value(&set.key, value);
                    }
                    None => {
                        settings.remove(&set.key);
                    }
                }
            }
            Body::Abandon(_) => {
                self.outcome = Outcome {
                    verdict: None,
                    rounds: self.current_coder_round().unwrap_or(0),
                    override_: false,
                    abandoned: true,
                };
            }
            Body::Checkpoint(checkpoint) => {
                self.checkpoint = Some(LatestCheckpoint {
                    id: checkpoint.checkpoint.clone(),
                    assessment: checkpoint.assessment,
                    state: CheckpointState::Unverified,
                });
            }
            Body::CheckpointVerified(verified) => {
                if let Some(latest) = self
                    .checkpoint
                    .as_mut()
                    .filter(|c| c.id == verified.checkpoint)
                {
                    latest.state = latest.state.after_verification(verified.result);
                }
            }
            Body::CheckpointArchived(archived) => {
                if let Some(latest) = self
                    .checkpoint
                    .as_mut()
                    .filter(|c| c.id == archived.checkpoint)
                {
                    latest.state = CheckpointState::Archived;
                }
                self.compactions = 0;
            }
            Body::Compaction(_) => self.compactions = self.compactions.saturating_add(1),
            Body::AllowSecret(_) | Body::Unknown { .. } => {}
        }
        self.next_action = self.next_action(Observed {
            budget_alert: self.stored_budget_alert(),
            review_running: false,
        });
    }

    /// The highest coder round, if any.
    pub fn current_coder_round(&self) -> Option<u32> {
        self.rounds
            .iter()
            .filter(|e| e.role == Role::Coder)
            .map(|e| e.n)
            .max()
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

    /// Whether coder round `n` has a completed review (failed reviews use no round).
    pub fn is_reviewed(&self, n: u32) -> bool {
        self.rounds
            .iter()
            .any(|e| e.role == Role::Reviewer && e.n == n && e.verdict.is_some())
    }

    /// Whether the run was closed: finished with a verdict, or abandoned.
    pub fn is_finished(&self) -> bool {
        self.outcome.verdict.is_some() || self.outcome.abandoned
    }

    /// A run setting's value as the manifest holds it (`reviewers` and `review-timeout` only
    /// when the run owns them).
    pub fn setting_value(&self, key: &str) -> Option<serde_json::Value> {
        match key {
            "reviewer" => Some(self.reviewer.clone().into()),
            "coder" => Some(self.coder.clone().into()),
            "max-rounds" => Some(self.max_rounds.into()),
            "budget-usd" => Some(self.budget_usd.into()),
            _ => self.run_settings.as_ref().and_then(|s| s.get(key).cloned()),
        }
    }

    fn set_value(&mut self, key: &str, value: &serde_json::Value) {
        match key {
            "reviewer" => {
                if let Some(v) = value.as_str() {
                    self.reviewer = v.to_owned();
                }
            }
            "coder" => {
                if let Some(v) = value.as_str() {
                    self.coder = v.to_owned();
                }
            }
            "max-rounds" => {
                if let Some(v) = value.as_u64().and_then(|v| u32::try_from(v).ok()) {
                    self.max_rounds = v;
                }
            }
            "budget-usd" => self.budget_usd = value.as_f64(),
            _ => {}
        }
    }

    /// Adds an agent session to the run's sessions (cost 0 until measured), once.
    pub fn register_session(&mut self, id: &str, role: &str, agent: &str) {
        self.sessions
            .entry(id.to_owned())
            .or_insert_with(|| SessionSpend {
                role: role.to_owned(),
                agent: agent.to_owned(),
                usd: 0.0,
            });
    }

    fn entry_mut(&mut self, n: u32, role: Role) -> Option<&mut RoundEntry> {
        self.rounds
            .iter_mut()
            .rev()
            .find(|e| e.n == n && e.role == role)
    }

    fn stored_budget_alert(&self) -> bool {
        self.budget_usd
            .is_some_and(|limit| limit > 0.0 && self.spent_usd >= limit)
    }

    /// Whether the last two completed reviews asked for changes on the same open findings.
    pub fn is_stalled(&self) -> bool {
        let mut reviews = self
            .rounds
            .iter()
            .rev()
            .filter(|e| e.role == Role::Reviewer && e.verdict.is_some());
        match (reviews.next(), reviews.next()) {
            (Some(last), Some(before)) => {
                last.n != before.n
                    && last.open_findings_digest.is_some()
                    && last.open_findings_digest == before.open_findings_digest
            }
            _ => false,
        }
    }

    /// What to do next (SPEC §5): the one function every command takes its next step from.
    /// When several hold, the first of `done`, `wait:review`, `resume:review`, `stop:budget`,
    /// `stop:round-cap`, `stop:stalled` wins, then the plain values.
    pub fn next_action(&self, observed: Observed) -> NextAction {
        if self.is_finished() {
            return NextAction::Done;
        }
        if self.pending_review.is_some() {
            return if observed.review_running {
                NextAction::WaitReview
            } else {
                NextAction::ResumeReview
            };
        }
        if observed.budget_alert || self.stored_budget_alert() {
            return NextAction::StopBudget;
        }
        let Some(round) = self.current_coder_round() else {
            return NextAction::Code;
        };
        if !self.is_reviewed(round) {
            return NextAction::Review;
        }
        match self.last_verdict() {
            Some(Verdict::Approved) => NextAction::Finish,
            // The reviewer's answer could not be read: review again, not "fix the findings".
            _ if self.last_review_failed_to_answer() => NextAction::Review,
            _ if round >= self.max_rounds => NextAction::StopRoundCap,
            _ if self.is_stalled() => NextAction::StopStalled,
            _ => NextAction::Code,
        }
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

/// Every coder record of `records` (in stored order) with the round it belongs to.
pub fn coder_rounds(records: &[Record]) -> Vec<(u32, &Record, &Coder)> {
    let mut projection: Option<Manifest> = None;
    let mut out = Vec::new();
    for record in records {
        let needs_fold =
            projection.is_some() || matches!(&record.body, Body::Coder(c) if c.round.is_none());
        if needs_fold {
            // Only old records lack the round: fold from the start once one is met.
            let manifest = projection.get_or_insert_with(|| {
                Manifest::project(records.iter().take_while(|r| r.id != record.id))
            });
            manifest.apply(record);
        }
        if let Body::Coder(coder) = &record.body {
            let round = coder
                .round
                .or_else(|| projection.as_ref().and_then(Manifest::current_coder_round));
            out.push((round.unwrap_or(1), record, coder));
        }
    }
    out
}

/// Refuses a `coder-done` the loop's rules do not allow.
pub fn check_coder_done(manifest: &Manifest, extra_round: bool) -> Result<(), Refusal> {
    if manifest.is_finished() {
        return Err(Refusal::Finished {
            run_id: manifest.run_id.clone(),
        });
    }
    let (round, opens) = manifest.coder_round_for_next();
    if opens && round > manifest.max_rounds && !extra_round {
        return Err(Refusal::RoundCap {
            run_id: manifest.run_id.clone(),
            max_rounds: manifest.max_rounds,
        });
    }
    Ok(())
}

/// Refuses a `review` the loop's rules do not allow.
pub fn check_review(manifest: &Manifest, again: bool) -> Result<(), Refusal> {
    if manifest.is_finished() {
        return Err(Refusal::Finished {
            run_id: manifest.run_id.clone(),
        });
    }
    let Some(round) = manifest.current_coder_round() else {
        return Err(Refusal::NothingToReview {
            run_id: manifest.run_id.clone(),
        });
    };
    if manifest.is_reviewed(round) && !again && !manifest.last_review_failed_to_answer() {
        return Err(Refusal::AlreadyReviewed {
            run_id: manifest.run_id.clone(),
            round,
        });
    }
    Ok(())
}

/// Refuses a `finish` the loop's rules do not allow.
pub fn check_finish(manifest: &Manifest, verdict: Verdict, force: bool) -> Result<(), Refusal> {
    if manifest.is_finished() {
        return Err(Refusal::AlreadyFinished {
            run_id: manifest.run_id.clone(),
        });
    }
    if verdict == Verdict::Approved && manifest.last_verdict() != Some(Verdict::Approved) && !force
    {
        return Err(Refusal::NotApproved {
            run_id: manifest.run_id.clone(),
            last: manifest
                .last_verdict()
                .map_or("none", Verdict::as_str)
                .to_owned(),
        });
    }
    Ok(())
}

/// A digest of findings that ignores numbering, case and whitespace, so the same open
/// findings reported twice compare equal.
fn findings_digest(findings: &[Finding]) -> String {
    let mut lines: Vec<String> = findings
        .iter()
        .map(|f| {
            let text = f.text.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("{}|{}", f.category.to_lowercase(), text.to_lowercase())
        })
        .collect();
    lines.sort();
    let mut hasher = sha1_smol::Sha1::new();
    for line in &lines {
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
    }
    let mut digest = hasher.digest().to_string();
    digest.truncate(16);
    digest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::{Coder, Review, ReviewDispatch, Start};

    fn rec(seq: u64, body: Body) -> Record {
        Record::new(seq, format!("2026-11-29T23:{:02}:00Z", seq % 60), body)
    }

    fn start(max_rounds: u32) -> Body {
        Body::Start(Start {
            run_id: "20261129-231500-a1b2c3".into(),
            task: "t".into(),
            cwd: "/w".into(),
            branch: "main".into(),
            base: Some(crate::model::CommitId::parse(&"0".repeat(40)).expect("hex")),
            coder: "claude".into(),
            reviewer: "codex".into(),
            max_rounds,
            budget_usd: None,
            config: Default::default(),
            flags: None,
        })
    }

    fn coder(summary: &str) -> Body {
        Body::Coder(Coder {
            summary: summary.into(),
            tool: "claude".into(),
            findings_addressed: None,
            session_id: None,
            responses: vec![],
            extra_round: false,
            round: None,
        })
    }

    fn review(dispatch: &str, round: u32, verdict: Option<Verdict>, findings: &[&str]) -> Body {
        Body::Review(Review {
            dispatch: dispatch.into(),
            round,
            verdict,
            outcome: if verdict.is_some() {
                "completed"
            } else {
                "died"
            }
            .into(),
            tool: "codex".into(),
            findings: findings
                .iter()
                .enumerate()
                .map(|(i, t)| Finding {
                    n: i as u32 + 1,
                    category: "bug".into(),
                    severity: None,
                    location: String::new(),
                    text: (*t).into(),
                })
                .collect(),
            reviewers: vec![],
            fallback_used: false,
            snapshot: None,
            coverage_warning: None,
            error: None,
        })
    }

    #[test]
    fn the_loop_moves_through_next_actions() {
        let mut m = Manifest::empty();
        m.apply(&rec(1, start(2)));
        assert_eq!(m.next_action, NextAction::Code);
        m.apply(&rec(2, coder("one")));
        assert_eq!(m.next_action, NextAction::Review);
        let dispatch = rec(
            3,
            Body::ReviewDispatch(ReviewDispatch {
                round: 1,
                reviewers: vec!["codex".into()],
                snapshot: crate::model::TreeId::parse(&"1".repeat(40)).expect("hex"),
                mode: "code".into(),
                again: false,
                runner: None,
                redacted: Vec::new(),
            }),
        );
        m.apply(&dispatch);
        assert_eq!(m.next_action, NextAction::ResumeReview);
        m.apply(&rec(
            4,
            review(&dispatch.id, 1, Some(Verdict::ChangesRequested), &["a"]),
        ));
        assert_eq!(m.next_action, NextAction::Code);
        m.apply(&rec(5, coder("two")));
        m.apply(&rec(
            6,
            review("x", 2, Some(Verdict::ChangesRequested), &["b"]),
        ));
        assert_eq!(m.next_action, NextAction::StopRoundCap);
        assert_eq!(m.rounds.len(), 4);
        assert_eq!(m.rounds[2].n, 2);
    }

    #[test]
    fn findings_addressed_in_one_round_saturate_instead_of_overflowing() {
        // Found by the `manifest_project` fuzz target: the sum overflowed (a panic with
        // overflow checks, a wrap to a small count without).
        let addressed = |n: u32| {
            let Body::Coder(mut c) = coder("again") else {
                unreachable!("coder() builds a coder record")
            };
            c.findings_addressed = Some(n);
            Body::Coder(c)
        };
        let m = Manifest::project(&[
            rec(1, start(2)),
            rec(2, addressed(u32::MAX)),
            rec(3, addressed(7)),
        ]);
        assert_eq!(m.rounds[0].findings_addressed, Some(u32::MAX));
        assert_eq!(m.rounds[0].summaries, Some(2));
    }

    #[test]
    fn a_second_coder_done_before_review_adds_to_the_round() {
        let m = Manifest::project(&[rec(1, start(5)), rec(2, coder("a")), rec(3, coder("b"))]);
        assert_eq!(m.rounds.len(), 1);
        assert_eq!(m.rounds[0].summaries, Some(2));
        assert_eq!(m.coder_round_for_next(), (1, false));
    }

    #[test]
    fn a_failed_review_uses_no_round() {
        let m = Manifest::project(&[
            rec(1, start(5)),
            rec(2, coder("a")),
            rec(3, review("d", 1, None, &[])),
        ]);
        assert_eq!(m.next_action, NextAction::Review);
        assert_eq!(m.coder_round_for_next(), (1, false));
    }

    #[test]
    fn the_same_open_findings_twice_is_a_stall() {
        let m = Manifest::project(&[
            rec(1, start(5)),
            rec(2, coder("a")),
            rec(
                3,
                review(
                    "d",
                    1,
                    Some(Verdict::ChangesRequested),
                    &["Leaks  a handle"],
                ),
            ),
            rec(4, coder("b")),
            rec(
                5,
                review("e", 2, Some(Verdict::ChangesRequested), &["leaks a handle"]),
            ),
        ]);
        assert_eq!(m.next_action, NextAction::StopStalled);
    }

    #[test]
    fn approval_leads_to_finish_then_done() {
        let mut m = Manifest::project(&[
            rec(1, start(5)),
            rec(2, coder("a")),
            rec(3, review("d", 1, Some(Verdict::Approved), &[])),
        ]);
        assert_eq!(m.next_action, NextAction::Finish);
        assert!(check_finish(&m, Verdict::Approved, false).is_ok());
        m.apply(&rec(
            4,
            Body::Finish(crate::model::Finish {
                verdict: Verdict::Approved,
                override_: false,
                pr: None,
            }),
        ));
        assert_eq!(m.next_action, NextAction::Done);
        assert!(check_coder_done(&m, false).is_err());
    }

    #[test]
    fn round_cap_refuses_coder_done_without_extra_round() {
        let m = Manifest::project(&[
            rec(1, start(1)),
            rec(2, coder("a")),
            rec(3, review("d", 1, Some(Verdict::ChangesRequested), &["x"])),
        ]);
        let refusal = check_coder_done(&m, false).expect_err("capped");
        assert!(refusal.to_string().contains("round cap"));
        assert!(check_coder_done(&m, true).is_ok());
    }

    #[test]
    fn review_needs_an_unreviewed_coder_round() {
        let m = Manifest::project(&[rec(1, start(5))]);
        assert!(check_review(&m, false).is_err());
        let m = Manifest::project(&[
            rec(1, start(5)),
            rec(2, coder("a")),
            rec(3, review("d", 1, Some(Verdict::ChangesRequested), &["x"])),
        ]);
        assert!(check_review(&m, false).is_err());
        assert!(check_review(&m, true).is_ok());
    }

    #[test]
    fn concurrent_records_are_flagged_not_dropped() {
        let m = Manifest::project(&[rec(1, start(5)), rec(2, coder("a")), rec(2, coder("b"))]);
        assert_eq!(m.records, 3);
        assert_eq!(m.conflicts.len(), 1);
        assert_eq!(m.rounds[0].summaries, Some(2));
    }

    #[test]
    fn manifest_round_trips_and_keeps_unknown_fields() {
        let m = Manifest::project(&[rec(1, start(5)), rec(2, coder("a"))]);
        let mut value = serde_json::to_value(&m).expect("serializes");
        value["from_the_future"] = serde_json::json!({"x": 1});
        let back: Manifest = serde_json::from_value(value).expect("parses");
        assert_eq!(back.extra["from_the_future"]["x"], 1);
        assert_eq!(back.rounds, m.rounds);
    }

    #[test]
    fn next_action_values_are_the_documented_ones() {
        let values: Vec<_> = NextAction::ALL.iter().map(|a| a.as_str()).collect();
        for a in NextAction::ALL {
            assert_eq!(serde_json::to_value(a).expect("ser"), a.as_str());
        }
        assert_eq!(values.len(), 9);
    }
}
