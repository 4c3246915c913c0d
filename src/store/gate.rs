//! What the team gate reads from a run, and no more: its `review` and `finish` records,
//! without the other records or the manifest, so indexing a thousand runs costs a few
//! object reads each.

use gix::ObjectId;

use super::layout::{RECORDS, record_kind, record_order};
use super::{Error, Repo};
use crate::model::{Record, RunId};

impl Repo {
    /// The records of the run at commit `tip` whose kind is one of `kinds`, in stored order;
    /// the other records are not read.
    pub fn records_of_kinds(
        &self,
        run_id: &RunId,
        tip: ObjectId,
        kinds: &[&str],
    ) -> Result<Vec<Record>, Error> {
        let tree = self.commit_tree(tip).map_err(|e| e.in_run(run_id))?;
        let mut entries: Vec<(String, ObjectId)> = self
            .tree_entries(tree, RECORDS)?
            .into_iter()
            .filter(|(name, _)| record_kind(name).is_some_and(|k| kinds.contains(&k)))
            .collect();
        entries.sort_by(|a, b| record_order(&a.0, &b.0));
        entries
            .into_iter()
            .map(|(name, oid)| {
                let bytes = self.blob(oid)?;
                Record::from_json(&bytes).map_err(|source| Error::CorruptRecord {
                    run_id: run_id.to_string(),
                    path: format!("{RECORDS}/{name}"),
                    source,
                })
            })
            .collect()
    }
}
