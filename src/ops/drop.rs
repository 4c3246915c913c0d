//! `drop`: removing a run for good (SPEC §4, §14). Locally: a tombstone
//! `refs/pair/dropped/<run-id>` is left first (so no pull can bring the run back), then the
//! run's ref, every remote's staged copy of it and its note lines go, with its rendered
//! views. With a remote: the tombstone is published and the run deleted there too, each a
//! compare-and-swap. Afterwards `git gc --prune=now` removes every object only the run held.
//! The active run (unfinished, on this branch) is only dropped with `--force`.

use super::sync::scan::Guard;
use super::{Context, Error};
use crate::model::RunId;
use crate::model::report::drop as report;
use crate::sync::{Remote, Scope};

/// What `drop` was asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub run: String,
    pub remote: Option<String>,
    pub force: bool,
    pub reason: Option<String>,
}

/// Drops `request.run`: locally, and on `request.remote` when given.
pub fn drop(
    ctx: &Context,
    request: &Request,
    progress: &dyn Fn(&str),
) -> Result<report::Dropped, Error> {
    let run_id = RunId::parse(&request.run)?;
    let repo = &ctx.repo;
    let was_local = repo.run_tip(&run_id)?.is_some();
    let already_dropped = repo.tombstones()?.contains_key(&run_id);
    if was_local && !request.force {
        // A run that cannot be read (its ref names no commit with a manifest) is nobody's
        // active run: it goes without `--force`.
        let manifest = repo.load(&run_id).ok().map(|state| state.manifest);
        let branch = repo.head()?.branch_name().to_owned();
        if let Some(manifest) = manifest
            && !manifest.is_finished()
            && manifest.branch == branch
        {
            return Err(Error::DropActive {
                run_id: run_id.to_string(),
                branch,
            });
        }
    }
    // A run only the remote has: fetched first, so the tombstone can name what is dropped.
    let mut was_local = was_local;
    if !was_local
        && !already_dropped
        && let Some(remote) = request.remote.as_deref()
    {
        let remote = Remote::resolve(repo, remote)?;
        let _one_at_a_time = repo.lock_sync(&remote.staging)?;
        progress(&format!("fetching run {run_id} from {}…", remote.name));
        let keep = super::sync::keep_active(ctx);
        crate::sync::pull(repo, &remote, &keep)?;
        was_local = repo.run_tip(&run_id)?.is_some();
    }
    if !was_local && !already_dropped && request.remote.is_none() {
        return Err(crate::store::Error::UnknownRun {
            run_id: run_id.to_string(),
        }
        .into());
    }
    let remote = request
        .remote
        .as_deref()
        .map(|r| Remote::resolve(repo, r))
        .transpose()?;

    let mut text = format!(
        "git pair: run {run_id} dropped at {}\n",
        crate::util::time::rfc3339(crate::util::time::now_unix())
    );
    if let Some(reason) = &request.reason {
        // The tombstone is published: no secret goes into it.
        let scanner = ctx.scanner()?;
        text.push_str(&format!(
            "reason: {}\n",
            scanner
                .redact("reason", &crate::util::first_line_clipped(reason, 500))
                .0
        ));
    }
    // Every commit of the run the dropper saw: a clone that pulls this tombstone removes its
    // copy only when its tip is one of them (so a tombstone — even a forged one — never
    // deletes records the dropper did not see).
    if let Some(tip) = repo.run_tip(&run_id)? {
        // A malformed run's ref may name no commit: its tip alone is what the dropper saw.
        for commit in repo.run_commits(&run_id, tip).unwrap_or_else(|_| vec![tip]) {
            text.push_str(&format!("tip {commit}\n"));
        }
    }
    // The tombstone's blob is not reported: its ref names it.
    let (_blob, tombstone_created) = repo.write_tombstone(&run_id, &text)?;
    let removed = crate::sync::remove_locally(repo, std::slice::from_ref(&run_id))?;
    super::review::forget_reviewer_dir(repo, &run_id);
    let mut files = crate::ops::common::view::forget(repo, &run_id)?;
    let pr_body = super::common::pr::body_path(ctx, &run_id);
    if std::fs::remove_file(&pr_body).is_ok() {
        files.push(pr_body);
    }

    let remote = match remote {
        Some(remote) => {
            let _one_at_a_time = repo.lock_sync(&remote.staging)?;
            progress(&format!("dropping run {run_id} on {}…", remote.name));
            let mut guard = Guard::new(repo, ctx.scanner()?, Default::default());
            let keep = super::sync::keep_active(ctx);
            let pushed = guard.push(&remote, &Scope::Dropping(run_id.clone()), &keep)?;
            Some(report::DroppedRemote {
                remote: remote.name,
                deleted: pushed.removed_runs.iter().any(|r| r == &run_id),
                tombstone_pushed: pushed.pushed_tombstones > 0,
                notes_pushed: pushed.pushed_notes,
            })
        }
        None => None,
    };
    Ok(report::Dropped {
        tombstone: crate::store::dropped_ref(&run_id),
        run_id,
        was_local,
        tombstone_created,
        removed_refs: removed.refs,
        removed_note_lines: removed.note_lines,
        removed_files: files.iter().map(|p| p.display().to_string()).collect(),
        remote,
    })
}
