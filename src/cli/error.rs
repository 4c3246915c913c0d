//! Errors as users see them, classified in this one file: every domain error becomes one
//! `error:` line, a kind (the user can fix it, or something inside failed), an exit code, an
//! optional hint naming the next command, and for `--json` whatever partial result applies.

use serde::Serialize;
use serde_json::Value;

use crate::model::Refusal;
use crate::ops::Error as OpsError;

/// Exit code for refusals and failures.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for `budget-check` at alert.
pub const EXIT_BUDGET_ALERT: u8 = 2;
/// Exit code for usage errors, as git uses.
pub const EXIT_USAGE: u8 = 129;

/// The plain `git fetch` that brings a remote's review records (runs and notes) as they are.
pub const FETCH_PAIR_REFS: &str =
    "git fetch origin '+refs/pair/runs/*:refs/pair/runs/*' '+refs/notes/pair:refs/notes/pair'";

/// Who can do something about an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A refusal or bad input: the user (or agent) can fix it; the hint says how.
    User,
    /// Something inside failed (git objects, the file system): worth a bug report.
    Internal,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Internal => "internal",
        }
    }
}

/// A failed command.
#[derive(Debug)]
pub struct CommandError {
    pub message: String,
    pub hint: Option<String>,
    pub kind: Kind,
    pub exit: u8,
    /// Keys merged into the `--json` error object (e.g. a failed review's outcome).
    pub partial: Option<Box<serde_json::Map<String, Value>>>,
    /// Without `--json`: what the command found before failing, printed to stdout (e.g.
    /// `probe`'s view of every realization).
    pub human: Option<String>,
    /// A write was refused as on a read-only file system (EROFS): the caller adds
    /// [`read_only_hint`] once it knows the git directory.
    pub read_only_fs: bool,
}

impl CommandError {
    /// A refusal or failure the user can act on (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        CommandError {
            message: single_line(&message.into()),
            hint: None,
            kind: Kind::User,
            exit: EXIT_FAILURE,
            partial: None,
            human: None,
            read_only_fs: false,
        }
    }

    /// A usage error (exit 129).
    pub fn usage(message: impl Into<String>) -> Self {
        CommandError {
            exit: EXIT_USAGE,
            ..CommandError::failed(message)
        }
    }

    fn internal(message: impl Into<String>) -> Self {
        CommandError {
            kind: Kind::Internal,
            ..CommandError::failed(message)
        }
    }

    /// Adds the next command that would help.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds a key to the `--json` error object.
    pub fn with_partial(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.partial
            .get_or_insert_with(Default::default)
            .insert(key.to_owned(), value.into());
        self
    }

    /// The `--json` error object: the partial result's keys, then `error`, `kind`, `hint`.
    pub fn to_json(&self) -> ErrorReport<'_> {
        ErrorReport {
            partial: self.partial.as_deref(),
            error: &self.message,
            kind: self.kind.as_str(),
            hint: self.hint.as_deref(),
        }
    }
}

/// A failed command's `--json` object; field order is key order.
#[derive(Debug, Serialize)]
pub struct ErrorReport<'a> {
    /// What the command found before failing (e.g. a failed review's outcome).
    #[serde(flatten)]
    pub partial: Option<&'a serde_json::Map<String, Value>>,
    /// The one `error:` line.
    pub error: &'a str,
    /// `user` or `internal`.
    pub kind: &'a str,
    /// The next command that would help.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'a str>,
}

impl From<OpsError> for CommandError {
    /// Routes each domain's errors to the function that words them; what no domain claims
    /// is worded by [`run_error`]. A write refused by a read-only file system is marked
    /// ([`CommandError::read_only_fs`]) whatever wrote: the user can fix it.
    fn from(err: OpsError) -> Self {
        let read_only = is_read_only_fs(&err);
        let mut e = classify(err);
        if read_only {
            e.read_only_fs = true;
            e.kind = Kind::User;
        }
        e
    }
}

/// Whether `err` (or an error it wraps) is a write the file system refused as read-only
/// (EROFS): what a sandbox keeping `.git` read-only (Codex's `workspace-write`) does to every
/// command that writes refs, objects or locks.
pub fn is_read_only_fs(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(err);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && (io.raw_os_error() == Some(libc::EROFS)
                || io.kind() == std::io::ErrorKind::ReadOnlyFilesystem)
        {
            return true;
        }
        source = e.source();
    }
    // Errors that keep only the operating system's words.
    err.to_string().contains("Read-only file system")
}

/// The way on from a write refused as read-only: what to set, where, and the command to run
/// again. `git_dir` is the repository's common git directory, absolute.
pub fn read_only_hint(git_dir: &str, rerun: &str) -> String {
    let roots = format!("[{}]", serde_json::Value::from(git_dir));
    format!(
        "the git directory {git_dir} is read-only here. Under Codex's default workspace-write sandbox (it keeps .git read-only), let Codex write it: in ~/.codex/config.toml (or $CODEX_HOME/config.toml) add `[sandbox_workspace_write]` with `writable_roots = {roots}`, then start Codex again (for one session: codex -c 'sandbox_workspace_write.writable_roots={roots}'); elsewhere make {git_dir} writable. Then run again: {rerun}"
    )
}

/// [`From<OpsError>`]'s routing.
fn classify(err: OpsError) -> CommandError {
    match err {
        OpsError::Store(e) => e.into(),
        OpsError::Config(e) => e.into(),
        OpsError::Refused(refusal) => refusal.into(),
        OpsError::Sync(e) => e.into(),
        OpsError::Reviewer(e) => e.into(),
        OpsError::FinishPush {
            finished,
            remote,
            source,
        } => finish_push_error(&finished, &remote, *source),
        e @ (OpsError::Packet(_)
        | OpsError::Template(_)
        | OpsError::Dispatch(_)
        | OpsError::BudgetSpent { .. }
        | OpsError::MissingMaterial { .. }
        | OpsError::NoSnapshot { .. }) => review_error(e),
        e @ (OpsError::SecretsInPush { .. }
        | OpsError::ScrubPublished { .. }
        | OpsError::ScrubNothing { .. }
        | OpsError::DropActive { .. }
        | OpsError::NoReviewRecords { .. }
        | OpsError::BadRange { .. }) => sync_error(e),
        e @ (OpsError::CheckpointInvalid(_)
        | OpsError::CheckpointId(_)
        | OpsError::UnknownCheckpoint { .. }
        | OpsError::CheckpointDeferred { .. }
        | OpsError::CheckpointSecret { .. }
        | OpsError::CheckpointUnscannable { .. }
        | OpsError::Secrets(_)
        | OpsError::CheckRefused(_)) => checkpoint_error(e),
        e @ (OpsError::CheckpointCommitMissing { .. }
        | OpsError::DirtyForRestore { .. }
        | OpsError::InProgress { .. }
        | OpsError::Restore(_)
        | OpsError::ArchiveRefused { .. }) => restore_error(e),
        e @ (OpsError::Skill(_)
        | OpsError::NeverCommit { .. }
        | OpsError::GateClosed { .. }
        | OpsError::GatePartial { .. }
        | OpsError::NoHome) => install_error(e),
        other => run_error(other),
    }
}

/// Errors of selecting a run and of the commands around it (start, show, diff, finish, cost),
/// and every error worded by its message alone.
fn run_error(err: OpsError) -> CommandError {
    let message = err.to_string();
    match err {
        OpsError::RunId(_) => {
            CommandError::failed(message).with_hint("list the runs with: git pair list")
        }
        OpsError::Snapshot(_) | OpsError::Diff(_) | OpsError::Render { .. } => {
            CommandError::internal(message)
        }
        OpsError::Cost(ref e) => {
            use crate::cost::CostError;
            let hint = match e {
                CostError::SessionNotFound { .. } | CostError::InvalidSessionId { .. } => {
                    "the session id comes from the agent (its log file's name); with its logs elsewhere, set CLAUDE_CONFIG_DIR or CODEX_HOME as the agent had them"
                }
                CostError::ReadLog { .. } => "check the log file's permissions",
                _ => "check pair.pricingFile (git config --get pair.pricingFile)",
            };
            CommandError::failed(message).with_hint(hint)
        }
        OpsError::Usage(_) => CommandError::usage(message),
        OpsError::NoActiveRun {
            elsewhere: Some(ref run_id),
            ..
        } => {
            let hint = format!(
                "to continue run {run_id} here: git pair adopt {run_id}; to start your own: git pair start --task \"…\""
            );
            CommandError::failed(message).with_hint(hint)
        }
        OpsError::NoActiveRun { elsewhere: None, .. } => CommandError::failed(message).with_hint(
            "start one with: git pair start --task \"…\" (or pass --run RUN_ID; git pair list shows runs)",
        ),
        OpsError::AdoptFinished { ref run_id, .. } => {
            let hint = format!(
                "read it with git pair show {run_id}; for new work: git pair start --task \"…\""
            );
            CommandError::failed(message).with_hint(hint)
        }
        OpsError::AdoptBranchBusy { ref other, .. } => {
            let hint = format!(
                "finish or abandon it first (git pair abandon --run {other}), then adopt again"
            );
            CommandError::failed(message).with_hint(hint)
        }
        OpsError::UnbornHead { .. } => {
            CommandError::failed(message).with_hint("make a first commit, then start the run")
        }
        OpsError::Dirty { .. } => CommandError::failed(message)
            .with_hint("commit or stash your changes, then run git pair start again"),
        OpsError::NoSuchRound { ref run_id, .. } => {
            let hint = format!("see the rounds with: git pair show {run_id}");
            CommandError::failed(message).with_hint(hint)
        }
        OpsError::Gh {
            body,
            source: crate::process::ToolError::NotFound,
        } => CommandError::failed("--open-pr needs the GitHub CLI (gh), which is not installed")
            .with_hint(format!(
                "install gh, or open the PR yourself with the body in {body}"
            )),
        OpsError::ReviewerChoice { key, .. } => CommandError::failed(message).with_hint(format!(
            "drop it for this review (git config --unset {key}; or git pair set --unset {}), or choose a reviewer whose realization declares it (git pair probe)",
            if key == "pair.reviewerModel" { "reviewer-model" } else { "reviewer-effort" }
        )),
        OpsError::PrRemote { .. } => CommandError::failed(message).with_hint(
            "name the remote the PR lives on: git pair review --pr N --remote NAME (git remote -v lists them)",
        ),
        OpsError::FinishedOnlyPr { ref run_id } => CommandError::failed(message).with_hint(format!(
            "its outcome stands (git pair show {run_id}); on a finished run, finish only records a PR number (--pr N), attaches the review note to HEAD and publishes the records (--push); new work needs a new run: git pair start --task \"…\""
        )),
        // NoSuchDirectory, ReadFile, BadFile, Gh (other), Hooks, WriteFile, and the variants
        // the domain functions route here from their own catch-all: the message says it all.
        _ => CommandError::failed(message),
    }
}

/// `finish --push` finished the run and could not publish it: the push's own error and way
/// on, said to come after a finish that stands; the finish report is the partial result
/// (`--json`) and its text is printed as on success.
fn finish_push_error(
    finished: &crate::model::report::finish::Finished,
    remote: &str,
    source: OpsError,
) -> CommandError {
    let message = format!(
        "run {} is finished, but its review records were not published to '{remote}': {source}",
        finished.run_id
    );
    let pushed = CommandError::from(source);
    let again = if remote == crate::sync::DEFAULT_REMOTE {
        "git pair push".to_owned()
    } else {
        format!("git pair push {}", shell_quote(remote))
    };
    let hint = match &pushed.hint {
        Some(hint) => {
            format!("the run stays finished; {hint}; then publish the records with: {again}")
        }
        None => format!("the run stays finished; publish the records with: {again}"),
    };
    let mut text = Vec::new();
    crate::render::finish::human(finished, &mut text).expect("writing to a Vec cannot fail");
    let mut err = CommandError {
        message: single_line(&message),
        hint: Some(hint),
        human: Some(String::from_utf8_lossy(&text).into_owned()),
        ..pushed
    };
    if let Ok(Value::Object(map)) = serde_json::to_value(finished) {
        for (key, value) in map {
            err = err.with_partial(&key, value);
        }
    }
    err.with_partial("push", Value::Null)
}

/// Errors of building and recording a review round.
fn review_error(err: OpsError) -> CommandError {
    let message = err.to_string();
    match err {
        OpsError::Packet(crate::packet::Error::Blind { .. }) => CommandError::failed(message)
            .with_hint(
                "no reviewer was started; remove the path from the change, or adjust pair.review.exclude",
            ),
        OpsError::Packet(_) => CommandError::failed(message),
        OpsError::Template(_) => CommandError::failed(message)
            .with_hint("fix the template file, or unset pair.promptTemplate"),
        OpsError::Dispatch(_) => CommandError::internal(message),
        OpsError::BudgetSpent { .. } => {
            let mut e = CommandError::failed(message)
                .with_hint(
                    "ask the human; to go on anyway (recorded, shown in the PR body): git pair review --over-budget",
                )
                .with_partial("next_action", "stop:budget");
            e.exit = EXIT_BUDGET_ALERT;
            e
        }
        OpsError::MissingMaterial { .. } => CommandError::failed(message)
            .with_hint("it is stored when the round is reviewed: git pair review"),
        OpsError::NoSnapshot { ref run_id, .. } => {
            let hint = format!("see the reviewed rounds with: git pair show {run_id}");
            CommandError::failed(message).with_hint(hint)
        }
        other => run_error(other),
    }
}

/// Errors of publishing, dropping and verifying runs against a remote or a range.
fn sync_error(err: OpsError) -> CommandError {
    let message = err.to_string();
    match err {
        OpsError::SecretsInPush { ref findings, .. } => {
            let run = findings.iter().find_map(|f| f.run.clone());
            let mut hint = "nothing was published. ".to_owned();
            let scrub_path = findings
                .iter()
                .find(|f| f.kind != "unpublished-history")
                .map(|f| f.path.clone());
            if let Some(run) = &run {
                hint.push_str(&format!(
                    "If the secret is real, remove the run for good: git pair drop {run} --force (then start a fresh run; rotate the secret if it was ever shared)"
                ));
                if let Some(path) = &scrub_path {
                    hint.push_str(&format!(
                        ", or remove the file from the run's unpublished part: git pair scrub {run} {path}"
                    ));
                }
                hint.push_str("; ");
            }
            // Every finding's flag, once each: following the hint publishes or refuses all.
            let flags = |flag: &str, values: Vec<String>| -> String {
                let mut seen = std::collections::BTreeSet::new();
                values
                    .into_iter()
                    .filter(|v| seen.insert(v.clone()))
                    .map(|v| format!("{flag} {v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let secrets: Vec<String> = findings
                .iter()
                .filter(|f| f.is_secret())
                .map(|f| f.allowance().to_string())
                .collect();
            if !secrets.is_empty() {
                hint.push_str(&format!(
                    "if {} known false positive{}: git pair push {} (recorded in the run); ",
                    if secrets.len() == 1 { "it is a" } else { "they are" },
                    if secrets.len() == 1 { "" } else { "s" },
                    flags("--allow-secret", secrets)
                ));
            }
            let unscanned: Vec<String> = findings
                .iter()
                .filter(|f| f.is_unscanned())
                .map(|f| f.path.clone())
                .collect();
            if !unscanned.is_empty() {
                hint.push_str(&format!(
                    "to publish binary or large files unscanned: git pair push {} (recorded in the run); ",
                    flags("--allow-unscanned", unscanned)
                ));
            }
            if findings.iter().any(|f| f.kind == "flagged-by-review") {
                hint.push_str("a file a review flagged [secret] is never published; ");
            }
            if findings.iter().any(|f| f.kind == "unpublished-history") {
                hint.push_str("to keep the run's base private, push your branch first; to publish that history with the run (scanned): git pair push --with-base; ");
            }
            let hint = hint.trim_end_matches("; ").to_owned();
            let listed: Vec<Value> = findings
                .iter()
                .map(|f| serde_json::to_value(f).expect("findings serialize"))
                .collect();
            CommandError::failed(message)
                .with_hint(hint)
                .with_partial("secrets", listed)
        }
        OpsError::ScrubPublished { ref run_id, .. } => CommandError::failed(message).with_hint(
            format!(
                "a published file is removed only with the run: git pair drop {run_id} --remote REMOTE --force (rotate the secret: it was shared)"
            ),
        ),
        OpsError::ScrubNothing { .. } => CommandError::failed(message)
            .with_hint("name the file as push did (its path in the work tree): git pair push --json lists it"),
        OpsError::DropActive { .. } => CommandError::failed(message).with_hint(
            "to drop it anyway: git pair drop RUN_ID --force (or close it first: git pair abandon)",
        ),
        OpsError::NoReviewRecords { .. } => CommandError::failed(message).with_hint(format!(
            "fetch them: {FETCH_PAIR_REFS} (or git pair pull)"
        )),
        OpsError::BadRange { .. } => CommandError::failed(message).with_hint(
            "name the range with your base branch, e.g. git pair verify origin/BASE..HEAD (a CI checkout needs the whole history and the base branch: fetch-depth 0, then git fetch origin BASE)",
        ),
        other => run_error(other),
    }
}

/// Errors of installing hooks and skills, and of what the commit hooks refuse.
fn install_error(err: OpsError) -> CommandError {
    let message = err.to_string();
    match err {
        OpsError::Skill(crate::install::skill::Error::Edited { .. }) => {
            CommandError::failed(message)
                .with_hint("keep your edits, or replace them with: git pair skill install --force")
        }
        OpsError::NeverCommit { ref path, .. } => {
            let hint = format!(
                "unstage it with: git restore --staged -- {path} (or bypass deliberately: git commit --no-verify)"
            );
            CommandError::failed(message).with_hint(hint)
        }
        OpsError::GatePartial { run_id, round, .. } => CommandError::failed(message)
            .with_hint(format!(
                "see what no reviewer saw: git show refs/pair/runs/{run_id}:reviews/{round}/coverage.json (unreviewed); split the change (or raise pair.maxFileBytes) and review again, or bypass the gate deliberately with git commit --no-verify"
            ))
            .with_partial("open", false)
            .with_partial("run_id", run_id)
            .with_partial("reason", "partial")
            .with_partial("round", round),
        OpsError::GateClosed {
            run_id,
            approved_round,
            paths,
            more,
            finished,
            committed,
        } => CommandError::failed(message)
            .with_hint(gate_hint(
                &run_id,
                approved_round.is_some(),
                finished,
                committed,
            ))
            .with_partial("open", false)
            .with_partial("finished", finished)
            .with_partial("run_id", run_id)
            .with_partial(
                "reason",
                if approved_round.is_some() {
                    "differs"
                } else {
                    "not-approved"
                },
            )
            .with_partial("round", approved_round)
            .with_partial(
                "paths",
                paths
                    .into_iter()
                    .map(|(path, change)| {
                        serde_json::to_value(PathChange { path, change })
                            .expect("a path change serializes")
                    })
                    .collect::<Vec<_>>(),
            )
            .with_partial("more", more),
        OpsError::NoHome => CommandError::failed(message)
            .with_hint("set HOME, or install into this repository with --project"),
        other => run_error(other),
    }
}

/// The way on from a closed commit gate.
fn gate_hint(run_id: &str, approved: bool, finished: bool, committed: bool) -> String {
    const NEW_RUN: &str =
        "review new work in a new run: git stash, git pair start --task \"…\", git stash pop";
    const BYPASS: &str = "or bypass the gate deliberately with git commit --no-verify";
    match (finished, approved, committed) {
        (false, _, _) => format!(
            "have this state reviewed with git pair review (record the coder's round first with git pair coder-done --summary \"…\"), {BYPASS}"
        ),
        (true, true, false) => format!(
            "run {run_id} is finished: commit exactly the tree it approved first (stage only that), then {NEW_RUN}; {BYPASS}"
        ),
        (true, true, true) => format!(
            "run {run_id} is finished and its approved tree is committed: {NEW_RUN}; {BYPASS}"
        ),
        (true, false, _) => format!("{NEW_RUN}; {BYPASS}"),
    }
}

/// One path the commit gate found different from the approved snapshot, for `--json`.
#[derive(Serialize)]
struct PathChange {
    path: String,
    change: &'static str,
}

/// Errors of creating, showing and verifying a checkpoint.
fn checkpoint_error(err: OpsError) -> CommandError {
    let message = err.to_string();
    match err {
        OpsError::CheckpointInvalid(ref invalid) if invalid.is_usage() => {
            CommandError::usage(message)
        }
        OpsError::CheckpointInvalid(_) => CommandError::failed(message).with_hint(
            "shorten it (point at files or commits instead of pasting them), then create the checkpoint again",
        ),
        OpsError::CheckpointId(_) | OpsError::UnknownCheckpoint { .. } => {
            CommandError::failed(message).with_hint(
                "a checkpoint made on another machine arrives with git pair pull; git pair status --json shows the latest one",
            )
        }
        OpsError::CheckpointDeferred { reasons, ways_on } => {
            let hint = format!("{}; then create the checkpoint again", ways_on.join("; "));
            CommandError::failed(message)
                .with_hint(hint)
                .with_partial("id", Value::Null)
                .with_partial("assessment", "handoff-deferred")
                .with_partial("bytes", 0)
                .with_partial("reasons", reasons)
        }
        OpsError::CheckpointSecret { kinds, found } => CommandError::failed(message)
            .with_hint(
                "remove it from the flag or the file (the snapshot carries every uncommitted change), then create the checkpoint again; a known false positive can carry the marker git-pair:allow-secret on its line",
            )
            .with_partial("kinds", kinds)
            .with_partial("found", found),
        OpsError::CheckpointUnscannable { .. } => CommandError::failed(message).with_hint(
            "commit part of the change first (only what differs from HEAD is scanned), then create the checkpoint again",
        ),
        OpsError::Secrets(_) => CommandError::failed(message).with_hint(
            "fix the file (its format is git pair's data/secrets.json), or use the shipped table: git config --unset pair.secretsFile",
        ),
        OpsError::CheckRefused(ref refusal) => check_refused(refusal, message),
        other => run_error(other),
    }
}

/// A recorded check that verify would not run.
fn check_refused(
    refusal: &crate::model::checkpoint::rules::CheckRefusal,
    message: String,
) -> CommandError {
    use crate::model::checkpoint::rules::CheckRefusal as R;
    let err = CommandError::failed(message);
    match refusal {
        R::NotConfirmed {
            id,
            command,
            other_path,
            ..
        } => {
            let quoted = shell_quote(command);
            err.with_hint(format!(
                "if you trust it, confirm it: {} --check {quoted} (or for good: git config --add pair.trustedChecks {quoted})",
                crate::model::checkpoint::rules::verify_command(id, *other_path)
            ))
            .with_partial("check", command.clone())
            .with_partial("ran", false)
        }
        R::Different { .. } => err.with_hint(
            "pass --check with exactly the recorded command (git pair checkpoint show <id> prints it), or leave --check out",
        ),
        R::NothingRecorded { .. } => err.with_hint("leave --check out"),
        R::TrustedOnForeignTree {
            id,
            command,
            other_path,
            ..
        } => err
            .with_hint(format!(
                "read what it would run first (git diff, the build files), then confirm it by hand once: {} --check {}",
                crate::model::checkpoint::rules::verify_command(id, *other_path),
                shell_quote(command)
            ))
            .with_partial("check", command.clone())
            .with_partial("ran", false),
    }
}

/// Errors of restoring and archiving a checkpoint.
fn restore_error(err: OpsError) -> CommandError {
    let message = err.to_string();
    match err {
        OpsError::CheckpointCommitMissing { ref branch, .. } => {
            let fetch = if branch == "HEAD" {
                "git fetch REMOTE".to_owned()
            } else {
                format!("git fetch REMOTE {branch}, e.g. git fetch origin {branch}")
            };
            CommandError::failed(message).with_hint(format!(
                "fetch it first ({fetch}), or push it from the machine that made the checkpoint; then run restore again"
            ))
        }
        OpsError::DirtyForRestore { .. } => CommandError::failed(message).with_hint(
            "commit or stash your changes (git stash -u), then run git pair checkpoint restore again",
        ),
        OpsError::InProgress { ref way_on, .. } => {
            let hint = format!("{way_on}, then try again");
            CommandError::failed(message).with_hint(hint)
        }
        OpsError::Restore(crate::worktree::RestoreError::InTheWay { .. }) => {
            CommandError::failed(message)
                .with_hint("move that file out of the way, then run restore again")
        }
        OpsError::Restore(crate::worktree::RestoreError::Git { .. }) => {
            CommandError::failed(message)
        }
        OpsError::Restore(_) => CommandError::internal(message),
        OpsError::ArchiveRefused {
            ref id,
            state,
            ref missing,
            ref changes,
            other_path,
        } => {
            let hint = if !changes.is_empty() {
                "work went on here after the checkpoint: hand it over with a new checkpoint (git pair checkpoint create --next \"…\"), then verify and archive that one".to_owned()
            } else if state == crate::model::CheckpointState::VerifiedSourceActive {
                format!(
                    "once the human agrees the source may be retired: git pair checkpoint archive {id} --authorize-archive (and with no git operation in progress)"
                )
            } else {
                format!(
                    "verify it where the task continues first: {}",
                    crate::model::checkpoint::rules::verify_command(id, other_path)
                )
            };
            CommandError::failed(message)
                .with_hint(hint)
                .with_partial("state", state.as_str())
                .with_partial("missing", missing.clone())
                .with_partial(
                    "changes",
                    serde_json::to_value(changes).expect("mismatches serialize"),
                )
                .with_partial(
                    "auto_resume_risk",
                    crate::model::checkpoint::rules::AUTO_RESUME_RISK,
                )
        }
        other => run_error(other),
    }
}

/// `text` quoted for a POSIX shell (single quotes), for hints meant to be pasted.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

impl From<crate::store::Error> for CommandError {
    fn from(err: crate::store::Error) -> Self {
        use crate::store::Error as E;
        let message = err.to_string();
        match err {
            E::NotARepository { .. } => CommandError::failed(message)
                .with_hint("run it inside a git repository, or pass -C PATH"),
            E::Bare { .. } => CommandError::failed(message).with_hint(
                "run it in a clone with a work tree (git clone REPOSITORY), or pass -C WORK_TREE",
            ),
            E::UnknownRun { .. } => {
                CommandError::failed(message).with_hint("list the runs with: git pair list")
            }
            E::BadRevision { .. } => CommandError::failed(message)
                .with_hint("name a commit git knows, e.g. --base HEAD~1 or --base main"),
            E::Refused(refusal) => refusal.into(),
            E::Contention { .. } | E::RefContention { .. } | E::LostRace { .. } => {
                CommandError::failed(message)
                    .with_hint("nothing was recorded; run the command again")
            }
            E::BadNoteLine { .. } => CommandError::failed(message),
            E::BadOverrides { .. } => CommandError::failed(message)
                .with_hint("fix the -c key=value given to git (git -c section.key=value pair …)"),
            E::CorruptRecord { .. } | E::CorruptRun { .. } | E::Git { .. } | E::Io { .. } => {
                CommandError::internal(message)
            }
        }
    }
}

impl From<Refusal> for CommandError {
    fn from(refusal: Refusal) -> Self {
        let hint = match &refusal {
            Refusal::Finished { .. } => Some("start a new run: git pair start --task \"…\""),
            Refusal::FinishedMeanwhile { .. } | Refusal::SecondPr { .. } => None,
            Refusal::AlreadyFinished { .. } => {
                Some("record a PR number with git pair finish --pr N")
            }
            Refusal::RoundCap { .. } => Some(
                "ask the human; to go on anyway: git pair coder-done --extra-round --summary \"…\"",
            ),
            Refusal::NothingToReview { .. } => {
                Some("record the coder's work first: git pair coder-done --summary \"…\"")
            }
            Refusal::AlreadyReviewed { .. } => Some(
                "record a new coder round (git pair coder-done --summary \"…\") or pass --again",
            ),
            Refusal::UnknownFinding { .. } => Some(
                "answer the findings of the last review by their numbers (git pair status; git pair handoff shows them)",
            ),
            Refusal::TooManyAddressed { .. } => {
                Some("count only findings of the last review; say which with --responses FILE")
            }
            Refusal::UnfinishedRun { .. } => Some(
                "go on with it (git pair status), close it (git pair abandon), or replace it: git pair start --replace --task \"…\"",
            ),
            Refusal::EmptyChange { .. } => Some(
                "make the change first (an empty change is never reviewed), then git pair coder-done --summary \"…\"",
            ),
            Refusal::ReviewRunning { .. } => Some(
                "wait for it to finish (git pair status says wait:review until then); it records its own verdict",
            ),
            Refusal::NotApproved { last, .. } if last == "CHANGES_REQUESTED" => Some(
                "fix the findings, then git pair coder-done --summary \"…\" and git pair review (a human may override with git pair finish --force, or close it unapproved with --verdict CHANGES_REQUESTED)",
            ),
            Refusal::NotApproved { .. } => Some(
                "record the round (git pair coder-done --summary \"…\") and run git pair review; a human may override with git pair finish --force",
            ),
            Refusal::PrFinalRoundOff => Some(
                "turn it on with git config pair.prFinalRound true (this run only: git pair set pr-final-round true)",
            ),
            Refusal::NoPr { .. } => Some(
                "open the PR with git pair finish --open-pr, or record one with git pair finish --pr N",
            ),
            Refusal::OtherPr { .. } => Some("git pair status shows the run's PR"),
            Refusal::PrWithoutFinalRound { .. } => Some(
                "the run goes on without the PR's final round: git pair finish (or start a new run for the PR)",
            ),
            Refusal::PrRoundUsed { .. } => Some(
                "finish the round: git pair coder-done --summary \"…\", git pair review, then git pair finish",
            ),
            Refusal::PrReviewDue { .. } => Some(
                "review the PR first: git pair review --pr N (a human may skip it with git pair finish --force)",
            ),
            Refusal::PrFindingsOpen { .. } => Some(
                "address them in one more round: git pair coder-done --summary \"…\", then git pair review",
            ),
            Refusal::PartialApproval { .. } => Some(
                "the review's output lists what no reviewer saw (unreviewed; stored in the round's coverage.json); split the change (or raise pair.maxFileBytes) and review again, or accept it deliberately with git pair finish --accept-partial",
            ),
        };
        let err = CommandError::failed(refusal.to_string());
        match hint {
            Some(hint) => err.with_hint(hint),
            None => err,
        }
    }
}

impl From<crate::config::Error> for CommandError {
    fn from(err: crate::config::Error) -> Self {
        let key = err.key.clone();
        CommandError::failed(err.to_string())
            .with_hint(format!("fix it with: git config {key} VALUE"))
    }
}

impl From<crate::review::Error> for CommandError {
    fn from(err: crate::review::Error) -> Self {
        use crate::review::Error as E;
        let message = err.to_string();
        match err {
            E::NothingBinds { ref configured, .. } if configured == "command" => {
                CommandError::failed(message).with_hint(
                    "the reviewer command's program is not on PATH or not executable: fix the first element of --reviewer-cmd / pair.reviewerCommand (an absolute path works); see git pair probe",
                )
            }
            E::NothingBinds { ref report, .. } => {
                // The missing CLIs by their install commands, as the realization data gives them.
                let installs: Vec<String> = report
                    .probed
                    .iter()
                    .filter_map(|c| Some(format!("{} ({})", c.name, c.install.as_deref()?)))
                    .collect();
                let install = if installs.is_empty() {
                    "install codex or claude".to_owned()
                } else {
                    format!("install {}", installs.join(" or "))
                };
                CommandError::failed(message).with_hint(format!(
                    "{install}; or review offline with the built-in checks: git config pair.reviewer builtin (this run only: git pair set reviewer builtin); or pass --reviewer-cmd; see git pair probe",
                ))
            }
            E::Surface(crate::review::surface::SurfaceError::UnknownRealization { .. }) => CommandError::failed(message)
                .with_hint("git pair probe lists the reviewers; set one with git config pair.reviewer NAME"),
            E::InvalidReviewerCommand { .. } => CommandError::usage(message),
            _ => CommandError::failed(message),
        }
    }
}

impl From<crate::sync::Error> for CommandError {
    fn from(err: crate::sync::Error) -> Self {
        use crate::sync::Error as E;
        let message = err.to_string();
        match err {
            E::Store(err) => err.into(),
            E::NoSuchRemote { .. } => CommandError::failed(message).with_hint(
                "git remote -v lists the configured remotes; a URL or a path works too",
            ),
            E::BadRemote { .. } => CommandError::failed(message)
                .with_hint("name a configured remote (git remote -v), a URL or a path"),
            E::Fetch { .. } => CommandError::failed(message).with_hint(
                "nothing local was changed; check the remote's URL (git remote -v), the network and your credentials",
            ),
            E::Push { .. } => CommandError::failed(message).with_hint(
                "local state is unchanged; check the remote's URL, your access rights and any server-side hook",
            ),
            E::PushRejected { .. } => CommandError::failed(message)
                .with_hint("local state is intact; run git pair push again"),
            E::Spawn { .. } => {
                CommandError::failed(message).with_hint("git pair needs git on PATH to sync")
            }
        }
    }
}

/// Folds a message onto one line so every error is exactly one `error:` line.
pub fn single_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_file_system_is_a_user_error_whatever_wrote() {
        let erofs = || std::io::Error::from_raw_os_error(libc::EROFS);
        let wrapped = OpsError::Render { source: erofs() };
        assert!(is_read_only_fs(&wrapped), "through the source chain");
        let e = CommandError::from(OpsError::Render { source: erofs() });
        assert!(e.read_only_fs);
        assert_eq!(e.kind, Kind::User);
        let other = OpsError::Render {
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        assert!(!is_read_only_fs(&other));
        assert!(!CommandError::from(other).read_only_fs);
        // An error that kept only the operating system's words.
        let words = OpsError::BadFile {
            what: "lock",
            path: "/r/.git/pair/locks/x".into(),
            expected: "writable",
            detail: "Read-only file system (os error 30)".into(),
        };
        assert!(is_read_only_fs(&words));
    }

    #[test]
    fn the_read_only_hint_names_the_codex_setting_where_it_goes_and_the_command() {
        let hint = read_only_hint("/w/repo/.git", "git pair coder-done --summary 'a b'");
        for needle in [
            "workspace-write",
            "~/.codex/config.toml",
            "[sandbox_workspace_write]",
            "writable_roots = [\"/w/repo/.git\"]",
            "codex -c 'sandbox_workspace_write.writable_roots=[\"/w/repo/.git\"]'",
            "run again: git pair coder-done --summary 'a b'",
        ] {
            assert!(hint.contains(needle), "{needle}: {hint}");
        }
        assert!(!hint.contains('\n'));
    }
}
