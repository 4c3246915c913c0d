//! The operations' one error type: every way an operation fails, each naming what failed.
//! How each reads to a user (exit code, hint) is decided once, in `cli/error.rs`.

/// Why an operation failed or was refused. Nothing was stored when an operation fails,
/// unless the variant says otherwise.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Store(#[from] crate::store::Error),
    #[error(transparent)]
    Config(#[from] crate::config::Error),
    #[error(transparent)]
    RunId(#[from] crate::model::RunIdError),
    #[error(transparent)]
    Refused(#[from] crate::model::Refusal),
    #[error(transparent)]
    Sync(#[from] crate::sync::Error),
    #[error(transparent)]
    Reviewer(#[from] crate::review::Error),
    #[error(transparent)]
    Packet(#[from] crate::packet::Error),
    #[error("cannot snapshot the work tree: {0}")]
    Snapshot(#[from] crate::worktree::snapshot::Error),
    #[error("cannot compute the diff: {0}")]
    Diff(#[from] crate::diff::Error),
    #[error(transparent)]
    Template(#[from] crate::review::prompt::TemplateError),
    #[error("cannot measure spend: {0}")]
    Cost(#[from] crate::cost::CostError),
    /// `push` found secrets in what it would publish; nothing was published.
    #[error(
        "refusing to push to '{remote}': {}",
        crate::ops::sync::findings::summarize(findings)
    )]
    SecretsInPush {
        remote: String,
        findings: Vec<crate::ops::sync::findings::PushFinding>,
    },
    /// `scrub` of a file a remote already holds; nothing was changed.
    #[error(
        "cannot scrub {path} from run {run_id}: a remote already has it (in {})",
        places.join(", ")
    )]
    ScrubPublished {
        run_id: String,
        path: String,
        places: Vec<String>,
    },
    /// `scrub` of a file no unpublished stored snapshot holds; nothing was changed.
    #[error("run {run_id} stores no copy of {path} in its unpublished part; nothing to scrub")]
    ScrubNothing { run_id: String, path: String },
    /// `review` at the budget's alert with a reviewer that costs money, without
    /// `--over-budget`; nothing was spawned or stored.
    #[error(
        "the budget of run {run_id} is spent (${spent:.2} of ${limit:.2}); no reviewer that costs money was started"
    )]
    BudgetSpent {
        run_id: String,
        spent: f64,
        limit: f64,
    },
    /// `adopt` of a finished run: nothing is left to continue.
    #[error("run {run_id} is finished ({outcome}): there is nothing to adopt")]
    AdoptFinished { run_id: String, outcome: String },
    /// `adopt` while this clone has another unfinished run on the run's branch.
    #[error(
        "branch '{branch}' already has an unfinished run of this clone, {other}; run {run_id} was not adopted"
    )]
    AdoptBranchBusy {
        run_id: String,
        branch: String,
        other: String,
    },
    /// `drop` of the active run without `--force`.
    #[error("run {run_id} is the active run on branch '{branch}'; dropping it deletes it for good")]
    DropActive { run_id: String, branch: String },
    /// A flag's value that does not make sense (exit 129, like a usage error).
    #[error("{0}")]
    Usage(String),
    #[error("cannot change to '{path}': no such directory")]
    NoSuchDirectory { path: String },
    #[error("no active run on branch '{branch}'{}", elsewhere.as_ref().map(|id| format!(" in this clone (run {id} on it came from another clone)")).unwrap_or_default())]
    NoActiveRun {
        branch: String,
        /// The newest run on the branch that belongs to another clone, when there is one.
        elsewhere: Option<String>,
    },
    #[error("HEAD is unborn: branch '{branch}' has no commits yet")]
    UnbornHead { branch: String },
    #[error("work tree is dirty: {path} ({what})")]
    Dirty { path: String, what: String },
    #[error("cannot read {what} {path}: {source}")]
    ReadFile {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} {path} is not {expected}: {detail}")]
    BadFile {
        what: &'static str,
        path: String,
        expected: &'static str,
        detail: String,
    },
    #[error("run {run_id} has no round {round}")]
    NoSuchRound { run_id: String, round: u32 },
    #[error("round {round} of run {run_id} has no stored {what}")]
    MissingMaterial {
        run_id: String,
        round: u32,
        what: String,
    },
    #[error("round {round} of run {run_id} has no reviewed snapshot")]
    NoSnapshot { run_id: String, round: u32 },
    #[error("cannot render the diff: {source}")]
    Render {
        #[source]
        source: std::io::Error,
    },
    #[error("gh pr create failed: {source}")]
    Gh {
        /// Where the rendered PR body is, to open the PR by hand.
        body: String,
        #[source]
        source: crate::process::ToolError,
    },
    #[error("run {run_id} is already finished")]
    FinishedOnlyPr { run_id: String },
    /// `review --pr --remote NAME` (or the default) names no configured remote.
    #[error("cannot review the PR from remote '{remote}': {detail}")]
    PrRemote {
        remote: String,
        detail: &'static str,
    },
    /// `gh` could not read or comment on the run's PR; nothing was recorded.
    #[error("{what} failed for PR #{number}: {detail}")]
    GhPr {
        number: u64,
        what: &'static str,
        detail: String,
    },
    /// A reviewer choice (`pair.reviewerModel`, `--effort`, …) the bound reviewer does not
    /// take, or a value outside its shape; nothing was stored or spawned.
    #[error("{reason}")]
    ReviewerChoice {
        /// The setting, as its config key (`pair.reviewerModel`).
        key: &'static str,
        reason: String,
    },
    /// `finish --push`: the run is finished (recorded), publishing its records failed.
    #[error(
        "run {} is finished, but its review records were not published to '{remote}': {source}",
        finished.run_id
    )]
    FinishPush {
        finished: Box<crate::model::report::finish::Finished>,
        remote: String,
        source: Box<Error>,
    },
    #[error(
        "no review records in this repository: refs/pair/runs/* is missing{}, so no commit can be verified",
        if *notes { "" } else { " (and refs/notes/pair)" }
    )]
    NoReviewRecords {
        /// Whether `refs/notes/pair` exists (the notes came, the runs did not).
        notes: bool,
    },
    #[error("cannot verify range '{range}': {detail}")]
    BadRange { range: String, detail: String },
    #[error(transparent)]
    Hooks(#[from] crate::install::hooks::Error),
    #[error(transparent)]
    Skill(#[from] crate::install::skill::Error),
    /// The commit would add or change a path that must never be committed.
    #[error("commit refused: {path} must never be committed (pair.neverCommit: {pattern})")]
    NeverCommit { path: String, pattern: String },
    /// The commit gate is closed: the staged tree is not the approved snapshot.
    #[error("commit refused: {}", gate_closed(run_id, *approved_round, paths, *more, *finished))]
    GateClosed {
        run_id: String,
        /// The round whose approval the staged tree was compared with; `None` when no
        /// review of the run approved anything (that stands).
        approved_round: Option<u32>,
        /// The first paths that differ, with how (`added`, `modified`, …).
        paths: Vec<(String, &'static str)>,
        /// How many more paths differ.
        more: usize,
        /// The run is finished: the way on is a new run (or the approved tree itself).
        finished: bool,
        /// The run is finished and HEAD already holds its approved tree.
        committed: bool,
    },
    /// The commit gate is closed: the run's approval is partial (SPEC §6.2).
    #[error(
        "commit refused: the approval of run {run_id} (round {round}) is partial ({summary}): some files of the change reached no reviewer, so it opens no gate"
    )]
    GatePartial {
        run_id: String,
        round: u32,
        summary: String,
    },
    #[error("cannot write {what} {path}: {source}")]
    WriteFile {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot find your home directory: HOME is not set")]
    NoHome,
    #[error("cannot record the review dispatch, so no reviewer was started: {0}")]
    Dispatch(Box<Error>),
    // Checkpoints (SPEC §10).
    #[error(transparent)]
    CheckpointInvalid(#[from] crate::model::checkpoint::rules::Invalid),
    #[error(transparent)]
    CheckpointId(#[from] crate::model::CheckpointIdError),
    #[error("no checkpoint {id} in this repository's runs")]
    UnknownCheckpoint { id: String },
    /// handoff-deferred: git is between two states; nothing was run or stored.
    #[error("handoff deferred, nothing was stored: {}", reasons.join("; "))]
    CheckpointDeferred {
        reasons: Vec<String>,
        ways_on: Vec<String>,
    },
    /// A secret in a flag, the check's output or a changed file; nothing was stored.
    #[error(
        "checkpoint refused, nothing was stored: it would carry a secret ({})",
        list_some(found)
    )]
    CheckpointSecret {
        kinds: Vec<String>,
        found: Vec<String>,
    },
    #[error("checkpoint refused, nothing was stored: {detail}")]
    CheckpointUnscannable { detail: String },
    #[error("cannot load the secret patterns: {0}")]
    Secrets(#[from] crate::secrets::SecretsError),
    #[error(transparent)]
    CheckRefused(#[from] crate::model::checkpoint::rules::CheckRefusal),
    #[error(
        "checkpoint {id} is at commit {commit} (branch {branch}), which this repository does not have"
    )]
    CheckpointCommitMissing {
        id: String,
        commit: String,
        branch: String,
    },
    #[error("work tree is dirty: {path} ({what}); restore never overwrites uncommitted work")]
    DirtyForRestore { path: String, what: String },
    #[error("{what}")]
    InProgress { what: String, way_on: String },
    #[error(transparent)]
    Restore(#[from] crate::worktree::RestoreError),
    #[error("checkpoint {id} cannot be archived yet ({}): missing {}; {}", state.as_str(), missing.join("; "), crate::model::checkpoint::rules::AUTO_RESUME_RISK)]
    ArchiveRefused {
        id: String,
        /// Where the checkpoint really stands (never "verified" without a verification).
        state: crate::model::CheckpointState,
        missing: Vec<String>,
        /// In the source: how it changed since the checkpoint.
        changes: Vec<crate::model::Mismatch>,
        /// This work tree is not at the checkpoint's recorded path.
        other_path: bool,
    },
}

/// The first few items of a list, and how many more there are.
fn list_some(items: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        text.push_str(&format!(" and {} more", items.len() - SHOWN));
    }
    text
}

impl Error {
    /// Wraps a failure to store the write-ahead dispatch record; a loop rule's refusal stays
    /// a refusal.
    pub fn dispatch(err: Error) -> Error {
        match err {
            Error::Refused(_) | Error::Store(crate::store::Error::Refused(_)) => err,
            other => Error::Dispatch(Box::new(other)),
        }
    }
}

/// The message of a closed gate: the run, what the staged tree was compared with, and the
/// first differing paths.
fn gate_closed(
    run_id: &str,
    approved_round: Option<u32>,
    paths: &[(String, &'static str)],
    more: usize,
    finished: bool,
) -> String {
    let Some(round) = approved_round else {
        if finished {
            return format!(
                "run {run_id}, this branch's newest run, is finished without an approval that stands"
            );
        }
        return format!(
            "run {run_id} is active on this branch and no review of it has approved anything yet"
        );
    };
    let mut listed = paths
        .iter()
        .map(|(path, how)| format!("{path} ({how})"))
        .collect::<Vec<_>>()
        .join(", ");
    if more > 0 {
        listed.push_str(&format!(" and {more} more"));
    }
    if listed.is_empty() {
        listed.push_str("the trees differ");
    }
    format!(
        "the staged tree is not the snapshot run {run_id} approved in round {round}; it differs at {listed}"
    )
}
