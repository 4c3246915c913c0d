//! Walking a run's commit chain: the run's own commits (those carrying its `Pair-Run`
//! trailer), never the project history behind its base, so a walk costs the length of the
//! run, not of the project.

use std::collections::HashSet;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{Error, Repo};
use crate::model::RunId;

impl Repo {
    /// Whether `ancestor` is `descendant` or one of its ancestors within the run's chain.
    /// The walk stops at commits that are not the run's (its base commit and the project
    /// history behind it), so it costs the length of the run, not of the project.
    pub fn run_contains(
        &self,
        run_id: &RunId,
        descendant: ObjectId,
        ancestor: ObjectId,
    ) -> Result<bool, Error> {
        let mut found = false;
        self.walk_run_chain(run_id, descendant, |id, _| {
            found = id == ancestor;
            !found
        })?;
        Ok(found)
    }

    /// Every commit of the run's chain from `tip` (stopping at commits that are not the run's:
    /// its base and the project history behind it).
    pub fn run_commits(&self, run_id: &RunId, tip: ObjectId) -> Result<Vec<ObjectId>, Error> {
        let mut out = Vec::new();
        self.walk_run_chain(run_id, tip, |id, in_run| {
            if in_run {
                out.push(id);
            }
            true
        })?;
        Ok(out)
    }

    /// Visits each commit reached from `tip` once, with whether it is the run's (it carries
    /// the run's `Pair-Run` trailer; one that does not ends its branch of the walk), until
    /// `visit` returns false.
    fn walk_run_chain(
        &self,
        run_id: &RunId,
        tip: ObjectId,
        mut visit: impl FnMut(ObjectId, bool) -> bool,
    ) -> Result<(), Error> {
        let trailer = format!("Pair-Run: {run_id}");
        let mut seen = HashSet::new();
        let mut queue = vec![tip];
        while let Some(id) = queue.pop() {
            if !seen.insert(id) {
                continue;
            }
            let commit = self
                .repo
                .find_commit(id)
                .map_err(Error::git("read a run commit"))?;
            let message = commit
                .message_raw()
                .map_err(Error::git("read a run commit's message"))?;
            let in_run = message
                .lines()
                .any(|line| line.trim() == trailer.as_bytes());
            if !visit(id, in_run) {
                return Ok(());
            }
            if in_run {
                queue.extend(commit.parent_ids().map(|p| p.detach()));
            }
        }
        Ok(())
    }
}
