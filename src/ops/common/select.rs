//! Which run a command acts on: the one named on the command line (validated before use),
//! else the newest unfinished run whose branch is the current branch. Commands that also
//! read a finished run (`status`, `finish`, `pr-body`) fall back to the newest run there.

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

/// The run named on the command line, else the newest unfinished run on the current branch.
pub fn active(ctx: &Context, explicit: Option<&str>) -> Result<RunId, Error> {
    if let Some(id) = named(ctx, explicit)? {
        return Ok(id);
    }
    let branch = ctx.repo.head()?.branch_name().to_owned();
    newest_on_branch(&ctx.repo, &branch, |finished| !finished)?.ok_or(Error::NoActiveRun { branch })
}

/// The run named on the command line, else the newest unfinished run on the current branch,
/// else the newest finished one there (a PR body and a status are wanted after `finish`).
pub fn latest(ctx: &Context, explicit: Option<&str>) -> Result<RunId, Error> {
    if let Some(id) = named(ctx, explicit)? {
        return Ok(id);
    }
    let branch = ctx.repo.head()?.branch_name().to_owned();
    if let Some(id) = newest_on_branch(&ctx.repo, &branch, |finished| !finished)? {
        return Ok(id);
    }
    newest_on_branch(&ctx.repo, &branch, |_| true)?.ok_or(Error::NoActiveRun { branch })
}

/// The newest unfinished run on `branch`, read through `repo` (any handle on the
/// repository: `start` looks on another thread while it checks the work tree).
pub fn newest_unfinished(repo: &Repo, branch: &str) -> Result<Option<RunId>, Error> {
    newest_on_branch(repo, branch, |finished| !finished)
}

/// The newest run on `branch` whose finished state `wanted` accepts. The newest few runs are
/// read directly (the usual case: this branch's run is among the latest); past them, the
/// cached run summaries answer without reading every manifest.
fn newest_on_branch(
    repo: &Repo,
    branch: &str,
    wanted: impl Fn(bool) -> bool,
) -> Result<Option<RunId>, Error> {
    const READ_DIRECTLY: usize = 8;
    // One more than is read: whether any run lies past them.
    let newest = repo.newest_run_tips(READ_DIRECTLY + 1)?;
    for (id, tip) in newest.iter().rev().take(READ_DIRECTLY) {
        let m = repo.load_at(id, *tip)?.manifest;
        if m.branch == branch && wanted(m.is_finished()) {
            return Ok(Some(id.clone()));
        }
    }
    if newest.len() <= READ_DIRECTLY {
        return Ok(None);
    }
    Ok(repo
        .run_summaries()?
        .into_iter()
        .rev()
        .find(|s| s.branch == branch && wanted(s.finished))
        .map(|s| s.run_id))
}
