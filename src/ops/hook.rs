//! What each hook does when git (or an agent CLI) runs `git pair hook <name>`:
//! - `pre-commit` (and `pre-merge-commit`, its twin for merge commits): refuses never-commit
//!   paths; with `--gate`, the commit gate ([`super::gate`]).
//! - `commit-msg`: with `--gate`, `pre-commit`'s checks again, on the tree that will be
//!   committed (git runs it after every pre-commit step); then adds `Pair-Run:` and
//!   `Reviewed-by:` trailers when the index is the approved snapshot of this clone's newest run
//!   on the branch (finished or not).
//! - `post-commit`: writes the run's `refs/notes/pair` line on the new commit ([`super::common::note`]).
//! - `agent-stop`: the agent Stop hook's decision ([`crate::hook::agent_stop`]), over the state
//!   of this clone's active run (a run pulled from another clone is never its subject), with the work tree snapshotted in memory only when a block depends on
//!   it.
//!
//! Which failures reach the user is the caller's choice; `agent_stop` never fails.

use std::path::Path;

use super::common::note::NoteState;
use super::{Context, Error};
use crate::hook::agent_stop::{self, Decision, HookInput, RunView};
use crate::hook::trailers;
use crate::model::NextAction;
use crate::model::report::hook as report;

/// Refuses a commit that adds or changes a never-commit path ([`Error::NeverCommit`]) and,
/// when `gate`, one whose staged tree is not the approved snapshot of this clone's newest run
/// on the branch, active or finished
/// ([`Error::GateClosed`]). Reads only; nothing is stored.
pub fn pre_commit(ctx: &Context, gate: bool) -> Result<report::PreCommit, Error> {
    // A pass is noted for `commit-msg`, which git runs next on the same index unless a later
    // step re-staged: it need not read the index again. Only a help: a failure notes nothing.
    let _ = std::fs::remove_file(passed_path(ctx));
    let staged = crate::worktree::StagedIndex::read(&ctx.repo)?;
    let (report, approved) = pre_commit_on(ctx, &staged, gate)?;
    if let Some(key) = approved.and_then(|run_id| passed_key(ctx, &run_id)) {
        let _ = crate::util::fs::write_atomically_via(
            &ctx.repo.pair_dir().join("tmp"),
            &passed_path(ctx),
            key.as_bytes(),
        );
    }
    Ok(report)
}

/// [`pre_commit`]'s checks on the index `staged`, read by the caller; with the run whose
/// approved snapshot the index is, when the gate found it so.
fn pre_commit_on(
    ctx: &Context,
    staged: &crate::worktree::StagedIndex,
    gate: bool,
) -> Result<(report::PreCommit, Option<crate::model::RunId>), Error> {
    super::gate::check_never_commit(ctx, staged)?;
    let mut approved = None;
    let gate = if gate {
        Some(match super::gate::check_index(ctx, Some(staged))? {
            super::gate::Open::NoActiveRun { .. } => report::GateOpen::NoActiveRun,
            super::gate::Open::Approved(approval) => {
                approved = Some(approval.run_id);
                report::GateOpen::Approved
            }
        })
    } else {
        None
    };
    Ok((report::PreCommit { ok: true, gate }, approved))
}

/// Where `pre-commit --gate` notes the index it found approved (see [`passed_key`]).
fn passed_path(ctx: &Context) -> std::path::PathBuf {
    ctx.repo.pair_dir().join("gate-passed")
}

/// What the gate's pass on the index is bound to: the index file as it is (path, size,
/// modification time and the SHA-1 of its content that git writes at its end), HEAD, the
/// never-commit patterns, and the approving run and its tip. A `commit-msg` finding the same
/// key checks what `pre-commit` checked, on the same bytes, against the same run: the answer
/// cannot differ. `None` when any part cannot be read, or when the index carries no checksum
/// (`index.skipHash`): then the index is read again.
fn passed_key(ctx: &Context, run_id: &crate::model::RunId) -> Option<String> {
    use std::io::{Read as _, Seek as _};
    let path = ctx.repo.gix().index_path();
    let mut file = std::fs::File::open(&path).ok()?;
    let meta = file.metadata().ok()?;
    if meta.len() < 32 {
        return None;
    }
    file.seek(std::io::SeekFrom::End(-20)).ok()?;
    let mut checksum = [0u8; 20];
    file.read_exact(&mut checksum).ok()?;
    if checksum == [0; 20] {
        return None;
    }
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let head = ctx.repo.head().ok()?.commit()?;
    let tip = ctx.repo.run_tip(run_id).ok()??;
    Some(format!(
        "v1\n{}\n{} {modified} {}\nhead {head}\nnever-commit {:?}\nrun {run_id} {tip}\n",
        path.display(),
        meta.len(),
        gix::ObjectId::from(checksum),
        ctx.options.never_commit,
    ))
}

/// Whether `pre-commit --gate` passed this very index against the run `select` finds now.
fn passed_before(ctx: &Context) -> Option<crate::model::RunId> {
    let noted = std::fs::read_to_string(passed_path(ctx)).ok()?;
    let run_id = super::common::select::latest(ctx, None).ok()?;
    (passed_key(ctx, &run_id)? == noted).then_some(run_id)
}

/// Adds `Pair-Run: <run>` and `Reviewed-by: <reviewer> (git-pair round N)` to the message in
/// `file` when the index is the snapshot the branch's newest run approved; idempotent. Comment
/// lines follow `core.commentString` / `core.commentChar` (`auto` is read as `#`).
///
/// With `gate`, first refuses as [`pre_commit`] with `gate` does: git has read the index it
/// commits before `commit-msg` runs, so this is the check on the tree really committed, after
/// any later pre-commit step (a lint-staged-style `git add`) re-staged.
pub fn commit_msg(ctx: &Context, file: &Path, gate: bool) -> Result<report::CommitMsg, Error> {
    // The index `pre-commit --gate` just found to be the approved snapshot, unchanged since:
    // both checks hold as they held there. Else it is read once, for both.
    let approval = match passed_before(ctx) {
        Some(run_id) => super::gate::approval(ctx, &run_id)?,
        None => {
            let staged = crate::worktree::StagedIndex::read(&ctx.repo)?;
            if gate {
                pre_commit_on(ctx, &staged, true)?;
            }
            super::gate::matching_approval(ctx, &staged)?
        }
    };
    let Some(approval) = approval else {
        return Ok(report::CommitMsg {
            trailers: None,
            approved: None,
        });
    };
    let wanted =
        trailers::pair_trailers(approval.run_id.as_str(), &approval.reviewer, approval.round)
            .map_err(|e| Error::BadFile {
                what: "review record of run",
                path: approval.run_id.to_string(),
                expected: "a reviewer name fit for a trailer",
                detail: e.to_string(),
            })?;
    let message = std::fs::read(file).map_err(|source| Error::ReadFile {
        what: "commit message",
        path: file.display().to_string(),
        source,
    })?;
    let comment = comment_prefix(ctx);
    let options = trailers::Options {
        comment_prefix: &comment,
        ..Default::default()
    };
    let updated = trailers::add_trailers(&message, &wanted, &options);
    let approved = Some(report::ApprovedRound {
        run_id: approval.run_id,
        round: approval.round,
    });
    if updated == message {
        return Ok(report::CommitMsg {
            trailers: Some(report::Trailers::AlreadyThere),
            approved,
        });
    }
    std::fs::write(file, &updated).map_err(|source| Error::WriteFile {
        what: "commit message",
        path: file.display().to_string(),
        source,
    })?;
    Ok(report::CommitMsg {
        trailers: Some(report::Trailers::Added),
        approved,
    })
}

/// What starts a comment line in commit messages: `core.commentString`, else
/// `core.commentChar`, else `#`. `auto` (git picks a character the message does not use) is
/// read as `#`, the character git tries first.
fn comment_prefix(ctx: &Context) -> String {
    ["core.commentString", "core.commentChar"]
        .iter()
        .find_map(|key| ctx.repo.config_values(key).pop())
        .filter(|v| !v.is_empty() && v != "auto")
        .unwrap_or_else(|| "#".to_owned())
}

/// Writes the branch's newest run's line on HEAD when HEAD's tree is the snapshot that run
/// vouches for (an approved one; for a finished run, the one `finish` vouched for).
pub fn post_commit(ctx: &Context) -> Result<report::PostCommit, Error> {
    // The commit is made: pre-commit's pass served its commit-msg.
    let _ = std::fs::remove_file(passed_path(ctx));
    // The next pre-commit compares the index with this commit's tree: read now, while the
    // commit is a loose object, and kept (see `Repo::project_commit_tree`).
    if !ctx.options.never_commit.iter().all(|p| p.trim().is_empty())
        && let Some(head) = ctx.repo.head()?.commit()
    {
        let _ = ctx.repo.keep_commit_tree(head);
    }
    let run_id = match super::common::select::latest(ctx, None) {
        Ok(run_id) => run_id,
        Err(Error::NoActiveRun { .. }) => {
            return Ok(report::PostCommit {
                note: None,
                on: None,
            });
        }
        Err(e) => return Err(e),
    };
    let (note, commit) = match super::common::note::attach_to_head(ctx, &run_id)? {
        NoteState::Attached(c) => (report::NoteStatus::Attached, Some(c.to_string())),
        NoteState::AlreadyAttached(c) => (report::NoteStatus::AlreadyAttached, Some(c.to_string())),
        NoteState::NotYet => (report::NoteStatus::NotApprovedWork, None),
        NoteState::NothingReviewed => (report::NoteStatus::NothingReviewed, None),
    };
    Ok(report::PostCommit {
        note: Some(note),
        on: Some(report::NoteOn { run_id, commit }),
    })
}

/// The most of the agent's hook input read; a bigger input is not a hook input (the agent may
/// stop).
pub const MAX_STDIN: u64 = 4 << 20;

/// The Stop hook: decides from the agent's `stdin` and the state of the branch's active run.
/// `open` opens the repository (given the parsed input, whose `cwd` the agent set); it is
/// called only when the input allows a block at all. Any failure lets the agent stop.
pub fn agent_stop(
    stdin: &[u8],
    open: impl FnOnce(&HookInput) -> Result<Context, Error>,
) -> report::AgentStop {
    match agent_stop::decide_with(stdin, |input| run_view(open(input)?)) {
        Decision::Allow(_) => report::AgentStop::Allow {},
        Decision::Block { reason } => report::AgentStop::Block {
            decision: report::Block::Block,
            reason,
        },
        Decision::Inform { message, .. } => report::AgentStop::Inform {
            system_message: message,
        },
    }
}

fn run_view(ctx: Context) -> Result<RunView, Error> {
    // Cheap first: no run ref at all means no run, before any manifest is read.
    if ctx.repo.newest_run_tips(1)?.is_empty() {
        return Ok(RunView::NoRun);
    }
    let run_id = match super::common::select::active(&ctx, None) {
        Ok(run_id) => run_id,
        Err(Error::NoActiveRun { .. }) => {
            // A checkpoint made here with no run, handed over since: say where it went.
            return Ok(match super::common::handoff::handed_over_carrier(&ctx)? {
                Some((_, went)) => handed_over_view(&ctx, &went)?,
                None => RunView::NoRun,
            });
        }
        Err(e) => return Err(e),
    };
    let state = ctx.load(&run_id)?;
    // The handoff's source stops whatever the run's state: the work continues elsewhere.
    if let Some(went) = super::common::handoff::handed_over(&ctx, &state)? {
        return handed_over_view(&ctx, &went);
    }
    let next = super::status::next_action(&ctx, &state.manifest);
    // Only `code` and `finish` block or not depending on the work tree.
    let unreviewed_work = match next {
        NextAction::Code | NextAction::Finish => work_tree_differs(&ctx, &state)?,
        _ => false,
    };
    Ok(RunView::Run {
        run_id: run_id.to_string(),
        next_action: next.as_str().to_owned(),
        unreviewed_work,
    })
}

/// The Stop hook's view of a handoff that went elsewhere.
fn handed_over_view(
    ctx: &Context,
    went: &crate::model::checkpoint::rules::HandedOver,
) -> Result<RunView, Error> {
    let head_moved = ctx.repo.head()?.commit() != Some(went.head.into());
    let changed_since =
        head_moved || !crate::worktree::snapshot::equals(&ctx.repo, went.status.into())?;
    // Host and path come from a record made elsewhere: one line each, bounded, no controls.
    let plain = |text: &str| {
        crate::util::first_line_clipped(text, 200)
            .chars()
            .filter(|c| !c.is_control())
            .collect::<String>()
    };
    Ok(RunView::HandedOver {
        checkpoint: went.checkpoint.to_string(),
        to: format!("{}:{}", plain(&went.host), plain(&went.path)),
        archived: went.archived,
        changed_since,
    })
}

/// Whether the work tree (as a review would snapshot it; nothing is written) differs from the
/// last reviewed snapshot, or from the base before any review.
fn work_tree_differs(ctx: &Context, state: &crate::store::RunState) -> Result<bool, Error> {
    let reviewed = match super::common::note::newest_review(ctx, state, |_| true)? {
        Some(review) => super::common::note::reviewed_tree(ctx, state, &review)?,
        None => None,
    };
    let against = match reviewed {
        Some(tree) => tree,
        None => match state.manifest.base {
            Some(base) => ctx.repo.project_commit_tree(base.into())?,
            None => return Ok(true),
        },
    };
    Ok(!crate::worktree::snapshot::equals(&ctx.repo, against)?)
}
