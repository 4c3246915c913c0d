//! The merged tree of two tips of a run: the union of their records (by file name, in stored
//! order), the recursive union of every other file, reviewed snapshots kept whole, and the
//! manifest projected from the union. Where two sides hold different content at one path,
//! both are kept, the smaller id at the path and the other beside it.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use gix::ObjectId;
use gix::bstr::BString;
use gix::object::tree::EntryKind;
use gix::objs::tree::{Entry, EntryMode};

use super::union::{Union, union};
use crate::model::{Body, Manifest, Record, RunId};
use crate::store::layout::{MANIFEST, RECORDS, manifest_json, record_bucket, record_seq};
use crate::store::{Error, Repo};

/// Where the losing copy of a record file that two sides hold with different bytes goes
/// (records are immutable, so this only happens to damaged or tampered state). Outside
/// `records/`, so the copy is kept but never projected twice.
const RECORD_CONFLICTS: &str = "conflicts/records";

impl Repo {
    /// The union of two run trees: every record of either side under `records/`, every
    /// other file of either side, and `manifest.json` projected from the union in stored
    /// order. Where the two sides hold different content at one path, the entry with the
    /// smaller object id stays and the other moves to `<path>.conflict-<id12>` (whole
    /// subtrees are unioned recursively, except reviewed snapshots, which are kept whole).
    pub fn union_run_trees(
        &self,
        run_id: &RunId,
        trees: [ObjectId; 2],
    ) -> Result<MergedTree, Error> {
        // Records: by file name; a name with two different blobs keeps the smaller one.
        let mut claims = Vec::new();
        for tree in trees {
            claims.extend(self.record_entries(tree)?);
        }
        let Union { kept, displaced } = union(claims);
        let displaced: Vec<(String, ObjectId)> = displaced
            .into_iter()
            .map(|(name, id)| (format!("{name}.conflict-{}", short(id)), id))
            .collect();
        let mut records = Vec::with_capacity(kept.len());
        for (name, id) in &kept {
            records.push(self.read_record(run_id, name, *id)?);
        }
        let mut manifest = Manifest::project(&records);
        let atoms = snapshot_ids(&records);

        // Everything else: a recursive union of the two roots.
        let root = self.union_trees(&trees, &[MANIFEST, RECORDS], &atoms)?;
        // Always in buckets, whichever layout each side had.
        let mut buckets: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
        for (name, id) in &kept {
            let bucket = record_seq(name).map_or_else(|| record_bucket(0), record_bucket);
            buckets.entry(bucket).or_default().push(Entry {
                mode: EntryKind::Blob.into(),
                filename: name.as_str().into(),
                oid: *id,
            });
        }
        let mut top = Vec::with_capacity(buckets.len());
        for (bucket, entries) in buckets {
            top.push(Entry {
                mode: EntryKind::Tree.into(),
                filename: bucket.as_str().into(),
                oid: self.write_tree(entries)?,
            });
        }
        let records_tree = self.write_tree(top)?;
        manifest.records_tree = Some(records_tree.to_string());
        let mut editor = self
            .repo
            .edit_tree(root)
            .map_err(Error::git("edit a merged run tree"))?;
        editor
            .upsert(RECORDS, EntryKind::Tree, records_tree)
            .map_err(Error::git("add records to a merged run tree"))?;
        for (name, id) in &displaced {
            editor
                .upsert(format!("{RECORD_CONFLICTS}/{name}"), EntryKind::Blob, *id)
                .map_err(Error::git("keep a conflicting record copy"))?;
        }
        let manifest_blob = self.write_blob(&manifest_json(&manifest))?;
        editor
            .upsert(MANIFEST, EntryKind::Blob, manifest_blob)
            .map_err(Error::git("add manifest.json to a merged run tree"))?;
        let tree = editor
            .write()
            .map_err(Error::git("write a merged run tree"))?
            .detach();
        Ok(MergedTree { tree, manifest })
    }

    /// The union of several trees: per name, the set of distinct entries; one → kept; all
    /// unionable subtrees → their union; otherwise the smallest stays and every other goes
    /// to `<name>.conflict-<id12>` (itself resolved the same way, so the result depends only
    /// on the set of entries). Names in `skip` are left out (the caller writes them).
    fn union_trees(
        &self,
        trees: &[ObjectId],
        skip: &[&str],
        atoms: &HashSet<ObjectId>,
    ) -> Result<ObjectId, Error> {
        let mut claims: BTreeMap<BString, BTreeSet<(ObjectId, EntryMode)>> = BTreeMap::new();
        for tree in trees {
            let tree = self
                .repo
                .find_tree(*tree)
                .map_err(Error::git("read a run tree"))?;
            let decoded = tree.decode().map_err(Error::git("decode a run tree"))?;
            for entry in &decoded.entries {
                if skip.iter().any(|s| entry.filename == s.as_bytes()) {
                    continue;
                }
                claims
                    .entry(entry.filename.to_owned())
                    .or_default()
                    .insert((entry.oid.to_owned(), entry.mode));
            }
        }
        let mut entries = Vec::with_capacity(claims.len());
        // Conflict copies sort after the name they come from, so popping in order sees them.
        while let Some((name, set)) = claims.pop_first() {
            if set.len() == 1 {
                let (oid, mode) = set.into_iter().next().expect("one element");
                entries.push(Entry {
                    mode,
                    filename: name,
                    oid,
                });
                continue;
            }
            let unionable = set
                .iter()
                .all(|(oid, mode)| mode.is_tree() && !atoms.contains(oid));
            if unionable {
                let ids: Vec<ObjectId> = set.iter().map(|(oid, _)| *oid).collect();
                entries.push(Entry {
                    mode: EntryKind::Tree.into(),
                    filename: name,
                    oid: self.union_trees(&ids, &[], atoms)?,
                });
                continue;
            }
            let mut set = set.into_iter();
            let (oid, mode) = set.next().expect("at least two elements");
            for (other, other_mode) in set {
                let mut alt = name.clone();
                alt.extend_from_slice(format!(".conflict-{}", short(other)).as_bytes());
                claims.entry(alt).or_default().insert((other, other_mode));
            }
            entries.push(Entry {
                mode,
                filename: name,
                oid,
            });
        }
        self.write_tree(entries)
    }

    fn write_tree(&self, mut entries: Vec<Entry>) -> Result<ObjectId, Error> {
        entries.sort();
        self.repo
            .write_object(&gix::objs::Tree { entries })
            .map(|id| id.detach())
            .map_err(Error::git("write a tree"))
    }
}

/// A merged run tree and the projection stored in it.
#[derive(Debug, Clone)]
pub struct MergedTree {
    pub tree: ObjectId,
    pub manifest: Manifest,
}

/// Snapshots named by records (reviewed, or a checkpoint's): such a subtree is the identity of
/// what was reviewed or handed over, so two different ones at one path are both kept whole,
/// never mixed file by file.
fn snapshot_ids(records: &[Record]) -> HashSet<ObjectId> {
    records
        .iter()
        .filter_map(|record| match &record.body {
            Body::ReviewDispatch(dispatch) => Some(dispatch.snapshot),
            Body::Review(review) => review.snapshot,
            Body::Checkpoint(checkpoint) => Some(checkpoint.repo.status),
            _ => None,
        })
        .map(ObjectId::from)
        .collect()
}

fn short(id: ObjectId) -> String {
    let mut hex = id.to_string();
    hex.truncate(12);
    hex
}
