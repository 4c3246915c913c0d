//! The work tree as `start` sees it: the clean-tree precondition, computed in-process with gix
//! (no `git status` subprocess). Tracked modifications, staged changes and untracked files
//! that are not ignored make a tree dirty; ignored files do not.

mod fast;

use gix::status::UntrackedFiles;

use crate::store::{Error, Repo};

/// Why the work tree is not clean: the first offending path found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirty {
    /// Repository-relative path.
    pub path: String,
    /// `staged`, `modified`, `deleted`, `untracked`, … as `git status` would say.
    pub what: &'static str,
}

/// Returns the first reason the work tree is dirty, or None when it is clean.
///
/// Stops at the first finding. Staged changes are looked for first, and skipped entirely
/// when the index's cache tree says the index is exactly `HEAD^{tree}` — the shortcut git's
/// own `diff-index --cached` takes — so a clean tree costs one stat pass and one directory
/// walk, run in parallel: first by the fast path (`fast.rs`, which only proves a tree clean),
/// then, when it cannot, by gix's status, which finds the first dirty path.
pub fn first_dirty(repo: &Repo) -> Result<Option<Dirty>, Error> {
    let mut repo = repo.gix().clone();
    // The clean check only reads the index: verifying its trailing checksum would hash the
    // whole file (megabytes on big repositories) and prove nothing a decode error would not.
    repo.config_snapshot_mut()
        .set_value(&gix::config::tree::Index::SKIP_HASH, "true")
        .map_err(Error::git("configure index reading"))?;
    let index = repo
        .index_or_empty()
        .map_err(Error::git("read the index"))?;
    if let Some(path) = first_staged(&repo, &index)? {
        return Ok(Some(Dirty {
            path,
            what: "staged",
        }));
    }
    if fast::is_clean(&repo, &index) {
        return Ok(None);
    }
    let iter = repo
        .status(gix::progress::Discard)
        .map_err(Error::git("prepare a status check"))?
        .index(index.into())
        .untracked_files(UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .into_index_worktree_iter(Vec::new())
        .map_err(Error::git("start a status check"))?;
    for item in iter {
        let item = item.map_err(Error::git("check the work tree's status"))?;
        if let Some(summary) = item.summary() {
            use gix::status::index_worktree::iter::Summary;
            let what = match summary {
                Summary::Added => "untracked",
                Summary::Removed => "deleted",
                Summary::Modified | Summary::TypeChange => "modified",
                Summary::Renamed | Summary::Copied => "renamed",
                Summary::IntentToAdd => "intent-to-add",
                Summary::Conflict => "conflicted",
            };
            return Ok(Some(Dirty {
                path: item.rela_path().to_string(),
                what,
            }));
        }
    }
    Ok(None)
}

/// The first path whose index entry differs from `HEAD^{tree}`, if any.
fn first_staged(
    repo: &gix::Repository,
    index: &gix::worktree::Index,
) -> Result<Option<String>, Error> {
    let head_tree = repo
        .head_tree_id_or_empty()
        .map_err(Error::git("read HEAD's tree"))?
        .detach();
    let cache_tree_matches = index.tree().is_some_and(|root| {
        root.id == head_tree
            && root.num_entries.and_then(|n| usize::try_from(n).ok()) == Some(index.entries().len())
    });
    if cache_tree_matches {
        return Ok(None);
    }
    let mut pathspec = repo
        .pathspec(
            false,
            None::<&str>,
            false,
            &gix::index::State::new(repo.object_hash()),
            gix::worktree::stack::state::attributes::Source::IdMapping,
        )
        .map_err(Error::git("prepare a pathspec"))?;
    let mut first = None;
    repo.tree_index_status(
        &head_tree,
        index,
        Some(&mut pathspec),
        gix::status::tree_index::TrackRenames::Disabled,
        |change, _, _| {
            first = Some(change.location().to_string());
            Ok(gix::diff::index::Action::Break(()))
        },
    )
    .map_err(Error::git("compare the index with HEAD"))?;
    Ok(first)
}
