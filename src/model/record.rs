//! Immutable records: one stored fact each, serialized as one JSON document with `"v": 1`.

use serde::{Deserialize, Serialize};

use super::checkpoint::{Checkpoint, CheckpointArchived, CheckpointVerified, Compaction};
use super::ids::{CommitId, TreeId};

/// The schema version every stored JSON document carries as `"v"`.
pub const SCHEMA_VERSION: u32 = 1;

/// A reviewer's verdict. Anything else is not a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// Nothing must change.
    Approved,
    /// At least one thing must change (also what `REVISE` means).
    ChangesRequested,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Verdict {
    /// The verdict as the answer contract spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approved => "APPROVED",
            Verdict::ChangesRequested => "CHANGES_REQUESTED",
        }
    }

    /// Parses the contract spelling (`REVISE` reads as CHANGES_REQUESTED).
    pub fn parse(s: &str) -> Option<Verdict> {
        match s {
            "APPROVED" => Some(Verdict::Approved),
            "CHANGES_REQUESTED" | "REVISE" => Some(Verdict::ChangesRequested),
            _ => None,
        }
    }
}

/// How much harm a finding names; stored as `critical|high|medium|low`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Data loss, security breach, or the change cannot work at all.
    Critical,
    /// Wrong behaviour users will hit.
    High,
    /// Wrong behaviour in a corner, or a missing safeguard.
    Medium,
    /// Worth fixing, harmless meanwhile.
    Low,
}

impl Severity {
    /// Every severity, most harmful first.
    pub const ALL: [Severity; 4] = [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
    ];

    /// The contract spelling (`critical`, `high`, `medium`, `low`), as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
        }
    }

    /// Parses a severity in any letter case (`High`, `LOW`), as reviewers write it in text.
    pub fn parse(s: &str) -> Option<Severity> {
        Severity::ALL
            .into_iter()
            .find(|severity| severity.as_str().eq_ignore_ascii_case(s))
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One numbered finding of a review: what the answer parsers produce and what is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Position in the answer, renumbered 1, 2, 3… in order of appearance.
    pub n: u32,
    /// The bracketed category (`correctness`, `security`, …), as the reviewer wrote it.
    pub category: String,
    /// The severity tag, or null when the reviewer gave none.
    pub severity: Option<Severity>,
    /// `path:line` or `path`; `""` when the finding names no location.
    #[serde(default)]
    pub location: String,
    /// What fails, its impact and the fix.
    pub text: String,
}

impl Finding {
    /// Whether this finding forbids an approval (SPEC §6.3: approve if no findings or all
    /// low/medium; revise on any high or critical): a high or critical severity, or the
    /// `[secret]`/`[process]` categories, whoever wrote them.
    pub fn blocks_approval(&self) -> bool {
        matches!(self.severity, Some(Severity::High | Severity::Critical))
            || ["secret", "process"]
                .iter()
                .any(|c| self.category.trim().eq_ignore_ascii_case(c))
    }
}

/// What the coder says about one open finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseStatus {
    Addressed,
    Deferred,
    Disputed,
}

/// The coder's response to finding `finding` of the previous review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub finding: u32,
    pub status: ResponseStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The run started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Start {
    pub run_id: String,
    pub task: String,
    pub cwd: String,
    pub branch: String,
    /// The base commit id; null when the run starts on an unborn branch.
    pub base: Option<CommitId>,
    pub coder: String,
    pub reviewer: String,
    pub max_rounds: u32,
    pub budget_usd: Option<f64>,
    /// The `pair.*` configuration in force at start, as given.
    #[serde(default)]
    pub config: serde_json::Map<String, serde_json::Value>,
    /// The settings given as flags to `start` (by `set` key, e.g. `reviewer`): they belong
    /// to the run; every other setting follows `git config` when used. Absent in runs
    /// started before settings could follow configuration: all of theirs belong to the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<Vec<String>>,
    /// The clone that started the run recorded it as its own in a local ref that never
    /// travels (`refs/pair-local/owned/<run>`): only that clone, and clones that adopt the run,
    /// make it their active run. False (absent) in runs started before runs belonged to a
    /// clone; those belong to the clone whose work tree they were started in.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub claimed: bool,
    /// The base commit's tree. The run does not carry its base commit (push publishes no
    /// project history), so `verify` on a clone that lacks the base still knows what the
    /// reviewer saw on the "before" side. Absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_tree: Option<super::ids::TreeId>,
    /// The run only carries a checkpoint made with no run active (SPEC §10): no loop runs in
    /// it, and it is never a branch's active run, the commit gate's or the Stop hook's
    /// subject. Absent (false) in every run `start` creates.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub carrier: bool,
}

/// `git pair set`: a run's own setting changed (`value`) or handed back to `git config`
/// (`None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetSetting {
    /// The `set` key: `reviewer`, `reviewers`, `coder`, `max-rounds`, `budget-usd`,
    /// `review-timeout`.
    pub key: String,
    pub value: Option<serde_json::Value>,
}

/// `git pair abandon`: the run is closed without a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Abandon {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The coder finished (part of) a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Coder {
    pub summary: String,
    pub tool: String,
    #[serde(default)]
    pub findings_addressed: Option<u32>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub responses: Vec<Response>,
    #[serde(default)]
    pub extra_round: bool,
    /// The coder round this record belongs to. Records written before it was stored have
    /// none: [`coder_rounds`] then derives it by projecting the records in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
}

/// A review was dispatched; written before any reviewer is spawned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewDispatch {
    pub round: u32,
    pub reviewers: Vec<String>,
    /// The tree id of the reviewed snapshot.
    pub snapshot: TreeId,
    #[serde(default)]
    pub mode: String,
    #[serde(default)]
    pub again: bool,
    /// The `git pair review` process that dispatched it, to tell a running review from one
    /// whose process died. Absent in records written before it was stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<Runner>,
    /// Secrets found in the change and redacted from the packet sent (kind, path, line;
    /// never the secret): each becomes a blocking `[secret]` finding of the round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<SecretAt>,
    /// Dispatched with `--over-budget`: the run's budget was spent and the user chose to go
    /// on with a reviewer that costs money (SPEC §5). Shown in the PR body.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub over_budget: bool,
    /// How many of its reviewers run at once and which limit binds (SPEC §6.4). Absent in
    /// records written before it was stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<PanelLimit>,
    /// Reviewers (by name) that already finished with a verdict under the interrupted
    /// dispatch this one resumes: their results are kept, they are not run again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub carried: Vec<String>,
}

/// A panel's effective parallel cap, `min(reviewers, pair.maxParallel, each surface's
/// ceiling)`, and which of those binds (`reviewers`, `maxParallel`, `<realization> ceiling`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PanelLimit {
    pub limit: usize,
    pub bound_by: String,
}

/// One panel member's finished part of a dispatched review, stored the moment it finishes
/// (before its siblings do), so a review resumed after an interruption keeps it and does not
/// run that reviewer again (SPEC §6.4). Its attempts, raw output included, are stored beside
/// it; the round's `review` record still carries every member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewMember {
    /// The id of the dispatch record it answers for.
    pub dispatch: String,
    pub round: u32,
    /// Its place in the dispatch's `reviewers`.
    pub slot: u32,
    pub result: ReviewAttempt,
    #[serde(default)]
    pub findings: Vec<Finding>,
    #[serde(default)]
    pub fallback_used: bool,
}

/// Where a secret was found, as recorded: its kind, path and line, never the secret.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SecretAt {
    pub kind: String,
    pub path: String,
    /// 1-based line; 0 when not known.
    #[serde(default)]
    pub line: usize,
}

/// `push --allow-secret <kind>:<path>`: findings of that kind at that path are a known false
/// positive of this run and may be published. Recorded so the allowance stays visible.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllowSecret {
    pub allowed: Vec<Allowance>,
}

/// One allowance: a kind of secret at a path (any line).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Allowance {
    pub kind: String,
    pub path: String,
}

impl std::fmt::Display for Allowance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.kind, self.path)
    }
}

/// A process as recorded: which machine, which pid, and when it started (so a later process
/// reusing the pid is not mistaken for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Runner {
    pub host: String,
    pub pid: u32,
    /// Kernel start time (clock ticks since boot), where the OS tells it.
    #[serde(default)]
    pub start_time: Option<u64>,
}

/// One reviewer's part of a review round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewAttempt {
    pub reviewer: String,
    pub tool: String,
    pub outcome: String,
    pub verdict: Option<Verdict>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub attempts: u32,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the reviewer's CLI itself said its session cost (`claude -p`'s
    /// `total_cost_usd`), when it printed a figure: the session is recorded at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// The outcome of a dispatched review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    /// The id of the dispatch record this answers.
    pub dispatch: String,
    pub round: u32,
    /// Null when the review failed (no verdict, no round used).
    pub verdict: Option<Verdict>,
    pub outcome: String,
    pub tool: String,
    #[serde(default)]
    pub findings: Vec<Finding>,
    #[serde(default)]
    pub reviewers: Vec<ReviewAttempt>,
    #[serde(default)]
    pub fallback_used: bool,
    /// The tree the review looked at; stored as `""` when none is recorded (then the
    /// snapshot stored for its round is the one).
    #[serde(default, with = "super::ids::empty_is_none")]
    pub snapshot: Option<TreeId>,
    /// "reviewed X of Y files" when coverage was partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage_warning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The model the reviewers were asked to use (`pair.reviewerModel`, `review --model`);
    /// absent: each CLI's own default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The reasoning effort they were asked for (`pair.reviewerEffort`, `review --effort`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
}

impl Review {
    /// Whether some file of the reviewed change reached no reviewer (its coverage was
    /// partial): an APPROVED verdict then is a partial approval, which opens no gate.
    pub fn is_partial(&self) -> bool {
        self.coverage_warning.is_some()
    }
}

/// A measurement of one agent session's cost within the run: cumulative for that session, so
/// a later measurement supersedes an earlier one and the growth in between is attributed to
/// the round during which it was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostEntry {
    /// The round the growth since the previous measurement is attributed to.
    pub round: u32,
    /// `coder` or `reviewer`.
    pub role: String,
    /// `claude` or `codex`.
    pub agent: String,
    pub session_id: String,
    /// USD of the session so far (coder sessions: inside the run's time window).
    pub usd: f64,
    /// Tokens by kind, as measured.
    #[serde(default)]
    pub tokens: serde_json::Value,
    /// Models with no price: their tokens are not in `usd`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_models: Vec<String>,
    /// The tokens of each model in `unknown_models`, by model id (token kinds as in
    /// `tokens`): kept so that a price file added later prices them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub unpriced: std::collections::BTreeMap<String, serde_json::Value>,
}

/// The run was closed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finish {
    pub verdict: Verdict,
    /// True when `--force` closed the run without an approving last review.
    #[serde(rename = "override")]
    pub override_: bool,
    #[serde(default)]
    pub pr: Option<u64>,
    /// `--accept-partial`: the user accepted an approval of a change some of which reached
    /// no reviewer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accept_partial: bool,
    /// The run's PR had its final review and round (`pair.prFinalRound`): recorded final.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pr_final: bool,
}

/// The final review of a run's PR as the remote has it (SPEC §11, `pair.prFinalRound`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrReview {
    pub number: u64,
    /// The coder round the PR holds: the one more round that addresses these findings is
    /// the next.
    pub round: u32,
    /// The PR's head and base commits as the remote had them, and their merge base: the
    /// review saw merge base → head.
    pub head: CommitId,
    pub base: CommitId,
    pub merge_base: CommitId,
    pub head_ref: String,
    pub base_ref: String,
    pub verdict: Verdict,
    /// The reviewer(s) that ran, joined with `+`.
    pub tool: String,
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// What was done on the PR: `posted` (a new comment) or `updated` (git pair's own).
    pub comment: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// The id of the `pr-dispatch` record this answers (absent in records written before
    /// the PR's review was dispatched first); its material is stored under
    /// `pr/<number>/<attempt>/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The remote the PR's commits were fetched from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// `completed`, or `failed-validation` when the verdict is the fail-closed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<ReviewAttempt>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fallback_used: bool,
}

/// The PR's final review dispatched (`review --pr N`), stored before any reviewer is spawned
/// with the packet it sends (`pr/<number>/<attempt>/`): what the reviewer is shown. Its
/// `dispatch` is what a coder round's dispatch records (its `snapshot` the PR head's tree).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrDispatch {
    pub number: u64,
    /// Which dispatch of this PR's final review it is, from 1: names its material's folder.
    pub attempt: u32,
    pub remote: String,
    pub head: CommitId,
    pub base: CommitId,
    pub merge_base: CommitId,
    pub head_ref: String,
    pub base_ref: String,
    #[serde(flatten)]
    pub dispatch: ReviewDispatch,
}

/// A dispatched PR final review that ended without a review on the PR: no verdict (the
/// reviewers failed), or one that could not be posted. Nothing was posted for it and it
/// counts for nothing; its attempts are stored beside it, as for a dispatch that succeeded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrReviewFailed {
    /// The id of the `pr-dispatch` record this answers.
    pub dispatch: String,
    pub number: u64,
    pub attempt: u32,
    pub round: u32,
    pub outcome: String,
    /// The verdict the reviewers gave when it was the posting that failed.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<ReviewAttempt>,
    pub error: String,
}

/// The payload of a record; `kind` names it in JSON and in the record's file name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Body {
    Start(Start),
    Coder(Coder),
    ReviewDispatch(ReviewDispatch),
    ReviewMember(ReviewMember),
    Review(Review),
    Cost(CostEntry),
    Finish(Finish),
    /// A PR number recorded after finish, or (`final_round`) recorded on an approved run
    /// whose PR gets its final review before `finish` (`pair.prFinalRound`).
    Pr {
        number: u64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        final_round: bool,
    },
    /// The PR's final review (`review --pr N`): its diff as the remote has it, reviewed, and
    /// the findings posted on the PR.
    PrReview(PrReview),
    /// The PR's final review dispatched, before its reviewers run.
    PrDispatch(PrDispatch),
    /// A dispatched PR final review that put nothing on the PR.
    PrReviewFailed(PrReviewFailed),
    Set(SetSetting),
    Abandon(Abandon),
    // Checkpoints (SPEC §10): a handoff packet, its verification and archiving, and an
    // observed context compaction.
    Checkpoint(Checkpoint),
    CheckpointVerified(CheckpointVerified),
    CheckpointArchived(CheckpointArchived),
    Compaction(Compaction),
    AllowSecret(AllowSecret),
    /// A kind this version does not know (written by a newer one); kept, not projected, and
    /// written back with the fields it was read with.
    #[serde(skip)]
    Unknown {
        kind: String,
        /// The record's fields other than the envelope (`v`, `id`, `seq`, `at`, `kind`).
        fields: serde_json::Map<String, serde_json::Value>,
    },
}

impl Body {
    /// The kind as written in JSON and file names.
    pub fn kind(&self) -> &str {
        match self {
            Body::Start(_) => "start",
            Body::Coder(_) => "coder",
            Body::ReviewDispatch(_) => "review-dispatch",
            Body::ReviewMember(_) => "review-member",
            Body::Review(_) => "review",
            Body::Cost(_) => "cost",
            Body::Finish(_) => "finish",
            Body::Pr { .. } => "pr",
            Body::PrReview(_) => "pr-review",
            Body::PrDispatch(_) => "pr-dispatch",
            Body::PrReviewFailed(_) => "pr-review-failed",
            Body::Set(_) => "set",
            Body::Abandon(_) => "abandon",
            Body::Checkpoint(_) => "checkpoint",
            Body::CheckpointVerified(_) => "checkpoint-verified",
            Body::CheckpointArchived(_) => "checkpoint-archived",
            Body::Compaction(_) => "compaction",
            Body::AllowSecret(_) => "allow-secret",
            Body::Unknown { kind, .. } => kind,
        }
    }
}

/// One stored fact of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Unique id (12 hex); two writers never produce the same record.
    pub id: String,
    /// Position in the run: one more than the highest seq the writer saw.
    pub seq: u64,
    /// When it was recorded, RFC 3339 UTC.
    pub at: String,
    pub body: Body,
}

/// Why stored bytes are not a record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("record is not valid JSON: {source}")]
    Json {
        #[source]
        source: serde_json::Error,
    },
    #[error("record has schema version {found}, this git-pair reads version {SCHEMA_VERSION}")]
    Version { found: u64 },
    #[error("record is missing its {field}")]
    Missing { field: &'static str },
    #[error("record is {bytes} bytes, more than the {MAX_RECORD_BYTES} a record may be")]
    TooLarge { bytes: usize },
}

/// The most a stored record may weigh: records are small facts (the bulky material lives
/// beside them); a bigger one was not written by git pair and is refused unread.
pub const MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;

#[derive(Serialize)]
struct EnvelopeOut<'a> {
    v: u32,
    id: &'a str,
    seq: u64,
    at: &'a str,
    #[serde(flatten)]
    body: &'a Body,
}

/// The stored form of a record of a kind this version does not know.
#[derive(Serialize)]
struct UnknownOut<'a> {
    v: u32,
    id: &'a str,
    seq: u64,
    at: &'a str,
    kind: &'a str,
    #[serde(flatten)]
    fields: &'a serde_json::Map<String, serde_json::Value>,
}

/// The keys every record has, outside its body.
const ENVELOPE: [&str; 5] = ["v", "id", "seq", "at", "kind"];

impl Record {
    /// Makes a new record with a fresh id.
    pub fn new(seq: u64, at: String, body: Body) -> Self {
        Record {
            id: crate::util::unique_hex(12),
            seq,
            at,
            body,
        }
    }

    /// The file name inside `records/`: `<seq>-<kind>-<id>.json`.
    pub fn file_name(&self) -> String {
        format!("{:06}-{}-{}.json", self.seq, self.body.kind(), self.id)
    }

    /// Serializes to the stored form (compact JSON with a trailing newline). A record of a
    /// kind this version does not know is written with the fields it was read with.
    pub fn to_json(&self) -> Vec<u8> {
        let written = match &self.body {
            Body::Unknown { kind, fields } => serde_json::to_vec(&UnknownOut {
                v: SCHEMA_VERSION,
                id: &self.id,
                seq: self.seq,
                at: &self.at,
                kind,
                fields,
            }),
            body => serde_json::to_vec(&EnvelopeOut {
                v: SCHEMA_VERSION,
                id: &self.id,
                seq: self.seq,
                at: &self.at,
                body,
            }),
        };
        let mut out = written.expect("records serialize: all keys are strings");
        out.push(b'\n');
        out
    }

    /// Parses the stored form; a kind unknown to this version becomes [`Body::Unknown`].
    pub fn from_json(bytes: &[u8]) -> Result<Self, RecordError> {
        if bytes.len() > MAX_RECORD_BYTES {
            return Err(RecordError::TooLarge { bytes: bytes.len() });
        }
        match Self::from_json_direct(bytes) {
            Some(record) => Ok(record),
            None => Self::from_json_careful(bytes),
        }
    }

    /// Every record through a `serde_json::Value`: the envelope's fields checked one by one
    /// (naming the one missing), an unknown kind kept as [`Body::Unknown`].
    fn from_json_careful(bytes: &[u8]) -> Result<Self, RecordError> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|source| RecordError::Json { source })?;
        let version = value
            .get("v")
            .and_then(serde_json::Value::as_u64)
            .ok_or(RecordError::Missing { field: "\"v\"" })?;
        if version != u64::from(SCHEMA_VERSION) {
            return Err(RecordError::Version { found: version });
        }
        let text = |field: &'static str| {
            value
                .get(field)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
                .ok_or(RecordError::Missing { field })
        };
        let id = text("id")?;
        let at = text("at")?;
        let kind = text("kind")?;
        let seq = value
            .get("seq")
            .and_then(serde_json::Value::as_u64)
            .ok_or(RecordError::Missing { field: "seq" })?;
        let body = match Body::deserialize(&value) {
            Ok(body) => body,
            Err(source) if KNOWN_KINDS.contains(&kind.as_str()) => {
                return Err(RecordError::Json { source });
            }
            Err(_) => Body::Unknown {
                kind,
                fields: match value {
                    serde_json::Value::Object(fields) => fields
                        .into_iter()
                        .filter(|(key, _)| !ENVELOPE.contains(&key.as_str()))
                        .collect(),
                    _ => serde_json::Map::new(),
                },
            },
        };
        Ok(Record { id, seq, at, body })
    }

    /// The common case read straight from the bytes, without the `serde_json::Value` tree
    /// (a run of a thousand rounds holds three thousand records, and `pr-body` reads them
    /// all): the envelope and a known body, each from the same text. Anything else — an unknown
    /// kind, a missing or mistyped field, a key named twice — is `None`, and the careful
    /// reading above decides it exactly as before.
    fn from_json_direct(bytes: &[u8]) -> Option<Self> {
        #[derive(Deserialize)]
        struct Envelope {
            v: u64,
            id: String,
            at: String,
            seq: u64,
        }
        let envelope: Envelope = serde_json::from_slice(bytes).ok()?;
        if envelope.v != u64::from(SCHEMA_VERSION) {
            return None;
        }
        let body: Body = serde_json::from_slice(bytes).ok()?;
        if matches!(body, Body::Unknown { .. }) {
            return None;
        }
        Some(Record {
            id: envelope.id,
            seq: envelope.seq,
            at: envelope.at,
            body,
        })
    }
}

const KNOWN_KINDS: &[&str] = &[
    "start",
    "coder",
    "review-dispatch",
    "review-member",
    "review",
    "cost",
    "finish",
    "pr",
    "pr-review",
    "pr-dispatch",
    "pr-review-failed",
    "set",
    "abandon",
    "checkpoint",
    "checkpoint-verified",
    "checkpoint-archived",
    "compaction",
    "allow-secret",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn coder(summary: &str) -> Body {
        Body::Coder(Coder {
            summary: summary.into(),
            tool: "claude".into(),
            findings_addressed: Some(2),
            session_id: None,
            responses: vec![],
            extra_round: false,
            round: None,
        })
    }

    #[test]
    fn round_trips_through_json_with_version_and_kind() {
        let record = Record::new(3, "2026-11-29T23:15:00Z".into(), coder("did it"));
        let json = record.to_json();
        let value: serde_json::Value = serde_json::from_slice(&json).expect("json");
        assert_eq!(value["v"], 1);
        assert_eq!(value["kind"], "coder");
        assert_eq!(value["seq"], 3);
        assert_eq!(Record::from_json(&json).expect("parses"), record);
        assert!(record.file_name().starts_with("000003-coder-"));
    }

    #[test]
    fn the_direct_reading_agrees_with_the_careful_one_or_leaves_it_to_it() {
        let plain = Record::new(3, "2026-11-29T23:15:00Z".into(), coder("did it")).to_json();
        let direct = Record::from_json_direct(&plain).expect("a plain record reads directly");
        assert_eq!(Some(direct), Record::from_json_careful(&plain).ok());
        // What the direct reading leaves to the careful one: a key named twice (the last
        // wins, as before), an unknown kind, a body field of the wrong type, another version.
        for odd in [
            &br#"{"v":1,"id":"a","seq":4,"seq":5,"at":"x","kind":"pr","number":7}"#[..],
            br#"{"v":1,"id":"a","seq":4,"at":"x","kind":"pr","number":7,"number":8}"#,
            br#"{"v":1,"id":"a","seq":4,"at":"x","kind":"telepathy"}"#,
            br#"{"v":1,"id":"a","seq":4,"at":"x","kind":"pr","number":"7"}"#,
            br#"{"v":2,"id":"a","seq":4,"at":"x","kind":"pr","number":7}"#,
        ] {
            assert!(
                Record::from_json_direct(odd).is_none(),
                "{}",
                odd.escape_ascii()
            );
        }
        let twice = Record::from_json(
            br#"{"v":1,"id":"a","seq":4,"at":"x","kind":"pr","number":7,"number":8}"#,
        )
        .expect("parses");
        assert_eq!(
            twice.body,
            Body::Pr {
                number: 8,
                final_round: false
            }
        );
    }

    #[test]
    fn unknown_kinds_are_kept_and_unknown_fields_ignored() {
        let json = br#"{"v":1,"id":"abc","seq":4,"at":"x","kind":"telepathy","mood":"calm"}"#;
        let record = Record::from_json(json).expect("parses");
        assert_eq!(record.body.kind(), "telepathy");
        let json = br#"{"v":1,"id":"abc","seq":4,"at":"x","kind":"pr","number":7,"extra":true}"#;
        assert_eq!(
            Record::from_json(json).expect("parses").body,
            Body::Pr {
                number: 7,
                final_round: false,
            }
        );
    }

    #[test]
    fn a_record_of_an_unknown_kind_writes_back_as_it_was_read() {
        // Found by the `record_decode` fuzz target: `to_json` panicked on such a record.
        let json =
            br#"{"v":1,"id":"abc","seq":4,"at":"x","kind":"telepathy","mood":"calm","n":[1,2]}"#;
        let record = Record::from_json(json).expect("parses");
        assert_eq!(record.to_json(), [&json[..], b"\n"].concat());
        assert_eq!(
            Record::from_json(&record.to_json()).expect("parses"),
            record
        );
    }

    #[test]
    fn corrupt_records_are_errors_not_defaults() {
        for bad in [
            &b"not json"[..],
            br#"{"v":2,"id":"a","seq":1,"at":"x","kind":"pr","number":1}"#,
            br#"{"v":1,"seq":1,"at":"x","kind":"pr","number":1}"#,
            br#"{"v":1,"id":"a","seq":1,"at":"x","kind":"pr","number":"seven"}"#,
        ] {
            assert!(
                Record::from_json(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn stored_findings_read_and_write_back_byte_for_byte() {
        // Records written before findings had a typed severity (and one without a location).
        let stored = [
            r#"{"v":1,"id":"r1","seq":5,"at":"2026-11-29T23:15:00Z","kind":"review","dispatch":"d1","round":1,"verdict":"CHANGES_REQUESTED","outcome":"completed","tool":"codex","findings":[{"n":1,"category":"correctness","severity":"high","location":"src/lib.rs:10","text":"off by one"},{"n":2,"category":"tests","severity":null,"location":"","text":"no test"},{"n":3,"category":"x","severity":"critical","location":"a","text":"t"},{"n":4,"category":"y","severity":"medium","location":"b","text":"t"},{"n":5,"category":"z","severity":"low","location":"c","text":"t"}],"reviewers":[],"fallback_used":false,"snapshot":""}"#,
        ];
        for json in stored {
            let record = Record::from_json(json.as_bytes()).expect("old record reads");
            assert_eq!(
                String::from_utf8(record.to_json()).expect("utf-8"),
                format!("{json}\n")
            );
        }
        let without_location = br#"{"n":1,"category":"c","severity":"low","text":"t"}"#;
        let finding: Finding = serde_json::from_slice(without_location).expect("reads");
        assert_eq!(
            (finding.location.as_str(), finding.severity),
            ("", Some(Severity::Low))
        );
        let unknown = br#"{"n":1,"category":"c","severity":"urgent","location":"","text":"t"}"#;
        assert!(serde_json::from_slice::<Finding>(unknown).is_err());
    }

    #[test]
    fn severity_spellings() {
        for severity in Severity::ALL {
            let json = serde_json::to_string(&severity).expect("serializes");
            assert_eq!(json, format!("\"{severity}\""));
            assert_eq!(
                Severity::parse(&severity.as_str().to_uppercase()),
                Some(severity)
            );
        }
        assert_eq!(Severity::parse("urgent"), None);
    }

    #[test]
    fn verdict_spellings() {
        assert_eq!(Verdict::parse("REVISE"), Some(Verdict::ChangesRequested));
        assert_eq!(Verdict::parse("approved"), None);
        assert_eq!(Verdict::Approved.as_str(), "APPROVED");
    }
}
