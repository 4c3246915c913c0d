//! The commit gate (SPEC §9): while this branch has a run that belongs to this clone — active,
//! or finished — what a commit would record (the index as a tree) must be the snapshot the
//! run's reviewer APPROVED (an approval no later review revoked). `finish` opens nothing else:
//! after it, the approved tree still commits and any other tree is refused until a new run
//! starts. Runs that arrived from another clone never gate here. One check for `git pair
//! gate`, the `pre-commit --gate` hook and the `commit-msg` trailers, plus the never-commit
//! check every `pre-commit` makes. Nothing here writes anything.

use gix::ObjectId;

use super::{Context, Error};
use crate::model::report::gate::{self, Gate};
use crate::model::{RunId, Verdict};
use crate::store::RunState;
use crate::worktree::{StagedChange, StagedIndex};

/// How many differing paths a refusal names.
pub const LISTED_PATHS: usize = 10;

/// The approval a commit is measured against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub run_id: RunId,
    /// The reviewer round that approved.
    pub round: u32,
    /// The reviewer (realization) that approved, as recorded.
    pub reviewer: String,
    /// The approved snapshot's tree id.
    pub snapshot: ObjectId,
}

/// Why the gate is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Open {
    /// This clone has no run on this branch (none started or adopted): nothing gates commits.
    NoActiveRun { branch: String },
    /// The staged tree is the approved snapshot.
    Approved(Approval),
}

/// The approval of `run_id` that stands, with its snapshot: the newest review with a verdict,
/// when it approved. `None` when nothing was approved, or a later review requested changes
/// (a later round, or `review --again` on the same snapshot): that revokes the approval.
pub fn approval(ctx: &Context, run_id: &RunId) -> Result<Option<Approval>, Error> {
    approval_of(ctx, &ctx.load(run_id)?)
}

/// [`approval`] of a run already loaded.
fn approval_of(ctx: &Context, state: &RunState) -> Result<Option<Approval>, Error> {
    let Some(review) = super::common::note::newest_review(ctx, state, |_| true)? else {
        return Ok(None);
    };
    // A partial approval (some file reached no reviewer) is no approval here (SPEC §6.2).
    if review.verdict != Some(Verdict::Approved) || review.is_partial() {
        return Ok(None);
    }
    let Some(snapshot) = super::common::note::reviewed_tree(ctx, state, &review)? else {
        return Ok(None);
    };
    Ok(Some(Approval {
        run_id: state.run_id.clone(),
        round: review.round,
        reviewer: review.tool,
        snapshot,
    }))
}

/// The gate for the index as it is now: open (and why, `gate`'s report), or
/// [`Error::GateClosed`] naming the run, the approval and the first differing paths.
pub fn check(ctx: &Context) -> Result<Gate, Error> {
    Ok(match check_index(ctx, None)? {
        Open::NoActiveRun { branch } => Gate::NoActiveRun(gate::NoActiveRun {
            open: true,
            reason: "no-active-run",
            branch,
        }),
        Open::Approved(approval) => Gate::Approved(gate::Approved {
            open: true,
            reason: "approved",
            run_id: approval.run_id,
            round: approval.round,
            reviewer: approval.reviewer,
            tree: approval.snapshot.to_string(),
        }),
    })
}

/// [`check`] on an index already read (`None`: read it when needed). The run gating is this
/// clone's newest run on the branch, unfinished or else finished.
pub fn check_index(ctx: &Context, staged: Option<&StagedIndex>) -> Result<Open, Error> {
    let run_id = match super::common::select::latest(ctx, None) {
        Ok(run_id) => run_id,
        Err(Error::NoActiveRun { branch, .. }) => return Ok(Open::NoActiveRun { branch }),
        Err(e) => return Err(e),
    };
    let state = ctx.load(&run_id)?;
    let finished = state.manifest.is_finished();
    let Some(approval) = approval_of(ctx, &state)? else {
        if let Some(review) = super::common::note::newest_review(ctx, &state, |_| true)?
            .filter(|r| r.verdict == Some(Verdict::Approved) && r.is_partial())
        {
            return Err(Error::GatePartial {
                run_id: run_id.to_string(),
                round: review.round,
                summary: review.coverage_warning.unwrap_or_default(),
            });
        }
        return Err(Error::GateClosed {
            run_id: run_id.to_string(),
            approved_round: None,
            paths: Vec::new(),
            more: 0,
            finished,
            committed: false,
        });
    };
    let read;
    let staged = match staged {
        Some(staged) => staged,
        None => {
            read = StagedIndex::read(&ctx.repo)?;
            &read
        }
    };
    let differences = differences(staged, approval.snapshot)?;
    if differences.total == 0 {
        return Ok(Open::Approved(approval));
    }
    // Only on a refusal, and one object read: whether HEAD holds the approved work already
    // (then the way on is a new run, not "commit the approved tree first").
    let committed = finished
        && ctx
            .repo
            .head()?
            .commit()
            .map(|head| ctx.repo.commit_tree(head))
            .transpose()?
            == Some(approval.snapshot);
    Err(Error::GateClosed {
        run_id: run_id.to_string(),
        approved_round: Some(approval.round),
        more: differences.total - differences.listed.len(),
        paths: differences.listed,
        finished,
        committed,
    })
}

/// This clone's newest run on this branch (unfinished, else finished) and its approval, when
/// the index is that approved snapshot: a commit made now carries the approved work. Covers
/// "finish, then commit" as well as committing while the run is active. `staged` is the
/// index as the commit records it.
pub fn matching_approval(ctx: &Context, staged: &StagedIndex) -> Result<Option<Approval>, Error> {
    let run_id = match super::common::select::latest(ctx, None) {
        Ok(run_id) => run_id,
        Err(Error::NoActiveRun { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(approval) = approval(ctx, &run_id)? else {
        return Ok(None);
    };
    Ok((differences(staged, approval.snapshot)?.total == 0).then_some(approval))
}

/// The first differing paths and how many there are.
struct Differences {
    listed: Vec<(String, &'static str)>,
    total: usize,
}

fn differences(staged: &StagedIndex, tree: ObjectId) -> Result<Differences, Error> {
    let mut listed = Vec::new();
    let mut total = 0;
    staged.changes_against(tree, &mut |path, change| {
        total += 1;
        if listed.len() < LISTED_PATHS {
            listed.push((String::from_utf8_lossy(path).into_owned(), change.as_str()));
        }
    })?;
    Ok(Differences { listed, total })
}

/// Refuses ([`Error::NeverCommit`]) when the commit would add or change a path matching
/// `pair.neverCommit` (default `HANDOFF.md`), compared with HEAD. Patterns are gitignore-style
/// (`crate::packet::glob`): a name without `/` matches at any depth, `/HANDOFF.md` only at
/// the root, `dir/` a whole directory. Deleting such a path is always allowed.
pub fn check_never_commit(ctx: &Context, staged: &StagedIndex) -> Result<(), Error> {
    if ctx.options.never_commit.iter().all(|p| p.trim().is_empty()) {
        return Ok(());
    }
    let patterns = crate::packet::glob::PathSet::new(&ctx.options.never_commit);
    let head_tree = ctx.repo.head_tree_or_empty()?;
    let mut found = None;
    staged.changes_against(head_tree, &mut |path, change| {
        if found.is_some() || !matches!(change, StagedChange::Added | StagedChange::Modified) {
            return;
        }
        if let Some(pattern) = patterns.matching(path) {
            found = Some((
                String::from_utf8_lossy(path).into_owned(),
                pattern.to_owned(),
            ));
        }
    })?;
    match found {
        Some((path, pattern)) => Err(Error::NeverCommit { path, pattern }),
        None => Ok(()),
    }
}
