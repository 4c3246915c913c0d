//! Dropped runs: the tombstone refs `refs/pair/dropped/<run-id>`, and deleting refs for good.
//!
//! A tombstone points at a small blob saying when and why the run was dropped: a blob keeps
//! nothing else reachable, so once the run's own refs are gone `git gc` can prune every
//! object only the run held. Tombstones are never removed and never change: whichever
//! arrives first stays.

use std::collections::BTreeMap;

use gix::ObjectId;

use super::cas::{Swap, Swapped};
use super::{Error, Repo};
use crate::model::RunId;

/// The namespace of tombstones.
pub const DROPPED_PREFIX: &str = "refs/pair/dropped/";

/// The tombstone ref of a run.
pub fn dropped_ref(run_id: &RunId) -> String {
    format!("{DROPPED_PREFIX}{run_id}")
}

impl Repo {
    /// Every tombstone: dropped run → the blob its ref points at.
    pub fn tombstones(&self) -> Result<BTreeMap<RunId, ObjectId>, Error> {
        Ok(self
            .refs_under(DROPPED_PREFIX)?
            .into_iter()
            .filter_map(|(name, id)| Some((crate::store::ref_run_id(&name, DROPPED_PREFIX)?, id)))
            .collect())
    }

    /// Leaves the tombstone of `run_id` holding `text`, unless it has one already. Returns
    /// the blob the tombstone points at and whether it was created now.
    pub fn write_tombstone(&self, run_id: &RunId, text: &str) -> Result<(ObjectId, bool), Error> {
        if let Some(existing) = self.ref_target(&dropped_ref(run_id))? {
            return Ok((existing, false));
        }
        let blob = self.write_blob(text.as_bytes())?;
        let created = self.create_tombstones(&[(run_id.clone(), blob)])?;
        match self.ref_target(&dropped_ref(run_id))? {
            Some(id) => Ok((id, created > 0)),
            None => Ok((blob, created > 0)),
        }
    }

    /// Creates the tombstones that do not exist yet (typically learnt from a remote, whose
    /// fetch brought their blobs). Returns how many were created.
    pub fn create_tombstones(&self, tombstones: &[(RunId, ObjectId)]) -> Result<usize, Error> {
        let mut created = 0;
        for (run_id, blob) in tombstones {
            let name = dropped_ref(run_id);
            let swap = Swap {
                name: &name,
                expected: None,
                new: Some(*blob),
            };
            // Someone left one first: tombstones never change, the first one stays.
            if self.compare_and_swap(&[swap], "git-pair: dropped", None, || {
                format!("create {name}")
            })? == Swapped::Done
            {
                created += 1;
            }
        }
        Ok(created)
    }

    /// Deletes the refs `names` (with their reflogs, loose or packed), whatever they point
    /// at; names that do not exist are skipped. Returns the names deleted. For refs this tool
    /// owns and removes for good (a dropped run, its staged copies).
    pub fn delete_refs(&self, names: &[String]) -> Result<Vec<String>, Error> {
        let mut present = Vec::new();
        for name in names {
            if let Some(id) = self.ref_target(name)? {
                present.push((name.clone(), id));
            }
        }
        if present.is_empty() {
            return Ok(Vec::new());
        }
        let swaps: Vec<Swap> = present
            .iter()
            .map(|(name, id)| Swap {
                name,
                expected: Some(*id),
                new: None,
            })
            .collect();
        match self.compare_and_swap(&swaps, "", None, || "delete refs".into())? {
            Swapped::Done => Ok(present.into_iter().map(|(name, _)| name).collect()),
            // A ref moved meanwhile (a concurrent append): the caller tries again.
            Swapped::Lost => Err(Error::LostRace {
                run_id: present[0].0.clone(),
            }),
        }
    }
}
