//! The snapshot operations on an opened [`Repo`], for the operations layer: it names the
//! store's repository, never gix's, and gets the same trees as the functions beside this one.

use gix::ObjectId;

use super::{Error, Staged};
use crate::store::Repo;

/// Writes the work tree's snapshot into the object database ([`super::write_worktree_tree`]).
pub fn write(repo: &Repo) -> Result<ObjectId, Error> {
    super::write_worktree_tree(repo.gix())
}

/// Computes the work tree's snapshot in memory, written later or never
/// ([`super::stage_worktree_tree`]).
pub fn stage(repo: &Repo) -> Result<Staged, Error> {
    super::stage_worktree_tree(repo.gix())
}

/// The snapshot's tree id, nothing written ([`super::worktree_tree_id`]).
pub fn tree_id(repo: &Repo) -> Result<ObjectId, Error> {
    super::worktree_tree_id(repo.gix())
}

/// Whether the work tree, as a snapshot would hold it, is exactly `tree`
/// ([`super::worktree_equals_tree`]).
pub fn equals(repo: &Repo, tree: ObjectId) -> Result<bool, Error> {
    super::worktree_equals_tree(repo.gix(), tree)
}

impl Staged {
    /// Writes the snapshot's new objects into `repo` and returns the tree ([`Staged::write`]).
    pub fn write_into(self, repo: &Repo) -> Result<ObjectId, Error> {
        self.write(repo.gix())
    }

    /// The entries that differ from `old` (a tree, `None` for the empty tree) to the
    /// snapshot, its objects read from memory where they are not stored yet.
    pub fn changes_since(
        &self,
        old: Option<ObjectId>,
    ) -> Result<Vec<crate::diff::RawChange>, crate::diff::Error> {
        crate::diff::raw_changes(self.objects(), old, self.tree())
    }
}
