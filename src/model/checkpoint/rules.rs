//! The rules of checkpoints (SPEC §10), pure: a draft packet's bounds and required fields,
//! the secret scan of its text and of the files it carries, the assessment, what `verify`
//! compares, whether a recorded check may run, and what `archive` needs. No git, no files, no
//! processes: `ops::checkpoint` gathers the facts, asks these functions, and stores.

use crate::model::{
    Assessment, Body, CheckRun, Checkpoint, CheckpointId, CheckpointState, CommitId, ContextUse,
    Mismatch, TreeId,
};
use crate::secrets::{Finding, Scanner};

/// The bound on a packet's text: every text field given on the command line together.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
/// The most values of one list flag (`--criterion`, `--verified`, `--unverified`).
pub const MAX_LIST_ITEMS: usize = 64;
/// How much of the check's stdout, and of its stderr, the packet keeps (from the end).
pub const OUTPUT_TAIL_BYTES: usize = 2 * 1024;
/// The most changed files the secret scan reads from a snapshot before it gives up.
pub const MAX_SCAN_FILES: usize = 10_000;
/// The most bytes of changed files the secret scan reads from a snapshot before it gives up.
pub const MAX_SCAN_BYTES: u64 = 64 * 1024 * 1024;
/// What a locale, time zone or language not given is recorded as: never inferred.
pub const UNSPECIFIED: &str = "unspecified";

/// What `checkpoint create` was given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Draft {
    pub goal: Option<String>,
    pub next: String,
    pub criteria: Vec<String>,
    pub verified: Vec<String>,
    pub unverified: Vec<String>,
    pub language: Option<String>,
    pub locale: Option<String>,
    pub time_zone: Option<String>,
    pub check: Option<String>,
    pub context: Option<ContextUse>,
    pub authorized: bool,
}

/// Why a draft cannot become a packet. Nothing is stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("--next must not be empty: say what the next agent does first")]
    EmptyNext,
    #[error("{flag} must not be empty")]
    EmptyValue { flag: &'static str },
    #[error("too many {flag} values: {count} (at most {MAX_LIST_ITEMS})")]
    TooMany { flag: &'static str, count: usize },
    #[error("the checkpoint's text is {bytes} bytes; at most {MAX_TEXT_BYTES} (64 KiB) are stored")]
    TooLarge { bytes: usize },
    #[error("--context-limit must be a positive number of tokens")]
    ZeroLimit,
    #[error("--context-used {used} is more than --context-limit {limit}")]
    UsedOverLimit { used: u64, limit: u64 },
}

impl Invalid {
    /// Whether the command line itself is wrong (a usage error), rather than a packet out of
    /// bounds.
    pub fn is_usage(&self) -> bool {
        !matches!(self, Invalid::TooMany { .. } | Invalid::TooLarge { .. })
    }
}

/// Checks a draft's required fields and bounds.
pub fn validate(draft: &Draft) -> Result<(), Invalid> {
    if draft.next.trim().is_empty() {
        return Err(Invalid::EmptyNext);
    }
    let optional = [
        ("--goal", &draft.goal),
        ("--language", &draft.language),
        ("--locale", &draft.locale),
        ("--time-zone", &draft.time_zone),
        ("--check", &draft.check),
    ];
    for (flag, value) in optional {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(Invalid::EmptyValue { flag });
        }
    }
    let lists = [
        ("--criterion", &draft.criteria),
        ("--verified", &draft.verified),
        ("--unverified", &draft.unverified),
    ];
    for (flag, values) in lists {
        if values.len() > MAX_LIST_ITEMS {
            return Err(Invalid::TooMany {
                flag,
                count: values.len(),
            });
        }
        if values.iter().any(|v| v.trim().is_empty()) {
            return Err(Invalid::EmptyValue { flag });
        }
    }
    let bytes = draft.next.len()
        + optional
            .iter()
            .filter_map(|(_, v)| v.as_deref())
            .map(str::len)
            .sum::<usize>()
        + lists
            .iter()
            .flat_map(|(_, values)| values.iter())
            .map(String::len)
            .sum::<usize>();
    if bytes > MAX_TEXT_BYTES {
        return Err(Invalid::TooLarge { bytes });
    }
    if let Some(context) = draft.context {
        if context.limit == 0 {
            return Err(Invalid::ZeroLimit);
        }
        if context.used > context.limit {
            return Err(Invalid::UsedOverLimit {
                used: context.used,
                limit: context.limit,
            });
        }
    }
    Ok(())
}

/// Every text field of a packet, each named as the user gave it (`--next`, `--criterion 2`,
/// `check output`), for the secret scan.
pub fn text_fields(packet: &Checkpoint) -> Vec<(String, &str)> {
    let mut fields: Vec<(String, &str)> = Vec::new();
    if let Some(goal) = &packet.goal {
        fields.push(("--goal".into(), goal));
    }
    fields.push(("--next".into(), &packet.next));
    for (flag, values) in [
        ("--criterion", &packet.criteria),
        ("--verified", &packet.verified),
        ("--unverified", &packet.unverified),
    ] {
        for (i, value) in values.iter().enumerate() {
            fields.push((format!("{flag} {}", i + 1), value));
        }
    }
    fields.push(("--language".into(), &packet.language));
    fields.push(("--locale".into(), &packet.locale));
    fields.push(("--time-zone".into(), &packet.time_zone));
    if let Some(check) = &packet.check {
        fields.push(("--check".into(), &check.command));
        fields.push(("check output".into(), &check.output_tail));
    }
    fields.push(("branch".into(), &packet.repo.branch));
    fields.push(("path".into(), &packet.repo.path));
    fields
}

/// The secrets in a packet's text fields; each finding's path names the field.
pub fn scan_text(scanner: &Scanner, packet: &Checkpoint) -> Vec<Finding> {
    text_fields(packet)
        .into_iter()
        .flat_map(|(field, text)| scanner.scan(&field, text.as_bytes()))
        .collect()
}

/// Why the files a checkpoint carries could not all be scanned.
#[derive(Debug, thiserror::Error)]
pub enum ScanError<E: std::error::Error + 'static> {
    #[error(
        "the work tree differs from HEAD in more than {MAX_SCAN_FILES} files, too many to scan for secrets"
    )]
    TooManyFiles,
    #[error(
        "the work tree's changes since HEAD hold more than {} MiB, too much to scan for secrets",
        MAX_SCAN_BYTES / (1024 * 1024)
    )]
    TooManyBytes,
    #[error(transparent)]
    Read(E),
}

/// Scans the files a snapshot changed (path and object), reading each through `read`, within
/// [`MAX_SCAN_FILES`] and [`MAX_SCAN_BYTES`]: past either, nothing is claimed clean. Paths
/// the scanner's allowlist skips are not read.
pub fn scan_files<T, E: std::error::Error + 'static>(
    scanner: &Scanner,
    files: &[(String, T)],
    mut read: impl FnMut(&T) -> Result<Vec<u8>, E>,
) -> Result<Vec<Finding>, ScanError<E>> {
    let wanted: Vec<&(String, T)> = files
        .iter()
        .filter(|(path, _)| !scanner.skips_path(path))
        .collect();
    if wanted.len() > MAX_SCAN_FILES {
        return Err(ScanError::TooManyFiles);
    }
    let mut bytes = 0u64;
    let mut findings = Vec::new();
    for (path, object) in wanted {
        let data = read(object).map_err(ScanError::Read)?;
        bytes += data.len() as u64;
        if bytes > MAX_SCAN_BYTES {
            return Err(ScanError::TooManyBytes);
        }
        findings.extend(scanner.scan(path, &data));
    }
    Ok(findings)
}

/// A git operation in progress (or the index locked): handing over now is unsafe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InProgress {
    Merge,
    Rebase,
    CherryPick,
    Revert,
    Bisect,
    IndexLock,
}

impl InProgress {
    /// Every one, in the order they are reported.
    pub const ALL: [InProgress; 6] = [
        InProgress::Merge,
        InProgress::Rebase,
        InProgress::CherryPick,
        InProgress::Revert,
        InProgress::Bisect,
        InProgress::IndexLock,
    ];

    /// The names in the git directory whose presence means it is in progress.
    pub fn markers(self) -> &'static [&'static str] {
        match self {
            InProgress::Merge => &["MERGE_HEAD"],
            InProgress::Rebase => &["rebase-merge", "rebase-apply"],
            InProgress::CherryPick => &["CHERRY_PICK_HEAD"],
            InProgress::Revert => &["REVERT_HEAD"],
            InProgress::Bisect => &["BISECT_LOG"],
            InProgress::IndexLock => &["index.lock"],
        }
    }

    /// What is going on, naming the marker found: `a merge is in progress (MERGE_HEAD)`.
    pub fn describe(self, marker: &str) -> String {
        let what = match self {
            InProgress::Merge => "a merge is in progress",
            InProgress::Rebase => "a rebase (or git am) is in progress",
            InProgress::CherryPick => "a cherry-pick is in progress",
            InProgress::Revert => "a revert is in progress",
            InProgress::Bisect => "a bisect is in progress",
            InProgress::IndexLock => "the index is locked by another git process",
        };
        format!("{what} ({marker})")
    }

    /// How to get out of it.
    pub fn way_on(self) -> &'static str {
        match self {
            InProgress::Merge => "finish or abort the merge (git merge --continue / --abort)",
            InProgress::Rebase => "finish or abort the rebase (git rebase --continue / --abort)",
            InProgress::CherryPick => {
                "finish or abort the cherry-pick (git cherry-pick --continue / --abort)"
            }
            InProgress::Revert => "finish or abort the revert (git revert --continue / --abort)",
            InProgress::Bisect => "end the bisect (git bisect reset)",
            InProgress::IndexLock => {
                "wait for the other git process to end (remove .git/index.lock only if none runs)"
            }
        }
    }
}

/// What the assessment reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pressure {
    /// The human authorized a handoff.
    pub authorized: bool,
    /// The context use the agent reported, if any.
    pub context: Option<ContextUse>,
    /// `pair.handoffThreshold`.
    pub threshold: f64,
    /// Compactions observed in the current context.
    pub compactions: u32,
}

/// How many compactions make a context due for a handoff.
pub const COMPACTIONS_FOR_HANDOFF: u32 = 2;

/// The assessment and why: `handoff-deferred` while anything makes a handoff unsafe now
/// (`unsafe_now`, each described: a git operation in progress, the run's own review
/// running); `handoff-ready` when authorized and the context is at or over the threshold or
/// was compacted twice; `continue` otherwise.
pub fn assess(pressure: &Pressure, unsafe_now: &[String]) -> (Assessment, Vec<String>) {
    if !unsafe_now.is_empty() {
        return (Assessment::HandoffDeferred, unsafe_now.to_vec());
    }
    let mut due = Vec::new();
    let mut not_due = Vec::new();
    match pressure.context {
        Some(context) if context.pressure() >= pressure.threshold => due.push(format!(
            "context at {} of {} tokens ({}%, threshold {}%)",
            context.used,
            context.limit,
            percent(context.pressure()),
            percent(pressure.threshold)
        )),
        Some(context) => not_due.push(format!(
            "context at {} of {} tokens ({}%, under the threshold of {}%)",
            context.used,
            context.limit,
            percent(context.pressure()),
            percent(pressure.threshold)
        )),
        None => not_due.push("no context use reported (--context-used/--context-limit)".into()),
    }
    let compactions = pressure.compactions;
    if compactions >= COMPACTIONS_FOR_HANDOFF {
        due.push(format!("{compactions} context compactions observed"));
    } else {
        not_due.push(format!(
            "{compactions} context compaction{} observed ({COMPACTIONS_FOR_HANDOFF} make a handoff due)",
            if compactions == 1 { "" } else { "s" }
        ));
    }
    match (due.is_empty(), pressure.authorized) {
        (false, true) => {
            let mut reasons = vec!["authorized".to_owned()];
            reasons.extend(due);
            (Assessment::HandoffReady, reasons)
        }
        (false, false) => {
            let mut reasons = due;
            reasons.push("a handoff is due but not authorized (--authorized)".into());
            (Assessment::Continue, reasons)
        }
        (true, _) => (Assessment::Continue, not_due),
    }
}

fn percent(ratio: f64) -> String {
    let p = (ratio * 1000.0).round() / 10.0;
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.1}")
    }
}

/// The last bytes of a check's stdout and stderr, lossily decoded, stdout first.
pub fn output_tail(stdout: &[u8], stderr: &[u8]) -> String {
    let tail = |bytes: &[u8]| {
        let start = bytes.len().saturating_sub(OUTPUT_TAIL_BYTES);
        // A cut inside a UTF-8 sequence shows as a replacement character, never a panic.
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    };
    let (out, err) = (tail(stdout), tail(stderr));
    match (out.trim_end().is_empty(), err.trim_end().is_empty()) {
        (false, false) => format!("{}\n{}", out.trim_end(), err.trim_end()),
        (false, true) => out.trim_end().to_owned(),
        (true, false) => err.trim_end().to_owned(),
        (true, true) => String::new(),
    }
}

/// What the destination looks like, as `verify` observes it.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    pub path: &'a str,
    /// `HEAD`'s commit; `None` when unborn.
    pub head: Option<CommitId>,
    pub branch: &'a str,
    /// The work tree's snapshot tree id.
    pub status: TreeId,
    /// The check as re-run here, when there is one.
    pub check: Option<&'a CheckRun>,
}

/// Every recorded field that differs in `found`, in the order path, head, branch, status,
/// check; the path only unless `allow_other_path`.
pub fn compare(
    recorded: &Checkpoint,
    found: &Observed<'_>,
    allow_other_path: bool,
) -> Vec<Mismatch> {
    let mut out = compare_repo(recorded, found, allow_other_path);
    if let Some(check) = &recorded.check {
        let now = found
            .check
            .map_or_else(|| "not run".to_owned(), CheckRun::outcome);
        if check.outcome() != now {
            out.push(Mismatch {
                field: "check".into(),
                expected: check.outcome(),
                found: now,
            });
        }
    }
    out
}

/// [`compare`] without the check: how the repository itself differs.
pub fn compare_repo(
    recorded: &Checkpoint,
    found: &Observed<'_>,
    allow_other_path: bool,
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut differ = |field: &str, expected: &str, found: &str| {
        if expected != found {
            out.push(Mismatch {
                field: field.to_owned(),
                expected: expected.to_owned(),
                found: found.to_owned(),
            });
        }
    };
    if !allow_other_path {
        differ("path", &recorded.repo.path, found.path);
    }
    differ(
        "head",
        &recorded.repo.head.to_string(),
        &found
            .head
            .map_or_else(|| "(unborn)".to_owned(), |head| head.to_string()),
    );
    differ("branch", &recorded.repo.branch, found.branch);
    differ(
        "status",
        &recorded.repo.status.to_string(),
        &found.status.to_string(),
    );
    out
}

/// Whether `name`, read from a record, is safe to hand to `git checkout -b` as a branch name:
/// no leading `-`, no whitespace or control characters, none of git's forbidden sequences.
/// git validates the name again; this keeps a record from ever reading as an option.
pub fn is_plain_branch_name(name: &str) -> bool {
    !name.is_empty()
        && name != "HEAD"
        && !name.starts_with(['-', '/'])
        && !name.ends_with(['/', '.'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("@{")
        && !name.contains("//")
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c))
}

/// Why a recorded check does not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckRefusal {
    /// The check was recorded elsewhere and nobody here confirmed it.
    #[error(
        "checkpoint {id} records the check `{command}`, made on {host}:{path}; a recorded check never runs unconfirmed, so nothing was run or recorded"
    )]
    NotConfirmed {
        id: String,
        command: String,
        host: String,
        path: String,
        /// Verify runs in a work tree at another path ([`CheckRefusal::at_other_path`]): the
        /// hint's command needs `--allow-other-path`.
        other_path: bool,
    },
    /// `--check` names another command than the recorded one.
    #[error("--check `{given}` is not the check checkpoint {id} records (`{recorded}`)")]
    Different {
        id: String,
        given: String,
        recorded: String,
    },
    /// `--check` was given, but the checkpoint records no check.
    #[error("checkpoint {id} records no check, so --check `{given}` has nothing to confirm")]
    NothingRecorded { id: String, given: String },
    /// The check is in `pair.trustedChecks` (or this clone recorded it), but the work tree was
    /// laid down by restoring a checkpoint made elsewhere: the files the check would run (a Makefile, a build script)
    /// came from there, so the trusted command string vouches for nothing.
    #[error(
        "checkpoint {id} records the check `{command}`, trusted here, but this work tree was laid down by restoring checkpoint {restored}, made elsewhere: the files that check would run came from there, so it is not run on trust (nothing was run or recorded)"
    )]
    TrustedOnForeignTree {
        id: String,
        command: String,
        restored: String,
        /// As for [`CheckRefusal::NotConfirmed`].
        other_path: bool,
    },
}

impl CheckRefusal {
    /// The refusal as met in a work tree at another path than the checkpoint's (or not): the
    /// way on it names then carries `--allow-other-path`.
    pub fn at_other_path(mut self, other: bool) -> Self {
        if let CheckRefusal::NotConfirmed { other_path, .. }
        | CheckRefusal::TrustedOnForeignTree { other_path, .. } = &mut self
        {
            *other_path = other;
        }
        self
    }
}

/// Whether `verify` may run the checkpoint's check: the command to run (`None`: there is
/// none), or why not. Records are data, never instructions: a recorded check runs only when
/// the local user names it again (`given`), lists it in `pair.trustedChecks` (`trusted`), or
/// this very clone made the checkpoint with it (`made_here`: a receipt only `create` writes,
/// in `.git/pair/`, which is never shared).
pub fn check_to_run(
    packet: &Checkpoint,
    given: Option<&str>,
    trusted: &[String],
    made_here: bool,
) -> Result<Option<String>, CheckRefusal> {
    let id = packet.checkpoint.to_string();
    let Some(recorded) = packet.check.as_ref().map(|c| c.command.as_str()) else {
        return match given {
            Some(given) => Err(CheckRefusal::NothingRecorded {
                id,
                given: given.to_owned(),
            }),
            None => Ok(None),
        };
    };
    match given {
        Some(given) if given == recorded => Ok(Some(recorded.to_owned())),
        Some(given) => Err(CheckRefusal::Different {
            id,
            given: given.to_owned(),
            recorded: recorded.to_owned(),
        }),
        None if made_here || trusted.iter().any(|t| t == recorded) => Ok(Some(recorded.to_owned())),
        None => Err(CheckRefusal::NotConfirmed {
            id,
            command: recorded.to_owned(),
            host: packet.repo.host.clone(),
            path: packet.repo.path.clone(),
            other_path: false,
        }),
    }
}

/// A checkpoint's state after the records of its run (`None`: no such checkpoint there).
pub fn state_of<'a>(
    id: &CheckpointId,
    bodies: impl IntoIterator<Item = &'a Body>,
) -> Option<CheckpointState> {
    let mut state = None;
    for body in bodies {
        match body {
            Body::Checkpoint(c) if &c.checkpoint == id => state = Some(CheckpointState::Unverified),
            Body::CheckpointVerified(v) if &v.checkpoint == id => {
                state = state.map(|s: CheckpointState| s.after_verification(v.result));
            }
            Body::CheckpointArchived(a) if &a.checkpoint == id && state.is_some() => {
                state = Some(CheckpointState::Archived);
            }
            _ => {}
        }
    }
    state
}

/// Where a checkpoint made in this work tree went: verified (and maybe archived) in another
/// work tree, so the context here is the handoff's retired source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedOver {
    pub checkpoint: CheckpointId,
    /// Where its latest passing verification was recorded.
    pub host: String,
    pub path: String,
    /// The source was archived (`SOURCE_ARCHIVED_CONFIRMED`).
    pub archived: bool,
    /// HEAD and status when the checkpoint was made, to tell work done here since.
    pub head: CommitId,
    pub status: TreeId,
}

/// Whether checkpoint `id` (a run's latest) was made in this work tree (`host`, `path`) and
/// verified in another one since: the handoff went there. A verification in the source
/// itself, or a later regression, is no handoff.
pub fn handed_over<'a>(
    id: &CheckpointId,
    host: &str,
    path: &str,
    bodies: impl IntoIterator<Item = &'a Body>,
) -> Option<HandedOver> {
    let mut made_here: Option<&Checkpoint> = None;
    let mut verified_at: Option<(String, String)> = None;
    let mut archived = false;
    for body in bodies {
        match body {
            Body::Checkpoint(c) if &c.checkpoint == id => {
                made_here = (c.repo.host == host && c.repo.path == path).then_some(c);
            }
            Body::CheckpointVerified(v) if &v.checkpoint == id => {
                verified_at = match v.result {
                    crate::model::VerifyResult::Verified if !(v.host == host && v.path == path) => {
                        Some((v.host.clone(), v.path.clone()))
                    }
                    crate::model::VerifyResult::Verified => verified_at,
                    crate::model::VerifyResult::Regression if archived => verified_at,
                    crate::model::VerifyResult::Regression => None,
                };
            }
            Body::CheckpointArchived(a) if &a.checkpoint == id => archived = true,
            _ => {}
        }
    }
    let packet = made_here?;
    let (host, path) = verified_at?;
    Some(HandedOver {
        checkpoint: id.clone(),
        host,
        path,
        archived,
        head: packet.repo.head,
        status: packet.repo.status,
    })
}

/// What `archive` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Archive {
    /// Record the archive.
    Record,
    /// Already archived: nothing to record (idempotent).
    AlreadyArchived,
    /// Refused, recording nothing: every prerequisite missing, one phrase each. `state` is
    /// where the checkpoint really stands — `HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE` only
    /// when a passing verification is recorded, never for a missing one.
    Refused {
        state: CheckpointState,
        missing: Vec<String>,
        /// When this is the source and it changed since the checkpoint: how (that work
        /// would be stranded).
        changes: Vec<Mismatch>,
    },
}

/// What `archive` is decided on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFacts {
    pub state: CheckpointState,
    /// `--authorize-archive`, or the standing `pair.archiveAuthorized`.
    pub authorized: bool,
    /// Git operations in progress in this work tree, each described.
    pub in_progress: Vec<String>,
    /// When this work tree is the checkpoint's source (same host and path), how it differs
    /// from the checkpoint now (HEAD and status); `None` elsewhere.
    pub source_changes: Option<Vec<Mismatch>>,
    /// This work tree is not at the checkpoint's recorded path (another clone or work tree):
    /// verifying here needs `--allow-other-path`.
    pub other_path: bool,
}

/// The `checkpoint verify` command to run here: with `--allow-other-path` where the work
/// tree is not the checkpoint's recorded path (without it, the path alone is a REGRESSION).
pub fn verify_command(id: &str, other_path: bool) -> String {
    format!(
        "git pair checkpoint verify {id}{}",
        if other_path {
            " --allow-other-path"
        } else {
            ""
        }
    )
}

/// What a source left active risks, said with every refusal.
pub const AUTO_RESUME_RISK: &str = "until it is archived the source context is still active: an agent session there may resume on its own (a resumed or scheduled session, a hook that wakes it) and go on changing its work tree beside the destination";

/// Decides `archive` for checkpoint `id`: archived stays archived (idempotent); otherwise
/// every prerequisite is checked and each missing one named — a passing verification, the
/// archive's own authorization, no git operation in progress here, and (in the source itself)
/// no change since the checkpoint.
pub fn archive(id: &CheckpointId, facts: &ArchiveFacts) -> Archive {
    if facts.state == CheckpointState::Archived {
        return Archive::AlreadyArchived;
    }
    let mut missing = Vec::new();
    match facts.state {
        CheckpointState::Unverified => missing.push(format!(
            "a passing verification: none is recorded (run {} where the task continues)",
            verify_command(id.as_str(), facts.other_path)
        )),
        CheckpointState::Regression => missing.push(format!(
            "a passing verification: the latest one found a HANDOFF REGRESSION (fix it, then {} again)",
            verify_command(id.as_str(), facts.other_path)
        )),
        CheckpointState::VerifiedSourceActive | CheckpointState::Archived => {}
    }
    if !facts.authorized {
        missing.push(
            "the archive's own authorization: --authorize-archive once the human agreed, or the standing preference git config pair.archiveAuthorized true".to_owned(),
        );
    }
    for what in &facts.in_progress {
        missing.push(format!("no git operation in progress: {what}"));
    }
    let changes = facts.source_changes.clone().unwrap_or_default();
    if !changes.is_empty() {
        missing.push(format!(
            "the source unchanged since the checkpoint: {}",
            changes
                .iter()
                .map(|m| format!("{}: expected {}, found {}", m.field, m.expected, m.found))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if missing.is_empty() {
        Archive::Record
    } else {
        Archive::Refused {
            state: facts.state,
            missing,
            changes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RepoIdentity, VerifyResult};

    fn packet() -> Checkpoint {
        Checkpoint {
            checkpoint: CheckpointId::parse("ck-0123456789ab").expect("id"),
            repo: RepoIdentity {
                path: "/src/app".into(),
                head: CommitId::parse(&"a".repeat(40)).expect("hex"),
                branch: "main".into(),
                status: TreeId::parse(&"b".repeat(40)).expect("hex"),
                host: "laptop".into(),
            },
            check: Some(CheckRun {
                command: "make test".into(),
                exit_code: Some(0),
                end: "exited".into(),
                output_tail: "ok".into(),
                duration_ms: 5,
            }),
            goal: Some("ship it".into()),
            next: "write the docs".into(),
            criteria: vec!["tests pass".into()],
            verified: vec!["unit tests ran".into()],
            unverified: vec!["works on windows".into()],
            language: "繁體中文（台灣）".into(),
            locale: UNSPECIFIED.into(),
            time_zone: UNSPECIFIED.into(),
            context: None,
            authorized: false,
            compactions: 0,
            assessment: Assessment::Continue,
            reasons: vec![],
        }
    }

    fn draft(next: &str) -> Draft {
        Draft {
            next: next.into(),
            ..Draft::default()
        }
    }

    #[test]
    fn drafts_need_a_next_action_and_stay_in_bounds() {
        assert_eq!(validate(&draft("go on")), Ok(()));
        assert_eq!(validate(&draft("  \n")), Err(Invalid::EmptyNext));
        let cases: Vec<(Draft, Invalid)> = vec![
            (
                Draft {
                    goal: Some(" ".into()),
                    ..draft("x")
                },
                Invalid::EmptyValue { flag: "--goal" },
            ),
            (
                Draft {
                    criteria: vec!["ok".into(), "".into()],
                    ..draft("x")
                },
                Invalid::EmptyValue {
                    flag: "--criterion",
                },
            ),
            (
                Draft {
                    verified: vec!["v".into(); MAX_LIST_ITEMS + 1],
                    ..draft("x")
                },
                Invalid::TooMany {
                    flag: "--verified",
                    count: MAX_LIST_ITEMS + 1,
                },
            ),
            (
                Draft {
                    unverified: vec!["u".repeat(40 * 1024), "u".repeat(30 * 1024)],
                    ..draft("x")
                },
                Invalid::TooLarge {
                    bytes: 70 * 1024 + 1,
                },
            ),
            (
                Draft {
                    context: Some(ContextUse { used: 1, limit: 0 }),
                    ..draft("x")
                },
                Invalid::ZeroLimit,
            ),
            (
                Draft {
                    context: Some(ContextUse {
                        used: 11,
                        limit: 10,
                    }),
                    ..draft("x")
                },
                Invalid::UsedOverLimit {
                    used: 11,
                    limit: 10,
                },
            ),
        ];
        for (draft, want) in cases {
            assert_eq!(validate(&draft), Err(want));
        }
        let at_bound = Draft {
            unverified: vec!["u".repeat(MAX_TEXT_BYTES - 1)],
            ..draft("x")
        };
        assert_eq!(validate(&at_bound), Ok(()));
        assert!(Invalid::EmptyNext.is_usage());
        assert!(!Invalid::TooLarge { bytes: 1 }.is_usage());
    }

    #[test]
    fn assessment_table() {
        let ctx = |used, limit| Some(ContextUse { used, limit });
        let none: &[String] = &[];
        let cases = [
            // authorized, context, compactions → assessment
            (true, ctx(86_000, 100_000), 0, Assessment::HandoffReady),
            (true, ctx(85_000, 100_000), 0, Assessment::HandoffReady),
            (true, ctx(84_999, 100_000), 0, Assessment::Continue),
            (false, ctx(99_000, 100_000), 0, Assessment::Continue),
            (true, None, 2, Assessment::HandoffReady),
            (true, None, 1, Assessment::Continue),
            (false, None, 5, Assessment::Continue),
            (true, ctx(10, 100), 3, Assessment::HandoffReady),
        ];
        for (authorized, context, compactions, want) in cases {
            let pressure = Pressure {
                authorized,
                context,
                threshold: 0.85,
                compactions,
            };
            let (got, reasons) = assess(&pressure, none);
            assert_eq!(got, want, "{pressure:?}: {reasons:?}");
            assert!(!reasons.is_empty());
        }
        let (_, reasons) = assess(
            &Pressure {
                authorized: true,
                context: ctx(86_000, 100_000),
                threshold: 0.85,
                compactions: 0,
            },
            none,
        );
        assert_eq!(
            reasons,
            [
                "authorized",
                "context at 86000 of 100000 tokens (86%, threshold 85%)"
            ]
        );
        let deferred = assess(
            &Pressure {
                authorized: true,
                context: ctx(99, 100),
                threshold: 0.85,
                compactions: 9,
            },
            &[InProgress::Rebase.describe("rebase-merge")],
        );
        assert_eq!(
            deferred,
            (
                Assessment::HandoffDeferred,
                vec!["a rebase (or git am) is in progress (rebase-merge)".to_owned()]
            )
        );
    }

    #[test]
    fn every_text_field_is_scanned_and_named() {
        let mut p = packet();
        // Built at run time, so this file holds no secret-shaped line itself.
        let token = ["Bear", "er kT9xQ2mZ7vR4pL8wN3yH6jB1cF5dG0sA"].concat();
        p.unverified
            .push(format!("curl -H 'Authorization: {token}'"));
        let findings = scan_text(&Scanner::builtin(), &p);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].kind, "bearer");
        assert_eq!(findings[0].describe(), "bearer in --unverified 2:1");
        assert!(!format!("{findings:?}").contains("kT9xQ2"));
        let mut p = packet();
        if let Some(check) = p.check.as_mut() {
            check.output_tail = format!("debug: {token}\n");
        }
        let findings = scan_text(&Scanner::builtin(), &p);
        assert_eq!(findings[0].path, "check output");
        assert!(scan_text(&Scanner::builtin(), &packet()).is_empty());
    }

    #[test]
    fn file_scan_is_bounded() {
        #[derive(Debug, thiserror::Error)]
        #[error("unreadable")]
        struct Unreadable;
        let scanner = Scanner::builtin();
        let token = ["TOKEN=Bear", "er kT9xQ2mZ7vR4pL8wN3yH6jB1cF5dG0sA\n"]
            .concat()
            .into_bytes();
        let files = vec![
            ("a.txt".to_owned(), b"hello\n".to_vec()),
            (".env".to_owned(), token),
        ];
        let found =
            scan_files(&scanner, &files, |b| Ok::<_, Unreadable>(b.clone())).expect("scans");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, ".env");
        let many: Vec<(String, Vec<u8>)> = (0..=MAX_SCAN_FILES)
            .map(|i| (format!("f{i}"), Vec::new()))
            .collect();
        assert!(matches!(
            scan_files(&scanner, &many, |b| Ok::<_, Unreadable>(b.clone())),
            Err(ScanError::TooManyFiles)
        ));
        let big = vec![("big".to_owned(), ())];
        let huge = usize::try_from(MAX_SCAN_BYTES).expect("fits") + 1;
        assert!(matches!(
            scan_files(&scanner, &big, |_| Ok::<_, Unreadable>(vec![b'x'; huge])),
            Err(ScanError::TooManyBytes)
        ));
    }

    #[test]
    fn verify_compares_each_field_and_the_check() {
        let p = packet();
        let ok_check = p.check.clone().expect("check");
        let same = Observed {
            path: "/src/app",
            head: Some(p.repo.head),
            branch: "main",
            status: p.repo.status,
            check: Some(&ok_check),
        };
        assert!(compare(&p, &same, false).is_empty());
        let failed = CheckRun {
            exit_code: Some(1),
            ..ok_check.clone()
        };
        let other_head = CommitId::parse(&"c".repeat(40)).expect("hex");
        let moved = Observed {
            path: "/elsewhere",
            head: Some(other_head),
            branch: "HEAD",
            check: Some(&failed),
            ..same
        };
        let fields: Vec<String> = compare(&p, &moved, false)
            .iter()
            .map(|m| format!("{}: expected {}, found {}", m.field, m.expected, m.found))
            .collect();
        assert_eq!(
            fields,
            [
                "path: expected /src/app, found /elsewhere".to_owned(),
                format!("head: expected {}, found {other_head}", p.repo.head),
                "branch: expected main, found HEAD".to_owned(),
                "check: expected exit 0, found exit 1".to_owned(),
            ]
        );
        assert_eq!(compare(&p, &moved, true).len(), 3, "path not compared");
    }

    #[test]
    fn branch_names_from_records_are_plain_or_refused() {
        for good in ["main", "feature/x", "fix-1.2", "繁體"] {
            assert!(is_plain_branch_name(good), "{good}");
        }
        for bad in [
            "",
            "HEAD",
            "-f",
            "--orphan",
            "a b",
            "a..b",
            "x.lock",
            "a:b",
            "a~1",
            "x/",
            "/x",
            "a\\b",
            "a@{1}",
            "tab\there",
        ] {
            assert!(!is_plain_branch_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_recorded_check_runs_only_when_confirmed() {
        let p = packet();
        let trusted = vec!["make test".to_owned()];
        assert_eq!(
            check_to_run(&p, Some("make test"), &[], false),
            Ok(Some("make test".into()))
        );
        assert_eq!(
            check_to_run(&p, None, &trusted, false),
            Ok(Some("make test".into()))
        );
        assert_eq!(
            check_to_run(&p, None, &[], true),
            Ok(Some("make test".into()))
        );
        assert!(matches!(
            check_to_run(&p, None, &["make tests".into()], false),
            Err(CheckRefusal::NotConfirmed { .. })
        ));
        assert!(matches!(
            check_to_run(&p, Some("rm -rf /"), &trusted, true),
            Err(CheckRefusal::Different { .. })
        ));
        let mut none = packet();
        none.check = None;
        assert_eq!(check_to_run(&none, None, &[], false), Ok(None));
        assert!(matches!(
            check_to_run(&none, Some("x"), &[], false),
            Err(CheckRefusal::NothingRecorded { .. })
        ));
    }

    #[test]
    fn state_folds_over_the_runs_records_and_archive_follows_it() {
        use crate::model::{CheckpointArchived, CheckpointVerified};
        let p = packet();
        let id = p.checkpoint.clone();
        let verified = |result| {
            Body::CheckpointVerified(CheckpointVerified {
                checkpoint: id.clone(),
                result,
                mismatches: vec![],
                path: "/d".into(),
                host: "h".into(),
                allow_other_path: true,
                check: None,
            })
        };
        let archived = Body::CheckpointArchived(CheckpointArchived {
            checkpoint: id.clone(),
            path: "/d".into(),
            host: "h".into(),
        });
        let created = Body::Checkpoint(p.clone());
        assert_eq!(state_of(&id, [&verified(VerifyResult::Verified)]), None);
        assert_eq!(state_of(&id, [&created]), Some(CheckpointState::Unverified));
        let regression = verified(VerifyResult::Regression);
        let passed = verified(VerifyResult::Verified);
        assert_eq!(
            state_of(&id, [&created, &passed, &regression]),
            Some(CheckpointState::Regression)
        );
        assert_eq!(
            state_of(&id, [&created, &regression, &passed, &archived]),
            Some(CheckpointState::Archived)
        );

        let facts = |state| ArchiveFacts {
            state,
            authorized: true,
            in_progress: vec![],
            source_changes: None,
            other_path: false,
        };
        let refused = |a: Archive| match a {
            Archive::Refused { state, missing, .. } => (state, missing),
            other => panic!("not refused: {other:?}"),
        };
        let (state, missing) = refused(archive(&id, &facts(CheckpointState::Unverified)));
        assert_eq!(
            state,
            CheckpointState::Unverified,
            "never reported verified"
        );
        assert_eq!(missing.len(), 1);
        assert!(missing[0].contains("a passing verification"));
        let (state, _) = refused(archive(&id, &facts(CheckpointState::Regression)));
        assert_eq!(state, CheckpointState::Regression);
        assert_eq!(
            archive(&id, &facts(CheckpointState::VerifiedSourceActive)),
            Archive::Record
        );
        assert_eq!(
            archive(
                &id,
                &ArchiveFacts {
                    source_changes: Some(vec![]),
                    ..facts(CheckpointState::VerifiedSourceActive)
                }
            ),
            Archive::Record
        );
        let changed = vec![Mismatch {
            field: "status".into(),
            expected: "a".into(),
            found: "b".into(),
        }];
        // Everything missing at once is named, each on its own.
        let all = archive(
            &id,
            &ArchiveFacts {
                state: CheckpointState::Unverified,
                authorized: false,
                in_progress: vec!["a rebase (or git am) is in progress (rebase-merge)".into()],
                source_changes: Some(changed.clone()),
                other_path: false,
            },
        );
        let Archive::Refused {
            state,
            missing,
            changes,
        } = all
        else {
            panic!("refused")
        };
        assert_eq!(state, CheckpointState::Unverified);
        assert_eq!(changes, changed);
        assert_eq!(missing.len(), 4, "{missing:?}");
        assert!(
            missing[1].contains("--authorize-archive")
                && missing[1].contains("pair.archiveAuthorized")
        );
        assert!(missing[2].contains("rebase"));
        assert!(missing[3].contains("status: expected a, found b"));
        let (state, missing) = refused(archive(
            &id,
            &ArchiveFacts {
                authorized: false,
                ..facts(CheckpointState::VerifiedSourceActive)
            },
        ));
        assert_eq!(state, CheckpointState::VerifiedSourceActive);
        assert_eq!(missing.len(), 1);
        assert_eq!(
            archive(
                &id,
                &ArchiveFacts {
                    authorized: false,
                    ..facts(CheckpointState::Archived)
                }
            ),
            Archive::AlreadyArchived
        );
    }

    #[test]
    fn a_handoff_went_elsewhere_only_when_verified_in_another_work_tree() {
        use crate::model::{CheckpointArchived, CheckpointVerified};
        let p = packet();
        let id = p.checkpoint.clone();
        let verified = |result, host: &str, path: &str| {
            Body::CheckpointVerified(CheckpointVerified {
                checkpoint: id.clone(),
                result,
                mismatches: vec![],
                path: path.into(),
                host: host.into(),
                allow_other_path: true,
                check: None,
            })
        };
        let created = Body::Checkpoint(p.clone());
        let (host, path) = (p.repo.host.as_str(), p.repo.path.as_str());
        let here = verified(VerifyResult::Verified, host, path);
        let there = verified(VerifyResult::Verified, "b", "/dest");
        let broke = verified(VerifyResult::Regression, "b", "/dest");
        let archived = Body::CheckpointArchived(CheckpointArchived {
            checkpoint: id.clone(),
            path: "/dest".into(),
            host: "b".into(),
        });
        assert_eq!(handed_over(&id, host, path, [&created]), None);
        assert_eq!(
            handed_over(&id, host, path, [&created, &here]),
            None,
            "verified at the source"
        );
        let went = handed_over(&id, host, path, [&created, &there]).expect("handed over");
        assert_eq!(
            (went.host.as_str(), went.path.as_str(), went.archived),
            ("b", "/dest", false)
        );
        assert_eq!(
            handed_over(&id, host, path, [&created, &there, &broke]),
            None
        );
        let went = handed_over(&id, host, path, [&created, &there, &archived]).expect("archived");
        assert!(went.archived);
        assert_eq!(
            handed_over(&id, "b", "/dest", [&created, &there]),
            None,
            "the destination is not the source"
        );
    }

    #[test]
    fn the_manifest_projects_the_latest_checkpoint_and_the_current_contexts_compactions() {
        use crate::model::{
            CheckpointArchived, CheckpointVerified, Compaction, LatestCheckpoint, Manifest, Record,
        };
        let rec = |seq, body| Record::new(seq, "2026-11-29T23:15:00Z".into(), body);
        let first = packet();
        let mut second = packet();
        second.checkpoint = CheckpointId::parse("ck-ba9876543210").expect("id");
        second.assessment = Assessment::HandoffReady;
        let verified = |id: &CheckpointId| {
            Body::CheckpointVerified(CheckpointVerified {
                checkpoint: id.clone(),
                result: VerifyResult::Verified,
                mismatches: vec![],
                path: "/d".into(),
                host: "h".into(),
                allow_other_path: false,
                check: None,
            })
        };
        let mut records = vec![
            rec(1, Body::Compaction(Compaction {})),
            rec(2, Body::Checkpoint(first.clone())),
            rec(3, Body::Compaction(Compaction {})),
            rec(4, Body::Checkpoint(second.clone())),
            // Verifying an older checkpoint leaves the latest one as it is.
            rec(5, verified(&first.checkpoint)),
        ];
        let m = Manifest::project(&records);
        assert_eq!(m.compactions, 2);
        assert_eq!(
            m.checkpoint,
            Some(LatestCheckpoint {
                id: second.checkpoint.clone(),
                assessment: Assessment::HandoffReady,
                state: CheckpointState::Unverified,
            })
        );
        records.push(rec(6, verified(&second.checkpoint)));
        records.push(rec(
            7,
            Body::CheckpointArchived(CheckpointArchived {
                checkpoint: second.checkpoint.clone(),
                path: "/d".into(),
                host: "h".into(),
            }),
        ));
        records.push(rec(8, Body::Compaction(Compaction {})));
        let m = Manifest::project(&records);
        assert_eq!(
            m.checkpoint.as_ref().map(|c| c.state),
            Some(CheckpointState::Archived)
        );
        assert_eq!(
            m.compactions, 1,
            "archiving retires the old context's count"
        );
        // A run without checkpoints projects no new keys: old manifests stay byte-identical.
        let plain = serde_json::to_value(Manifest::empty()).expect("ser");
        assert!(plain.get("checkpoint").is_none() && plain.get("compactions").is_none());
        // Records round-trip, and a compaction record carries nothing but its kind.
        for record in &records {
            let back = Record::from_json(&record.to_json()).expect("parses");
            assert_eq!(&back, record);
        }
        let json = String::from_utf8(records[0].to_json()).expect("utf-8");
        assert!(json.ends_with("\"kind\":\"compaction\"}\n"), "{json}");
    }

    #[test]
    fn output_tail_keeps_the_end_of_both_streams() {
        assert_eq!(output_tail(b"ok\n", b""), "ok");
        assert_eq!(output_tail(b"", b"boom\n"), "boom");
        assert_eq!(output_tail(b"a\n", b"b\n"), "a\nb");
        let long = "é".repeat(OUTPUT_TAIL_BYTES);
        let tail = output_tail(long.as_bytes(), b"");
        assert!(tail.len() <= OUTPUT_TAIL_BYTES + 3, "{}", tail.len());
        assert!(tail.ends_with('é'));
    }
}
