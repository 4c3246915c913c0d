//! Which runs belong to this clone: the local refs `refs/pair-local/owned/<run-id>`, one per
//! run this clone started, adopted or restored a checkpoint of. They live outside `refs/pair/`,
//! so neither `push` nor `pull` (nor a CI fetch of `refs/pair/runs/*`) ever carries them: a run
//! that arrives from another clone is never this clone's by itself. Each points at a small blob
//! saying how and when the run became this clone's (a blob keeps nothing else reachable).
//! This module also answers the two facts the rule for runs started before ownership existed
//! needs: this clone's work trees, and whether a run ever came from a remote.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::cas::{Swap, Swapped};
use super::{Error, Repo};
use crate::model::RunId;

/// The namespace of ownership refs.
pub const OWNED_PREFIX: &str = "refs/pair-local/owned/";

/// The namespace of the local refs that keep a run's base commit reachable (the run's own
/// chain does not: its first commit has no parent, so publishing it publishes no project
/// history). Like ownership refs, push and pull never carry them.
pub const BASES_PREFIX: &str = "refs/pair-local/bases/";

/// The ref keeping run `run_id`'s base commit reachable here.
pub fn base_ref(run_id: &RunId) -> String {
    format!("{BASES_PREFIX}{run_id}")
}

/// The ownership ref of a run.
pub fn owned_ref(run_id: &RunId) -> String {
    format!("{OWNED_PREFIX}{run_id}")
}

/// How a run became this clone's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// `start` created it here.
    Started,
    /// `git pair adopt`.
    Adopted,
    /// `git pair checkpoint restore` of one of its checkpoints.
    Restored,
}

impl Claim {
    fn as_str(self) -> &'static str {
        match self {
            Claim::Started => "started",
            Claim::Adopted => "adopted",
            Claim::Restored => "restored",
        }
    }
}

/// The ownership blob's text.
pub(super) fn claim_text(run_id: &RunId, how: Claim) -> String {
    format!(
        "git pair: run {run_id} belongs to this clone ({}) since {}\n",
        how.as_str(),
        crate::util::time::rfc3339(crate::util::time::now_unix())
    )
}

impl Repo {
    /// Whether this clone holds the ownership ref of `run_id`.
    pub fn has_claim(&self, run_id: &RunId) -> Result<bool, Error> {
        Ok(self.ref_target(&owned_ref(run_id))?.is_some())
    }

    /// Every run this clone holds an ownership ref for (one listing of the namespace).
    pub fn claimed_runs(&self) -> Result<BTreeSet<RunId>, Error> {
        Ok(self
            .refs_under(OWNED_PREFIX)?
            .into_iter()
            .filter_map(|(name, _)| crate::store::ref_run_id(&name, OWNED_PREFIX))
            .collect())
    }

    /// Records `run_id` as this clone's own (compare-and-swap: created only when absent).
    /// Returns whether it was created now; `false` when it was this clone's already.
    pub fn claim_run(&self, run_id: &RunId, how: Claim) -> Result<bool, Error> {
        let name = owned_ref(run_id);
        if self.ref_target(&name)?.is_some() {
            return Ok(false);
        }
        let blob = self.write_blob(claim_text(run_id, how).as_bytes())?;
        let swap = Swap {
            name: &name,
            expected: None,
            new: Some(blob),
        };
        // Lost: another process claimed it first, which is the same outcome.
        Ok(self.compare_and_swap(&[swap], "git-pair: owned", None, || {
            format!("create {name}")
        })? == Swapped::Done)
    }

    /// The runs of which a copy was ever staged from a remote (`refs/pair-remotes/<remote>/
    /// pair/runs/<run-id>`): `pull` fetched them, or `push` published them.
    pub fn staged_run_ids(&self) -> Result<BTreeSet<String>, Error> {
        Ok(self
            .refs_under(super::layout::STAGING_ROOT)?
            .into_iter()
            .filter_map(|(name, _)| Some(name.rsplit_once("/pair/runs/")?.1.to_owned()))
            .collect())
    }

    /// This clone's work trees, absolute: the one this handle works in, the main one, and
    /// every linked worktree (`<common dir>/worktrees/*/gitdir` names each one's `.git` file).
    pub fn work_trees(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .work_dir()
            .ok()
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
        let common = self.common_dir();
        if common.file_name().is_some_and(|n| n == ".git")
            && let Some(main) = common.parent()
        {
            out.push(main.to_path_buf());
        }
        if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
            for entry in entries.flatten() {
                let Ok(text) = std::fs::read_to_string(entry.path().join("gitdir")) else {
                    continue;
                };
                let dot_git = PathBuf::from(text.trim_end_matches(['\n', '\r']));
                if let Some(dir) = dot_git.parent() {
                    out.push(dir.to_path_buf());
                }
            }
        }
        out
    }
}
