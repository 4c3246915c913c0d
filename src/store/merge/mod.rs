//! Record-union merge of two tips of one run.
//!
//! Owns how a local run ref takes in a tip fetched from elsewhere: identical → nothing,
//! local behind → fast-forward (to the tip, or to a commit on it whose manifest is projected
//! from its records when the fetched one is not that projection), remote behind → nothing, absent → create, diverged → a merge
//! commit whose tree holds the union of both sides' records and files (built in `trees`),
//! with `manifest.json` recomputed by [`crate::model::Manifest::project`]. The merge is a
//! function of the *set* of entries on both sides, so it is deterministic, commutative and
//! idempotent, and the merge commit itself is deterministic too (sorted parents, fixed
//! identity, time of the newer parent): two machines merging the same pair of tips write the
//! same commit. Never touches the network; never rewrites a record.

mod trees;
mod union;

use gix::ObjectId;

use super::cas::retry_lost_races;
use super::{Error, Repo};
use crate::model::RunId;
pub use trees::MergedTree;

/// The identity of merge commits: fixed, so both machines write the same commit.
const MERGE_NAME: &str = "git-pair";
const MERGE_EMAIL: &str = "git-pair@localhost";

/// What integrating another tip did to a local ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integration {
    /// Both sides were at the same commit.
    Unchanged,
    /// The local ref already contained the other tip.
    LocalAhead,
    /// The ref did not exist locally and was created.
    Created,
    /// The local ref was behind and moved forward.
    FastForwarded,
    /// The two had diverged; the ref now points at a merge commit.
    Merged,
}

/// How many refs each kind of [`Integration`] touched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub created: usize,
    pub fast_forwarded: usize,
    pub merged: usize,
    pub unchanged: usize,
    pub local_ahead: usize,
}

impl Counts {
    /// Counts one integration.
    pub fn add(&mut self, integration: Integration) {
        match integration {
            Integration::Unchanged => self.unchanged += 1,
            Integration::LocalAhead => self.local_ahead += 1,
            Integration::Created => self.created += 1,
            Integration::FastForwarded => self.fast_forwarded += 1,
            Integration::Merged => self.merged += 1,
        }
    }
}

/// The result of integrating many runs: the tally and the runs whose local ref moved.
#[derive(Debug, Clone, Default)]
pub struct RunsIntegrated {
    pub counts: Counts,
    pub changed: Vec<RunId>,
}

impl Repo {
    /// Brings every local run ref up to date with the given other tips (typically the
    /// remote's, as fetched). Runs missing locally are created all at once (one write of
    /// `packed-refs` when there are many); the others are integrated one by one with
    /// [`Repo::integrate_run`].
    pub fn integrate_runs(&self, others: &[(RunId, ObjectId)]) -> Result<RunsIntegrated, Error> {
        let local = self.run_tips()?;
        let mut out = RunsIntegrated::default();
        let (missing, present): (Vec<_>, Vec<_>) = others
            .iter()
            .cloned()
            .partition(|(id, _)| !local.contains_key(id));
        // A fetched manifest is never trusted: a run taken in as it is gets its manifest
        // projected from its records (a commit on top when the stored one differs), on a few
        // threads (it reads every record).
        // A run whose records cannot be read (not git pair's, or corrupted) is not taken in: a
        // malformed run is skipped, never fatal for the others (SPEC §9).
        let missing = self.map_parallel(&missing, |repo, (id, tip)| {
            Ok(repo.reprojected(id, *tip).ok().map(|tip| (id.clone(), tip)))
        })?;
        let missing: Vec<&(RunId, ObjectId)> = missing.iter().flatten().collect();
        let present: Vec<&(RunId, ObjectId)> = present.iter().collect();
        let mut one_by_one: Vec<&(RunId, ObjectId)> = present;
        if !missing.is_empty() {
            if self.create_run_refs(&missing)? {
                out.counts.created += missing.len();
                out.changed.extend(missing.iter().map(|(id, _)| id.clone()));
            } else {
                // Someone created one of them meanwhile: take the careful path for all.
                one_by_one.extend(missing);
            }
        }
        for (run_id, tip) in one_by_one {
            if local.get(run_id) == Some(tip) {
                out.counts.add(Integration::Unchanged);
                continue;
            }
            let integration = match self.integrate_run(run_id, *tip) {
                Ok(integration) => integration,
                // A fetched tip whose records cannot be read is skipped, never fatal for the
                // other runs; contention and I/O failures still are.
                Err(Error::CorruptRecord { .. } | Error::CorruptRun { .. }) => continue,
                Err(e) => return Err(e),
            };
            if matches!(
                integration,
                Integration::Created | Integration::FastForwarded | Integration::Merged
            ) {
                out.changed.push(run_id.clone());
            }
            out.counts.add(integration);
        }
        Ok(out)
    }

    /// Integrates `other` (another tip of the run) into the local ref: create, fast-forward,
    /// merge or nothing. The ref moves by compare-and-swap under the run's writer lock; when
    /// another writer moved it meanwhile, the decision is made again from the new tip.
    pub fn integrate_run(&self, run_id: &RunId, other: ObjectId) -> Result<Integration, Error> {
        let _writer = self.lock_run(run_id)?;
        retry_lost_races(
            |_| {
                let local = self.run_tip(run_id)?;
                // A tip taken as it is gets a manifest projected from its records.
                let (integration, new) = match local {
                    None => (Integration::Created, self.reprojected(run_id, other)?),
                    Some(tip) if tip == other => return Ok(Integration::Unchanged),
                    Some(tip) if self.run_contains(run_id, tip, other)? => {
                        return Ok(Integration::LocalAhead);
                    }
                    Some(tip) if self.run_contains(run_id, other, tip)? => {
                        let new = self.reprojected(run_id, other)?;
                        if new == tip {
                            return Ok(Integration::Unchanged);
                        }
                        (Integration::FastForwarded, new)
                    }
                    Some(tip) => (Integration::Merged, self.merge_tips(run_id, tip, other)?),
                };
                self.move_ref(run_id, local, new)?;
                self.note_loose_commit(new);
                Ok(integration)
            },
            || self.clear_stale_ref_lock(run_id),
            |attempts| Error::Contention {
                run_id: run_id.to_string(),
                attempts,
            },
        )
    }

    /// Writes the merge commit of two diverged tips of a run: both tips as parents (sorted),
    /// the union tree, a fixed identity and the newer parent's time. The same two tips give
    /// the same commit id on every machine, whichever side is "local".
    pub fn merge_tips(&self, run_id: &RunId, a: ObjectId, b: ObjectId) -> Result<ObjectId, Error> {
        let trees = [self.commit_tree(a)?, self.commit_tree(b)?];
        let merged = self.union_run_trees(run_id, trees)?;
        let mut parents = [a, b];
        parents.sort();
        let mut message = format!(
            "merge: union of concurrent records ({} records",
            merged.manifest.records
        );
        if !merged.manifest.conflicts.is_empty() {
            message.push_str(&format!(
                ", {} recorded concurrently",
                merged.manifest.conflicts.len()
            ));
        }
        message.push_str(&format!(")\n\nPair-Run: {run_id}\n"));
        message.push_str(&merged.manifest.summary_trailer());
        if let Some(approvals) = self.carry_approvals(
            run_id,
            merged.tree,
            super::approval_checks::Carry::Read,
            merged.manifest.spent_usd,
        ) {
            message.push_str(&approvals.trailer());
        }
        self.write_deterministic_commit(&message, merged.tree, &parents)
    }

    /// Writes a commit whose every byte is determined by its inputs: the fixed merge
    /// identity, and the time of the newest parent.
    pub(super) fn write_deterministic_commit(
        &self,
        message: &str,
        tree: ObjectId,
        parents: &[ObjectId],
    ) -> Result<ObjectId, Error> {
        let mut seconds = 0;
        for parent in parents {
            let commit = self
                .repo
                .find_commit(*parent)
                .map_err(Error::git("read a commit"))?;
            let time = commit
                .committer()
                .map_err(Error::git("read a commit's committer"))?
                .time()
                .map_err(Error::git("read a commit's time"))?;
            seconds = seconds.max(time.seconds);
        }
        let time = format!("{seconds} +0000");
        let signature = gix::actor::SignatureRef {
            name: MERGE_NAME.into(),
            email: MERGE_EMAIL.into(),
            time: &time,
        };
        let commit = self
            .repo
            .new_commit_as(signature, signature, message, tree, parents.iter().copied())
            .map_err(Error::git("write a merge commit"))?;
        Ok(commit.id)
    }
}
