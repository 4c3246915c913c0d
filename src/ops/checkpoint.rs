//! Checkpoints (SPEC §10): moving a task to a fresh agent context or another machine. The
//! order of the steps and what is stored: `create` (validate, refuse while git is between two
//! states or the run's review runs, snapshot the work tree, run the check, scan every text
//! field and every changed file for secrets, and only then store the packet with its snapshot
//! in the active run — with none, in a new run that only carries it), `show`,
//! `verify` (compare and re-run a confirmed check; recorded either way), `restore`,
//! `archive`, and `compaction`. The rules themselves are `crate::checkpoint`'s.

use std::path::Path;
use std::time::Duration;

use gix::ObjectId;

use super::{Context, Error};
use crate::model::checkpoint::rules::{self as rules, Draft, Observed, Pressure};
use crate::model::report::checkpoint as report;
use crate::model::settings::{self, Setting};
use crate::model::{
    Assessment, Body, CheckRun, Checkpoint, CheckpointArchived, CheckpointId, CheckpointState,
    CheckpointVerified, Compaction, NextAction, RepoIdentity, RunId, Start, VerifyResult,
};
use crate::process::{Cancel, End, Limits, Spawn};
use crate::secrets::Finding;
use crate::store::{Append, RunState};
use crate::worktree::Checkout;

/// How long a check may run unless `--check-timeout` says otherwise.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(600);
/// Stdout kept from a check (its tail is what is stored).
const CHECK_STDOUT_CAP: usize = 16 * 1024 * 1024;
const GITLINK: u32 = 0o160000;

/// What `checkpoint create` was asked to record.
#[derive(Debug, Clone)]
pub struct CreateRequest {
    pub draft: Draft,
    pub check_timeout: Duration,
}

/// Records a checkpoint: in the active run, or with none in a run that only carries it
/// (SPEC §10: a mid-task context hands off without stashing or starting a run). Stores
/// nothing when the packet is invalid, git is between two states or a review of the run is
/// running (`handoff-deferred`), or a secret is found.
pub fn create(ctx: &Context, request: &CreateRequest) -> Result<report::Created, Error> {
    let draft = &request.draft;
    rules::validate(draft)?;
    // First: mid-rebase, HEAD is detached and no run would be found on its branch.
    let in_progress = crate::worktree::in_progress(&ctx.repo);
    if !in_progress.is_empty() {
        return Err(Error::CheckpointDeferred {
            reasons: in_progress.iter().map(|(w, m)| w.describe(m)).collect(),
            ways_on: in_progress
                .iter()
                .map(|(w, _)| w.way_on().to_owned())
                .collect(),
        });
    }
    let active = match super::common::select::active(ctx, None) {
        Ok(run_id) => Some(ctx.load(&run_id)?),
        Err(Error::NoActiveRun { .. }) => None,
        Err(e) => return Err(e),
    };
    if let Some(state) = &active
        && super::status::next_action(ctx, &state.manifest) == NextAction::WaitReview
    {
        return Err(Error::CheckpointDeferred {
            reasons: vec![review_running(&state.run_id)],
            ways_on: vec!["wait for the review to end (git pair status says when)".into()],
        });
    }
    let authorized = draft.authorized
        || settings::flag(
            active.as_ref().map(|s| &s.manifest),
            &ctx.options,
            Setting::HandoffAuthorized,
        );
    let head = ctx.repo.head()?;
    let branch = head.branch_name().to_owned();
    let Some(head_commit) = head.commit() else {
        return Err(Error::UnbornHead { branch });
    };
    let scanner = ctx.scanner()?;
    let work_dir = ctx.repo.work_dir()?.to_path_buf();
    let id = CheckpointId::generate();
    // The status is the snapshot's tree, computed only once the text is found storable; until
    // then it holds the empty tree, which nothing reads (the text scan skips both ids).
    let mut packet = Checkpoint {
        checkpoint: id.clone(),
        repo: RepoIdentity {
            path: work_dir.display().to_string(),
            head: head_commit.into(),
            branch,
            status: ObjectId::empty_tree(head_commit.kind()).into(),
            host: crate::process::host_name(),
        },
        check: draft.check.as_ref().map(|command| CheckRun {
            command: command.clone(),
            exit_code: None,
            end: "not-started".into(),
            output_tail: String::new(),
            duration_ms: 0,
        }),
        goal: draft.goal.clone(),
        next: draft.next.clone(),
        criteria: draft.criteria.clone(),
        verified: draft.verified.clone(),
        unverified: draft.unverified.clone(),
        language: or_unspecified(&draft.language),
        locale: or_unspecified(&draft.locale),
        time_zone: or_unspecified(&draft.time_zone),
        context: draft.context,
        authorized,
        compactions: 0,
        assessment: Assessment::Continue,
        reasons: Vec::new(),
    };
    // The flags first: nothing is snapshotted or run for a packet that cannot be stored.
    reject_secrets(rules::scan_text(&scanner, &packet))?;

    let staged = crate::worktree::snapshot::stage(&ctx.repo)?;
    packet.repo.status = staged.tree().into();
    let head_tree = ctx.repo.commit_tree(head_commit)?;
    let changed: Vec<(String, ObjectId)> = staged
        .changes_since(Some(head_tree))?
        .into_iter()
        .filter_map(|change| {
            let new = change.new?;
            (new.mode != GITLINK).then(|| (change.path.to_string(), new.id))
        })
        .collect();
    let file_findings =
        rules::scan_files(&scanner, &changed, |id| staged.blob(*id)).map_err(|e| {
            Error::CheckpointUnscannable {
                detail: e.to_string(),
            }
        })?;
    reject_secrets(file_findings)?;

    if let Some(command) = &draft.check {
        packet.check = Some(run_check(&work_dir, command, request.check_timeout));
    }
    reject_secrets(rules::scan_text(&scanner, &packet))?;

    let snapshot = staged.write_into(&ctx.repo)?;
    let threshold = ctx.options.handoff_threshold;
    let assessed = |mut packet: Checkpoint, compactions: u32| {
        packet.compactions = compactions;
        let (assessment, reasons) = rules::assess(
            &Pressure {
                authorized: packet.authorized,
                context: packet.context,
                threshold,
                compactions,
            },
            &[],
        );
        packet.assessment = assessment;
        packet.reasons = reasons;
        packet
    };
    let subject = |packet: &Checkpoint| format!("checkpoint {id}: {}", packet.assessment.as_str());
    let (run_id, appended) = match &active {
        Some(state) => {
            let appended = ctx.repo.append(&state.run_id, |state| {
                let packet = assessed(packet.clone(), state.manifest.compactions);
                let subject = subject(&packet);
                let mut append = Append::record(Body::Checkpoint(packet), subject);
                append.put_checkpoint_snapshot(&id, snapshot);
                Ok(append)
            })?;
            (state.run_id.clone(), appended)
        }
        None => {
            let run_id = super::start::new_run_id(ctx)?;
            let packet = assessed(packet.clone(), 0);
            let mut append = carrier_start(ctx, &run_id, &packet, head_commit);
            append.also.push(Body::Checkpoint(packet.clone()));
            append.put_checkpoint_snapshot(&id, snapshot);
            append.subject = subject(&packet);
            let appended = ctx.repo.create_run(&run_id, Some(head_commit), append)?;
            (run_id, appended)
        }
    };
    let stored = std::iter::once(&appended.record)
        .chain(&appended.also)
        .find_map(|record| match &record.body {
            Body::Checkpoint(c) if c.checkpoint == id => Some((c.clone(), record.to_json().len())),
            _ => None,
        });
    let Some((stored, bytes)) = stored else {
        unreachable!("the appended records hold the checkpoint just built");
    };
    let path = work_dir.display().to_string();
    // Without a receipt, verify here asks to confirm the check: safe, so not fatal.
    let _ = ctx
        .repo
        .write_checkpoint_receipt(&id, &path, draft.check.as_deref());
    refresh_view(ctx, &appended.state)?;
    Ok(report::Created {
        id: stored.checkpoint.clone(),
        assessment: stored.assessment,
        bytes,
        carrier: active.is_none(),
        run_id,
        reasons: stored.reasons.clone(),
        status: stored.repo.status.to_string(),
        check: stored.check.as_ref().map(report::CheckSummary::from),
    })
}

/// The start record of a run that only carries checkpoint `packet`, made with no run active:
/// based on HEAD, this clone's own (so a restore elsewhere adopts it), never chosen as the
/// active run (`carrier`).
fn carrier_start(ctx: &Context, run_id: &RunId, packet: &Checkpoint, head: ObjectId) -> Append {
    let about = packet.goal.as_deref().unwrap_or(&packet.next);
    let task = format!(
        "context handoff: {}",
        crate::util::first_line_clipped(about, 60)
    );
    let start = Start {
        run_id: run_id.to_string(),
        task: task.clone(),
        cwd: packet.repo.path.clone(),
        branch: packet.repo.branch.clone(),
        base: Some(head.into()),
        coder: ctx.options.coder.clone(),
        reviewer: ctx.options.reviewer.clone(),
        max_rounds: ctx.options.max_rounds,
        budget_usd: None,
        config: ctx.options.to_record(),
        flags: Some(Vec::new()),
        claimed: true,
        base_tree: ctx.repo.commit_tree(head).ok().map(Into::into),
        carrier: true,
    };
    Append::record(Body::Start(start), format!("start: {task}"))
}

/// Renders the run's view (HANDOFF.md) after a checkpoint record, except for a run that
/// only carries checkpoints: it has no loop to show, and the work tree's view is another
/// run's (or nobody's).
fn refresh_view(ctx: &Context, state: &RunState) -> Result<(), Error> {
    if !state.manifest.carrier {
        ctx.refresh_handoff(&state.run_id)?;
    }
    Ok(())
}

fn or_unspecified(value: &Option<String>) -> String {
    value
        .clone()
        .unwrap_or_else(|| rules::UNSPECIFIED.to_owned())
}

fn reject_secrets(findings: Vec<Finding>) -> Result<(), Error> {
    if findings.is_empty() {
        return Ok(());
    }
    Err(Error::CheckpointSecret {
        kinds: {
            let mut kinds: Vec<String> = findings.iter().map(|f| f.kind.clone()).collect();
            kinds.dedup();
            kinds
        },
        found: findings.iter().map(Finding::describe).collect(),
    })
}

/// Runs `command` with `sh -c` in `work_dir`, bounded by `timeout`; its end is data.
fn run_check(work_dir: &Path, command: &str, timeout: Duration) -> CheckRun {
    let shell = crate::process::find_executable("sh", None).unwrap_or_else(|| "/bin/sh".into());
    let finished = crate::process::run(
        &Spawn {
            program: shell,
            args: vec!["-c".into(), command.to_owned()],
            env: Vec::new(),
            cwd: Some(work_dir.to_path_buf()),
            stdin: None,
            share_terminal: false,
            env_allow: None,
        },
        &Limits {
            timeout,
            stdout_cap: CHECK_STDOUT_CAP,
            ..Limits::default()
        },
        &Cancel {
            flag: None,
            on_sigint: true,
        },
    );
    let exit_code = finished.status.and_then(|s| s.code);
    let end = match &finished.end {
        End::Exited if exit_code.is_some() => "exited",
        End::Exited | End::GaveUp { .. } => "killed",
        End::TimedOut => "timed-out",
        End::Cancelled => "cancelled",
        End::SpawnFailed { .. } => "not-started",
    };
    CheckRun {
        command: command.to_owned(),
        exit_code,
        end: end.to_owned(),
        output_tail: rules::output_tail(&finished.stdout, &finished.stderr_tail),
        duration_ms: u64::try_from(finished.duration.as_millis()).unwrap_or(u64::MAX),
    }
}

/// A checkpoint found in a run.
#[derive(Debug, Clone)]
pub struct Found {
    pub run_id: RunId,
    pub state: RunState,
    pub packet: Checkpoint,
    /// When it was recorded.
    pub at: String,
    /// Where it stands now.
    pub checkpoint_state: CheckpointState,
}

/// Finds checkpoint `id` in the run named by `--run`, else in any run (newest first): a
/// destination may be on another branch than the run's until it restores.
pub fn find(ctx: &Context, id: &str) -> Result<Found, Error> {
    let id = CheckpointId::parse(id)?;
    let runs = match super::common::select::named(ctx, None)? {
        Some(run_id) => vec![run_id],
        None => ctx.repo.list_runs()?.into_iter().rev().collect(),
    };
    for run_id in runs {
        let state = ctx.load(&run_id)?;
        if ctx.repo.checkpoint_snapshot(&state, &id)?.is_none() {
            continue;
        }
        let records = ctx.repo.records(&state)?;
        let checkpoint_state = rules::state_of(&id, records.iter().map(|r| &r.body));
        let created = records.iter().find_map(|r| match &r.body {
            Body::Checkpoint(c) if c.checkpoint == id => Some((c.clone(), r.at.clone())),
            _ => None,
        });
        if let (Some((packet, at)), Some(checkpoint_state)) = (created, checkpoint_state) {
            return Ok(Found {
                run_id,
                state,
                packet,
                at,
                checkpoint_state,
            });
        }
    }
    Err(Error::UnknownCheckpoint { id: id.to_string() })
}

/// What `checkpoint verify` was asked.
#[derive(Debug, Clone)]
pub struct VerifyRequest {
    pub id: String,
    pub allow_other_path: bool,
    /// The check the local user confirms (must equal the recorded one).
    pub check: Option<String>,
    pub check_timeout: Duration,
}

/// Compares this work tree with the checkpoint, re-runs its check when confirmed, and records
/// the result either way. Refuses, running and recording nothing, when the checkpoint records
/// a check nobody here confirmed.
pub fn verify(ctx: &Context, request: &VerifyRequest) -> Result<report::Verified, Error> {
    let found = find(ctx, &request.id)?;
    let packet = &found.packet;
    let id = packet.checkpoint.clone();
    let work_dir = ctx.repo.work_dir()?.to_path_buf();
    let path = work_dir.display().to_string();
    let host = crate::process::host_name();
    let made_here = made_here(ctx, packet, &path, &host);
    // A trusted command string (or this clone's own receipt) vouches for nothing when the
    // files it runs were laid down by restoring a checkpoint made elsewhere: then it asks.
    let foreign = ctx.repo.foreign_restore();
    let trusted: &[String] = match foreign {
        Some(_) => &[],
        None => &ctx.options.trusted_checks,
    };
    let vouched = made_here && foreign.is_none();
    let command = match rules::check_to_run(packet, request.check.as_deref(), trusted, vouched) {
        Err(rules::CheckRefusal::NotConfirmed { id, command, .. })
            if made_here || ctx.options.trusted_checks.contains(&command) =>
        {
            Err(rules::CheckRefusal::TrustedOnForeignTree {
                id,
                command,
                restored: foreign.clone().unwrap_or_default(),
                other_path: false,
            })
        }
        other => other,
    }
    .map_err(|refusal| refusal.at_other_path(packet.repo.path != path))?;
    if request.check.is_some() && foreign.is_some() {
        // Confirmed by hand: the user vouches for the tree as it is.
        ctx.repo.clear_foreign_restore()?;
    }
    let head = ctx.repo.head()?;
    // The state as found, before the check can change anything.
    let status = crate::worktree::snapshot::tree_id(&ctx.repo)?;
    let check = command.map(|c| run_check(&work_dir, &c, request.check_timeout));
    let mismatches = rules::compare(
        packet,
        &Observed {
            path: &path,
            head: head.commit().map(Into::into),
            branch: head.branch_name(),
            status: status.into(),
            check: check.as_ref(),
        },
        request.allow_other_path,
    );
    let result = if mismatches.is_empty() {
        VerifyResult::Verified
    } else {
        VerifyResult::Regression
    };
    let body = Body::CheckpointVerified(CheckpointVerified {
        checkpoint: id.clone(),
        result,
        mismatches: mismatches.clone(),
        path,
        host,
        allow_other_path: request.allow_other_path,
        check: check.as_ref().map(CheckRun::outcome),
    });
    let subject = format!("checkpoint {id}: {}", result.as_str());
    ctx.repo.append(&found.run_id, |_| {
        Ok(Append::record(body.clone(), subject.clone()))
    })?;
    refresh_view(ctx, &found.state)?;
    let error = (result == VerifyResult::Regression).then(|| {
        format!(
            "handoff regression: {} field(s) differ from checkpoint {id} (the verification is recorded)",
            mismatches.len()
        )
    });
    Ok(report::Verified {
        result,
        mismatches,
        id,
        run_id: found.run_id,
        check: check.as_ref().map(report::CheckSummary::from),
        recorded: true,
        error,
    })
}

/// Whether this work tree made the checkpoint with the check it records: a local receipt
/// (never shared) says so, and host and path agree.
fn made_here(ctx: &Context, packet: &Checkpoint, path: &str, host: &str) -> bool {
    let Some(receipt) = ctx.repo.checkpoint_receipt(&packet.checkpoint) else {
        return false;
    };
    receipt.path == path
        && packet.repo.path == path
        && packet.repo.host == host
        && receipt.check.as_deref() == packet.check.as_ref().map(|c| c.command.as_str())
}

/// Checks out the checkpoint's HEAD and lays its snapshot down as uncommitted changes, on a
/// clean work tree only.
pub fn restore(ctx: &Context, id: &str) -> Result<report::Restored, Error> {
    let found = find(ctx, id)?;
    let packet = &found.packet;
    let id = packet.checkpoint.clone();
    if let Some(dirty) = crate::worktree::first_dirty(&ctx.repo)? {
        return Err(Error::DirtyForRestore {
            path: dirty.path,
            what: dirty.what.to_owned(),
        });
    }
    let in_progress = crate::worktree::in_progress(&ctx.repo);
    if let Some((what, marker)) = in_progress.first() {
        return Err(Error::InProgress {
            what: what.describe(marker),
            way_on: what.way_on().to_owned(),
        });
    }
    let corrupt = |detail: String| {
        Error::Store(crate::store::Error::CorruptRun {
            run_id: found.run_id.to_string(),
            detail,
        })
    };
    let commit = packet.repo.head.into();
    if !ctx.repo.has_commit(commit) {
        return Err(Error::CheckpointCommitMissing {
            id: id.to_string(),
            commit: packet.repo.head.to_string(),
            branch: packet.repo.branch.clone(),
        });
    }
    let snapshot = ctx
        .repo
        .checkpoint_snapshot(&found.state, &id)?
        .filter(|tree| packet.repo.status == *tree)
        .ok_or_else(|| {
            corrupt(format!(
                "checkpoint {id}'s stored snapshot is missing or differs from its record"
            ))
        })?;
    let branch = packet.repo.branch.as_str();
    let mut branch_elsewhere = None;
    let checkout = if branch == "HEAD" || !rules::is_plain_branch_name(branch) {
        Checkout::Detached
    } else {
        match ctx.repo.branch_commit(branch)? {
            Some(at) if at == commit => Checkout::Branch(branch.to_owned()),
            Some(_) => {
                branch_elsewhere = Some(branch.to_owned());
                Checkout::Detached
            }
            None => Checkout::NewBranch(branch.to_owned()),
        }
    };
    crate::worktree::restore(&ctx.repo, commit, snapshot, &checkout)?;
    // The files now came from where the checkpoint was made: unless that is here, trusted
    // checks stop running on trust until the user vouches for the tree again.
    let path = ctx.repo.work_dir()?.display().to_string();
    if made_here(ctx, packet, &path, &crate::process::host_name()) {
        ctx.repo.clear_foreign_restore()?;
    } else {
        ctx.repo.write_foreign_restore(&id)?;
    }
    // The work continues here: the run is this clone's own from now on (SPEC §5).
    let adopted = ctx
        .repo
        .claim_run(&found.run_id, crate::store::Claim::Restored)?;
    let status_matches = crate::worktree::snapshot::tree_id(&ctx.repo)? == snapshot;
    let (kind, branch) = match checkout {
        Checkout::Branch(name) => (report::CheckoutKind::Branch, name),
        Checkout::NewBranch(name) => (report::CheckoutKind::NewBranch, name),
        Checkout::Detached => (report::CheckoutKind::Detached, "HEAD".to_owned()),
    };
    Ok(report::Restored {
        id,
        run_id: found.run_id,
        head: packet.repo.head.to_string(),
        branch,
        checkout: kind,
        status_matches,
        adopted,
        branch_elsewhere,
    })
}

/// The checkpoint as stored, and where it stands; with `prompt`, the destination prompt too.
pub fn show(ctx: &Context, id: &str, prompt: bool) -> Result<report::Shown, Error> {
    let found = find(ctx, id)?;
    let packet = found.packet;
    Ok(report::Shown {
        id: packet.checkpoint.clone(),
        prompt: prompt
            .then(|| crate::render::checkpoint::destination_prompt(&packet, found.run_id.as_str())),
        run_id: found.run_id,
        at: found.at,
        state: found.checkpoint_state,
        assessment: packet.assessment,
        packet,
    })
}

/// What `checkpoint archive` was asked.
#[derive(Debug, Clone)]
pub struct ArchiveRequest {
    pub id: String,
    /// `--authorize-archive`: the human agreed to retire the source.
    pub authorized: bool,
}

/// Retires the checkpoint's source context: only after a passing verification, with the
/// archive's own authorization (`--authorize-archive` or `pair.archiveAuthorized`), with no
/// git operation in progress here, and, run in the source work tree itself, only while it
/// still holds what the checkpoint carries. Idempotent; never deletes anything.
pub fn archive(ctx: &Context, request: &ArchiveRequest) -> Result<report::Archived, Error> {
    let found = find(ctx, &request.id)?;
    let packet = &found.packet;
    let id = packet.checkpoint.clone();
    let path = ctx.repo.work_dir()?.display().to_string();
    let host = crate::process::host_name();
    let is_source = packet.repo.path == path && packet.repo.host == host;
    let source_changes = if is_source && found.checkpoint_state != CheckpointState::Archived {
        let head = ctx.repo.head()?;
        let status = crate::worktree::snapshot::tree_id(&ctx.repo)?;
        Some(rules::compare_repo(
            packet,
            &Observed {
                path: &path,
                head: head.commit().map(Into::into),
                branch: head.branch_name(),
                status: status.into(),
                check: None,
            },
            true,
        ))
    } else {
        None
    };
    let facts = rules::ArchiveFacts {
        state: found.checkpoint_state,
        authorized: request.authorized
            || settings::flag(
                Some(&found.state.manifest),
                &ctx.options,
                Setting::ArchiveAuthorized,
            ),
        in_progress: crate::worktree::in_progress(&ctx.repo)
            .iter()
            .map(|(what, marker)| what.describe(marker))
            .collect(),
        source_changes,
        other_path: packet.repo.path != path,
    };
    match rules::archive(&id, &facts) {
        rules::Archive::AlreadyArchived => Ok(report::Archived {
            state: CheckpointState::Archived,
            run_id: found.run_id,
            id,
            already: true,
        }),
        rules::Archive::Refused {
            state,
            missing,
            changes,
        } => Err(Error::ArchiveRefused {
            id: id.to_string(),
            state,
            missing,
            changes,
            other_path: facts.other_path,
        }),
        rules::Archive::Record => {
            let body = Body::CheckpointArchived(CheckpointArchived {
                checkpoint: id.clone(),
                path,
                host,
            });
            let subject = format!("checkpoint {id}: {}", CheckpointState::Archived.as_str());
            ctx.repo.append(&found.run_id, |_| {
                Ok(Append::record(body.clone(), subject.clone()))
            })?;
            refresh_view(ctx, &found.state)?;
            Ok(report::Archived {
                state: CheckpointState::Archived,
                run_id: found.run_id,
                id,
                already: false,
            })
        }
    }
}

/// Counts an observed context compaction on the active run (storing nothing else) and says
/// whether a handoff is due: authorized by `authorized` or the standing
/// `pair.handoffAuthorized`; deferred while git is between two states or the run's own
/// review runs.
pub fn compaction(ctx: &Context, authorized: bool) -> Result<report::Compacted, Error> {
    let run_id = super::common::select::active(ctx, None)?;
    let appended = ctx.repo.append(&run_id, |_| {
        Ok(Append::record(
            Body::Compaction(Compaction {}),
            "context compaction observed",
        ))
    })?;
    ctx.refresh_handoff(&run_id)?;
    let manifest = &appended.state.manifest;
    let count = manifest.compactions;
    let mut unsafe_now: Vec<String> = crate::worktree::in_progress(&ctx.repo)
        .iter()
        .map(|(what, marker)| what.describe(marker))
        .collect();
    if super::status::next_action(ctx, manifest) == NextAction::WaitReview {
        unsafe_now.push(review_running(&run_id));
    }
    let (assessment, reasons) = rules::assess(
        &Pressure {
            authorized: authorized
                || settings::flag(Some(manifest), &ctx.options, Setting::HandoffAuthorized),
            context: None,
            threshold: ctx.options.handoff_threshold,
            compactions: count,
        },
        &unsafe_now,
    );
    Ok(report::Compacted {
        count,
        assessment,
        reasons,
        run_id,
    })
}

/// Why a handoff waits while run `run_id`'s review runs.
fn review_running(run_id: &RunId) -> String {
    format!("a review of run {run_id} is running (wait:review): its outcome is not recorded yet")
}
