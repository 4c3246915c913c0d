//! The records of a run's tree, in either layout: buckets (`records/<bucket>/<name>`, every
//! run written since appends became O(1)) or flat (`records/<name>`, older runs). Lists them
//! in stored order, finds one by name, and reads them newest first a bucket at a time, so a
//! command that needs the last few records reads the last bucket, not the whole run.

use gix::ObjectId;

use super::layout::{RECORDS, is_record_bucket, record_order, record_path};
use super::{Error, Repo, RunState};
use crate::model::{Record, RunId};

/// The top of a run's `records/` tree: its buckets (by number) and any record files kept
/// flat by a run written before buckets.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordsTop {
    /// (bucket number, tree id), ascending.
    pub buckets: Vec<(u64, ObjectId)>,
    /// (file name, blob id) of records directly under `records/`, in stored order.
    pub flat: Vec<(String, ObjectId)>,
}

impl Repo {
    /// The id of the `records/` subtree of the run tree `tree`, when there is one.
    pub(crate) fn records_tree_id(&self, tree: ObjectId) -> Result<Option<ObjectId>, Error> {
        Ok(self.manifest_and_records_ids(tree)?.1)
    }

    /// Reads the top of the records tree `records` (one tree object).
    pub(crate) fn records_top(&self, records: Option<ObjectId>) -> Result<RecordsTop, Error> {
        let Some(records) = records else {
            return Ok(RecordsTop::default());
        };
        let mut top = RecordsTop::default();
        for (name, id, is_tree) in self.tree_listing(records)? {
            if is_tree && is_record_bucket(&name) {
                if let Ok(n) = name.parse() {
                    top.buckets.push((n, id));
                }
            } else if !is_tree {
                top.flat.push((name, id));
            }
        }
        top.buckets.sort_unstable_by_key(|(n, _)| *n);
        top.flat.sort_by(|a, b| record_order(&a.0, &b.0));
        Ok(top)
    }

    /// The (name, id, is a tree) entries of tree `tree`.
    fn tree_listing(&self, tree: ObjectId) -> Result<Vec<(String, ObjectId, bool)>, Error> {
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a records tree"))?;
        let decoded = tree.decode().map_err(Error::git("decode a records tree"))?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| (e.filename.to_string(), e.oid.to_owned(), e.mode.is_tree()))
            .collect())
    }

    /// The record files of bucket tree `bucket`, in stored order.
    fn bucket_entries(&self, bucket: ObjectId) -> Result<Vec<(String, ObjectId)>, Error> {
        let mut entries: Vec<(String, ObjectId)> = self
            .tree_listing(bucket)?
            .into_iter()
            .filter(|(_, _, is_tree)| !is_tree)
            .map(|(name, id, _)| (name, id))
            .collect();
        entries.sort_by(|a, b| record_order(&a.0, &b.0));
        Ok(entries)
    }

    /// Every record file (name, blob id) of the run tree `tree`, in stored order (by seq,
    /// then name), whichever layout holds them.
    pub(crate) fn record_entries(&self, tree: ObjectId) -> Result<Vec<(String, ObjectId)>, Error> {
        let top = self.records_top(self.records_tree_id(tree)?)?;
        let mut out = top.flat;
        for (_, bucket) in top.buckets {
            out.extend(self.bucket_entries(bucket)?);
        }
        out.sort_by(|a, b| record_order(&a.0, &b.0));
        Ok(out)
    }

    /// The blob id of the record file `name` in the run tree `tree`: in its bucket, or
    /// directly under `records/` in a run written before buckets.
    pub(crate) fn record_blob_id(
        &self,
        tree: ObjectId,
        name: &str,
    ) -> Result<Option<ObjectId>, Error> {
        if let Some(path) = record_path(name)
            && let Some(id) = self.blob_id_at(tree, &path)?
        {
            return Ok(Some(id));
        }
        self.blob_id_at(tree, &format!("{RECORDS}/{name}"))
    }

    /// The run's records newest first, read a bucket at a time as the iteration goes: the
    /// last few records of a long run cost one bucket, not the run.
    pub fn records_newest_first<'r>(&'r self, state: &RunState) -> Result<NewestFirst<'r>, Error> {
        self.records_newest_first_in(&state.run_id, state.tree)
    }

    /// The records of the run tree `tree` (of run `run_id`) newest first (see
    /// [`Repo::records_newest_first`]).
    pub(crate) fn records_newest_first_in<'r>(
        &'r self,
        run_id: &RunId,
        tree: ObjectId,
    ) -> Result<NewestFirst<'r>, Error> {
        let top = self.records_top(self.records_tree_id(tree)?)?;
        let mut pending = Vec::new();
        let mut buckets = top.buckets;
        if !top.flat.is_empty() {
            // A run written before buckets (or half moved): one list, in stored order.
            let mut all = top.flat;
            for (_, bucket) in buckets.drain(..) {
                all.extend(self.bucket_entries(bucket)?);
            }
            all.sort_by(|a, b| record_order(&a.0, &b.0));
            pending = all;
        }
        Ok(NewestFirst {
            repo: self,
            run_id: run_id.clone(),
            buckets,
            pending,
        })
    }
}

/// Records of a run, newest first ([`Repo::records_newest_first`]).
pub struct NewestFirst<'r> {
    repo: &'r Repo,
    run_id: RunId,
    /// Buckets not listed yet, ascending (the next one is popped from the end).
    buckets: Vec<(u64, ObjectId)>,
    /// Listed record files not read yet, in stored order (the next one is popped).
    pending: Vec<(String, ObjectId)>,
}

impl NewestFirst<'_> {
    /// The next record file (name, blob id), newest first, without reading it.
    pub(crate) fn next_entry(&mut self) -> Result<Option<(String, ObjectId)>, Error> {
        loop {
            if let Some(entry) = self.pending.pop() {
                return Ok(Some(entry));
            }
            let Some((_, bucket)) = self.buckets.pop() else {
                return Ok(None);
            };
            self.pending = self.repo.bucket_entries(bucket)?;
        }
    }
}

impl Iterator for NewestFirst<'_> {
    type Item = Result<Record, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_entry() {
            Ok(Some((name, id))) => Some(self.repo.read_record(&self.run_id, &name, id)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}
