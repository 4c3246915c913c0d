//! The work tree as `start` sees it: the clean-tree precondition, computed in-process with gix
//! (no `git status` subprocess). Tracked modifications, staged changes and untracked files
//! that are not ignored make a tree dirty; ignored files do not.

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
/// Stops at the first finding, so a dirty tree is usually reported before the whole tree
/// has been walked; a clean tree costs one full status pass.
pub fn first_dirty(repo: &Repo) -> Result<Option<Dirty>, Error> {
    let repo = repo.gix();
    let iter = repo
        .status(gix::progress::Discard)
        .map_err(Error::git("prepare a status check"))?
        .untracked_files(UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .tree_index_track_renames(gix::status::tree_index::TrackRenames::Disabled)
        .into_iter(None)
        .map_err(Error::git("start a status check"))?;
    for item in iter {
        let item = item.map_err(Error::git("check the work tree's status"))?;
        match &item {
            gix::status::Item::TreeIndex(change) => {
                return Ok(Some(Dirty {
                    path: change.location().to_string(),
                    what: "staged",
                }));
            }
            gix::status::Item::IndexWorktree(change) => {
                if let Some(summary) = change.summary() {
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
                        path: change.rela_path().to_string(),
                        what,
                    }));
                }
            }
        }
    }
    Ok(None)
}
