//! Which run a command acts on: the one named on the command line (validated before use),
//! else the newest unfinished run whose branch is the current branch **and that belongs to
//! this clone** (SPEC §5). Commands that also read a finished run (`status`, `finish`,
//! `pr-body`, the commit gate) fall back to the newest such run there.
//!
//! A run belongs here when this clone started it, adopted it (`git pair adopt`) or restored
//! one of its checkpoints: the local ref `refs/pair-local/owned/<run>` says so, and no push or
//! pull carries it. A run started before runs had owners (its start record does not claim it)
//! belongs to the clone whose work tree it was started in, or that never received it from a
//! remote: so nobody loses an active run on upgrade, and a run pulled from elsewhere stays
//! someone else's. Runs that belong elsewhere are listed, shown and verified, never chosen.

use std::cell::OnceCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::model::RunId;
use crate::ops::{Context, Error};
use crate::store::Repo;

/// The run named by `explicit` (a positional argument) or `--run`, checked to exist.
pub fn named(ctx: &Context, explicit: Option<&str>) -> Result<Option<RunId>, Error> {
    let Some(id) = explicit.or(ctx.run_flag()) else {
        return Ok(None);
    };
    let id = RunId::parse(id)?;
    if ctx.repo.run_tip(&id)?.is_none() {
        return Err(crate::store::Error::UnknownRun {
            run_id: id.to_string(),
        }
        .into());
    }
    Ok(Some(id))
}

/// The run named on the command line, else this clone's newest unfinished run on the current
/// branch.
pub fn active(ctx: &Context, explicit: Option<&str>) -> Result<RunId, Error> {
    if let Some(id) = named(ctx, explicit)? {
        return Ok(id);
    }
    let branch = ctx.repo.head()?.branch_name().to_owned();
    let found = newest_on_branch(&ctx.repo, &branch, false, |finished| !finished)?;
    found.owned.ok_or_else(|| Error::NoActiveRun {
        branch,
        elsewhere: found.elsewhere.map(|id| id.to_string()),
    })
}

/// The run named on the command line, else this clone's newest unfinished run on the current
/// branch, else its newest finished one there (a PR body, a status and the commit gate are
/// wanted after `finish`).
pub fn latest(ctx: &Context, explicit: Option<&str>) -> Result<RunId, Error> {
    if let Some(id) = named(ctx, explicit)? {
        return Ok(id);
    }
    let branch = ctx.repo.head()?.branch_name().to_owned();
    let unfinished = newest_on_branch(&ctx.repo, &branch, false, |finished| !finished)?;
    if let Some(id) = unfinished.owned {
        return Ok(id);
    }
    let any = newest_on_branch(&ctx.repo, &branch, false, |_| true)?;
    any.owned.ok_or_else(|| Error::NoActiveRun {
        branch,
        elsewhere: unfinished
            .elsewhere
            .or(any.elsewhere)
            .map(|id| id.to_string()),
    })
}

/// This clone's newest unfinished run on `branch`, read through `repo` (any handle on the
/// repository: `start` looks on another thread while it checks the work tree).
pub fn newest_unfinished(repo: &Repo, branch: &str) -> Result<Option<RunId>, Error> {
    Ok(newest_on_branch(repo, branch, false, |finished| !finished)?.owned)
}

/// This clone's newest run on the current branch that only carries a checkpoint made with no
/// run active (never the active run; `status` and the Stop hook look at it for a handoff
/// that went elsewhere).
pub fn newest_carrier(ctx: &Context) -> Result<Option<RunId>, Error> {
    let branch = ctx.repo.head()?.branch_name().to_owned();
    Ok(newest_on_branch(&ctx.repo, &branch, true, |_| true)?.owned)
}

/// Decides which runs belong to this clone, reading each fact once.
pub struct Owners<'a> {
    repo: &'a Repo,
    /// Every ownership ref, when listing many runs; `None`: each run's ref is looked up.
    claims: Option<BTreeSet<RunId>>,
    work_trees: OnceCell<Vec<PathBuf>>,
    staged: OnceCell<BTreeSet<String>>,
}

impl<'a> Owners<'a> {
    /// For a few runs: each one's ownership ref is looked up when asked.
    pub fn new(repo: &'a Repo) -> Owners<'a> {
        Owners {
            repo,
            claims: None,
            work_trees: OnceCell::new(),
            staged: OnceCell::new(),
        }
    }

    /// For many runs (a listing): the ownership refs are read in one pass.
    pub fn for_listing(repo: &'a Repo) -> Result<Owners<'a>, Error> {
        Ok(Owners {
            claims: Some(repo.claimed_runs()?),
            ..Owners::new(repo)
        })
    }

    /// Whether run `run_id` belongs to this clone; `claimed` and `cwd` are its start record's
    /// (as the manifest or the run summary holds them).
    pub fn belongs_here(&self, run_id: &RunId, claimed: bool, cwd: &str) -> Result<bool, Error> {
        let has_claim = match &self.claims {
            Some(claims) => claims.contains(run_id),
            None => self.repo.has_claim(run_id)?,
        };
        if has_claim {
            return Ok(true);
        }
        if claimed {
            // Started since runs have owners, and this clone holds no claim: another's.
            return Ok(false);
        }
        // Started before runs had owners.
        if self.is_work_tree(cwd) {
            return Ok(true);
        }
        Ok(!self.staged()?.contains(run_id.as_str()))
    }

    fn is_work_tree(&self, cwd: &str) -> bool {
        let trees = self.work_trees.get_or_init(|| self.repo.work_trees());
        let cwd = Path::new(cwd);
        if trees.iter().any(|t| t == cwd) {
            return true;
        }
        let Ok(cwd) = cwd.canonicalize() else {
            return false;
        };
        trees
            .iter()
            .any(|t| t.canonicalize().is_ok_and(|t| t == cwd))
    }

    /// The run ids that have a staged copy from some remote.
    fn staged(&self) -> Result<&BTreeSet<String>, Error> {
        if let Some(staged) = self.staged.get() {
            return Ok(staged);
        }
        let ids = self.repo.staged_run_ids()?;
        Ok(self.staged.get_or_init(|| ids))
    }
}

/// What a search of one branch found.
struct Found {
    /// The newest wanted run that belongs here.
    owned: Option<RunId>,
    /// The newest wanted run newer than it (or any, when none belongs here) that belongs to
    /// another clone: named in the error, so the user learns of `adopt`.
    elsewhere: Option<RunId>,
}

/// The newest run on `branch` whose finished state `wanted` accepts and that belongs here:
/// among the runs that only carry a checkpoint when `carrier`, else among the others.
/// The newest few runs are read directly (the usual case: this branch's run is among the
/// latest); past them, only runs that can belong here are read: this clone's ownership refs
/// and the runs started before runs had owners, newest first. So the cost follows this
/// clone's own runs, never the number of runs other clones pushed.
fn newest_on_branch(
    repo: &Repo,
    branch: &str,
    carrier: bool,
    wanted: impl Fn(bool) -> bool,
) -> Result<Found, Error> {
    const READ_DIRECTLY: usize = 8;
    let owners = Owners::new(repo);
    let mut found = Found {
        owned: None,
        elsewhere: None,
    };
    let matches = |m: &crate::model::Manifest| {
        m.branch == branch && m.carrier == carrier && wanted(m.is_finished())
    };
    // One more than is read: whether any run lies past them.
    let newest = repo.newest_run_tips(READ_DIRECTLY + 1)?;
    for (id, tip) in newest.iter().rev().take(READ_DIRECTLY) {
        let m = match repo.load_at(id, *tip) {
            Ok(state) => state.manifest,
            // Another clone's unreadable run is nobody's active run here (`list` names it,
            // `drop` removes it); this clone's own stays an error, so its gate stays shut.
            Err(_) if !repo.has_claim(id)? => continue,
            Err(err) => return Err(err.into()),
        };
        if matches(&m) && found.consider(&owners, id, m.claimed, &m.cwd)? {
            return Ok(found);
        }
    }
    if newest.len() <= READ_DIRECTLY {
        return Ok(found);
    }
    let read: BTreeSet<&RunId> = newest
        .iter()
        .rev()
        .take(READ_DIRECTLY)
        .map(|(id, _)| id)
        .collect();
    let claimed = repo.claimed_runs()?;
    let mut candidates: BTreeSet<RunId> = repo.unclaimed_runs()?.into_iter().collect();
    candidates.extend(claimed.iter().cloned());
    for id in candidates.iter().rev() {
        if read.contains(id) {
            continue;
        }
        let Some(tip) = repo.run_tip(id)? else {
            // A claim (or an index line) left for a run that is gone.
            continue;
        };
        let m = match repo.load_at(id, tip) {
            Ok(state) => state.manifest,
            Err(_) if !claimed.contains(id) => continue,
            Err(err) => return Err(err.into()),
        };
        if matches(&m) && found.consider(&owners, id, m.claimed, &m.cwd)? {
            break;
        }
    }
    Ok(found)
}

impl Found {
    /// Takes a wanted run: as the answer when it belongs here (`true`: stop looking), else
    /// as the newest one that belongs elsewhere.
    fn consider(
        &mut self,
        owners: &Owners<'_>,
        run_id: &RunId,
        claimed: bool,
        cwd: &str,
    ) -> Result<bool, Error> {
        if owners.belongs_here(run_id, claimed, cwd)? {
            self.owned = Some(run_id.clone());
            return Ok(true);
        }
        self.elsewhere.get_or_insert_with(|| run_id.clone());
        Ok(false)
    }
}
