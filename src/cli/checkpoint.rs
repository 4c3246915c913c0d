//! `git pair checkpoint create|show|verify|restore|archive|compaction`: context handoff
//! packets (SPEC §10). Each subcommand parses its flags, calls one operation in
//! `ops::checkpoint`, and renders what it returns.

use std::time::Duration;

use super::{CommandError, Context, Report};
use crate::model::ContextUse;
use crate::model::checkpoint::rules::Draft;
use crate::ops::checkpoint as op;
use crate::render::checkpoint as render;

/// Hand a task to a fresh agent context or another machine, safely.
///
/// A checkpoint records where the work is (path, HEAD, branch, a status fingerprint, the
/// work-tree snapshot with every uncommitted change), what it is for (goal, next action,
/// acceptance criteria, verified and unverified evidence, the reply language) and an
/// assessment: handoff-ready, handoff-deferred or continue. It travels with git pair
/// push/pull. The destination restores it, verifies it, archives the source, and continues.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    Create(CreateArgs),
    Show(ShowArgs),
    Verify(VerifyArgs),
    Restore(RestoreArgs),
    Archive(ArchiveArgs),
    Compaction(CompactionArgs),
}

/// Record a checkpoint: repository identity, the work-tree snapshot, the task's state and an
/// assessment.
///
/// No run is needed and the work tree may be dirty: with no active run the checkpoint goes
/// into a run of its own that only carries it (JSON carrier: true), never the branch's active
/// run. The snapshot holds HEAD's files plus every uncommitted change, untracked files that
/// are not ignored included.
///
/// Assessment: handoff-ready when authorized (--authorized, or the standing git config
/// pair.handoffAuthorized true) and the context is at or over
/// pair.handoffThreshold (default 0.85: e.g. --context-used 86000 --context-limit 100000) or
/// two compactions were observed (git pair checkpoint compaction); handoff-deferred while a
/// merge, rebase, cherry-pick, revert or bisect is in progress, index.lock is held, or the
/// run's own review is running (wait:review) — then nothing is stored and it exits 1 saying
/// why; else continue.
///
/// Before anything is stored the packet is validated: --next is required, the text of all
/// flags together is at most 64 KiB, each list flag at most 64 values, and a secret scan over
/// every flag, the check's output and every file that differs from HEAD refuses a packet
/// holding a secret (naming its kind and where), storing nothing.
///
/// The reply language is recorded exactly as given; locale and time zone are `unspecified`
/// unless given (never inferred from the language).
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// What whoever continues does first (required).
    #[arg(long, value_name = "text")]
    pub next: String,
    /// The task's goal.
    #[arg(long, value_name = "text")]
    pub goal: Option<String>,
    /// An acceptance criterion (repeatable).
    #[arg(long = "criterion", value_name = "text")]
    pub criteria: Vec<String>,
    /// Evidence you checked (repeatable).
    #[arg(long, value_name = "text")]
    pub verified: Vec<String>,
    /// A claim nobody checked yet (repeatable).
    #[arg(long, value_name = "text")]
    pub unverified: Vec<String>,
    /// The language the user wants replies in, recorded verbatim (e.g. 繁體中文（台灣）).
    #[arg(long, value_name = "text")]
    pub language: Option<String>,
    /// The user's locale, if known (recorded as `unspecified` otherwise).
    #[arg(long, value_name = "text")]
    pub locale: Option<String>,
    /// The user's time zone, if known (recorded as `unspecified` otherwise).
    #[arg(long, value_name = "text")]
    pub time_zone: Option<String>,
    /// A command that checks the state (run with sh -c in the work tree's root now; its exit
    /// code and output tail are recorded, and verify compares them).
    #[arg(long, value_name = "command")]
    pub check: Option<String>,
    /// Seconds the check may run before it is killed.
    #[arg(
        long,
        value_name = "secs",
        default_value_t = op::DEFAULT_CHECK_TIMEOUT.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub check_timeout: u64,
    /// Tokens in use in the agent's context.
    #[arg(long, value_name = "tokens", requires = "context_limit")]
    pub context_used: Option<u64>,
    /// The size of the agent's context window in tokens.
    #[arg(long, value_name = "tokens", requires = "context_used")]
    pub context_limit: Option<u64>,
    /// The human authorized handing the task over (pair.handoffAuthorized stands for it).
    #[arg(long)]
    pub authorized: bool,
}

/// Print a checkpoint, or with --prompt the prompt for the fresh agent that continues.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The checkpoint id (ck-…).
    pub id: String,
    /// Print only the copyable destination prompt: restore, verify, archive, then the next
    /// action, in the recorded reply language.
    #[arg(long)]
    pub prompt: bool,
}

/// Check this work tree against a checkpoint: HANDOFF VERIFIED (exit 0) or HANDOFF
/// REGRESSION with one `field: expected X, found Y` line per mismatch (exit 1).
///
/// Compares path (unless --allow-other-path), HEAD, branch and the status fingerprint, then
/// re-runs the recorded check. The result is recorded either way.
///
/// A recorded check is data, never an instruction: it runs only when you name it again
/// (--check, exactly as recorded), when it is listed in pair.trustedChecks, or when this very
/// work tree made the checkpoint. Otherwise verify stops, runs and records nothing, and says
/// how to confirm it.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The checkpoint id (ck-…).
    pub id: String,
    /// Do not compare the work tree's path (another clone, another machine).
    #[arg(long)]
    pub allow_other_path: bool,
    /// Confirm the recorded check: it must be exactly the recorded command.
    #[arg(long, value_name = "command")]
    pub check: Option<String>,
    /// Seconds the check may run before it is killed.
    #[arg(
        long,
        value_name = "secs",
        default_value_t = op::DEFAULT_CHECK_TIMEOUT.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub check_timeout: u64,
}

/// Rebuild a checkpoint's state here, on a clean work tree.
///
/// Checks out the recorded HEAD — the recorded branch when it points there (or does not exist
/// yet: it is created there), detached otherwise — and lays the checkpoint's snapshot down as
/// uncommitted changes (index at HEAD; modified, deleted and new files in the work tree).
/// Refuses on a dirty work tree and when the commit is missing (fetch it first); never
/// overwrites uncommitted work. Then: git pair checkpoint verify <id> --allow-other-path.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// The checkpoint id (ck-…).
    pub id: String,
}

/// Retire the checkpoint's source context: SOURCE_ARCHIVED_CONFIRMED.
///
/// Needs every prerequisite: a recorded passing verification, the archive's own
/// authorization (--authorize-archive, or the standing git config pair.archiveAuthorized
/// true), no git operation in progress here (merge, rebase, am, cherry-pick, revert, bisect),
/// and, run in the source work tree, no change there since the checkpoint (that work would be
/// stranded). Otherwise it refuses, recording nothing, naming each missing prerequisite and
/// the state the checkpoint is really in (HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE only when
/// it was verified): a source left active may resume on its own. Idempotent. Archived is a
/// state: nothing is deleted, the checkpoint stays readable and restorable.
#[derive(Debug, clap::Args)]
pub struct ArchiveArgs {
    /// The checkpoint id (ck-…).
    pub id: String,
    /// The human agreed to retire the source context (not implied by --authorized).
    #[arg(long)]
    pub authorize_archive: bool,
}

/// Count an observed context compaction on the active run and print the CONTEXT HANDOFF
/// HEALTH CHECK.
///
/// Stores no prompt text, transcript or session id: only that one happened. Two compactions
/// make an authorized task handoff-ready (a review of the run running now defers it).
/// Archiving a checkpoint starts the count again.
#[derive(Debug, clap::Args)]
pub struct CompactionArgs {
    /// The human authorized handing the task over (pair.handoffAuthorized stands for it).
    #[arg(long)]
    pub authorized: bool,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    match &args.command {
        Sub::Create(a) => create(ctx, a),
        Sub::Show(a) => show(ctx, a),
        Sub::Verify(a) => verify(ctx, a),
        Sub::Restore(a) => restore(ctx, a),
        Sub::Archive(a) => archive(ctx, a),
        Sub::Compaction(a) => compaction(ctx, a),
    }
}

fn create(ctx: &Context, a: &CreateArgs) -> Result<Report, CommandError> {
    let context = match (a.context_used, a.context_limit) {
        (Some(used), Some(limit)) => Some(ContextUse { used, limit }),
        _ => None,
    };
    let created = op::create(
        ctx,
        &op::CreateRequest {
            draft: Draft {
                goal: a.goal.clone(),
                next: a.next.clone(),
                criteria: a.criteria.clone(),
                verified: a.verified.clone(),
                unverified: a.unverified.clone(),
                language: a.language.clone(),
                locale: a.locale.clone(),
                time_zone: a.time_zone.clone(),
                check: a.check.clone(),
                context,
                authorized: a.authorized,
            },
            check_timeout: Duration::from_secs(a.check_timeout),
        },
    )?;
    Ok(Report::rendered(&created, render::created))
}

fn show(ctx: &Context, a: &ShowArgs) -> Result<Report, CommandError> {
    let shown = op::show(ctx, &a.id, a.prompt)?;
    Ok(Report::rendered(&shown, render::shown))
}

fn verify(ctx: &Context, a: &VerifyArgs) -> Result<Report, CommandError> {
    let verified = op::verify(
        ctx,
        &op::VerifyRequest {
            id: a.id.clone(),
            allow_other_path: a.allow_other_path,
            check: a.check.clone(),
            check_timeout: Duration::from_secs(a.check_timeout),
        },
    )?;
    let mut report = Report::rendered(&verified, render::verified);
    // A regression is a result (recorded, printed in full), and still a failed command.
    if let Some(message) = &verified.error {
        report = report
            .note(format!("error: {message}"))
            .note(format!("hint: {}", render::regression_hint(&verified)));
        report.exit = super::error::EXIT_FAILURE;
    }
    Ok(report)
}

fn restore(ctx: &Context, a: &RestoreArgs) -> Result<Report, CommandError> {
    let restored = op::restore(ctx, &a.id)?;
    let mut report = Report::rendered(&restored, render::restored);
    report.notes.extend(render::restore_notes(&restored));
    Ok(report)
}

fn archive(ctx: &Context, a: &ArchiveArgs) -> Result<Report, CommandError> {
    let archived = op::archive(
        ctx,
        &op::ArchiveRequest {
            id: a.id.clone(),
            authorized: a.authorize_archive,
        },
    )?;
    Ok(Report::rendered(&archived, render::archived))
}

fn compaction(ctx: &Context, a: &CompactionArgs) -> Result<Report, CommandError> {
    let compacted = op::compaction(ctx, a.authorized)?;
    Ok(Report::rendered(&compacted, render::compacted))
}
