//! Record-union merge of two tips of one run, and the bulk ref reads and writes `sync` needs.
//!
//! Owns how a local run ref takes in a tip fetched from elsewhere: identical → nothing,
//! local behind → fast-forward, remote behind → nothing, absent → create, diverged → a merge
//! commit whose tree holds the union of both sides' records and files, with `manifest.json`
//! recomputed by [`Manifest::project`]. The merge is a function of the *set* of entries on
//! both sides, so it is deterministic, commutative and idempotent, and the merge commit
//! itself is deterministic too (sorted parents, fixed identity, time of the newer parent):
//! two machines merging the same pair of tips write the same commit. Never touches the
//! network; never rewrites a record.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use gix::object::tree::EntryKind;
use gix::objs::tree::{Entry, EntryMode};
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use super::{Error, MANIFEST, MAX_ATTEMPTS, MAX_WAIT, RECORDS, Repo, backoff, record_order};
use crate::model::{Body, Manifest, Record, RunId};

/// Where the losing copy of a record file that two sides hold with different bytes goes
/// (records are immutable, so this only happens to damaged or tampered state). Outside
/// `records/`, so the copy is kept but never projected twice.
const RECORD_CONFLICTS: &str = "conflicts/records";
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

    /// Adds another tally to this one.
    pub fn absorb(&mut self, other: Counts) {
        self.created += other.created;
        self.fast_forwarded += other.fast_forwarded;
        self.merged += other.merged;
        self.unchanged += other.unchanged;
        self.local_ahead += other.local_ahead;
    }

    /// Whether any local ref moved.
    pub fn changed(&self) -> bool {
        self.created + self.fast_forwarded + self.merged > 0
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
    /// remote's, as fetched). Runs missing locally are created in one ref transaction; the
    /// others are integrated one by one with [`Repo::integrate_run`].
    pub fn integrate_runs(&self, others: &[(RunId, ObjectId)]) -> Result<RunsIntegrated, Error> {
        let local = self.run_tips()?;
        let mut out = RunsIntegrated::default();
        let (missing, present): (Vec<_>, Vec<_>) =
            others.iter().partition(|(id, _)| !local.contains_key(id));
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
            let integration = self.integrate_run(run_id, *tip)?;
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
        let started = std::time::Instant::now();
        let mut retries = 0;
        loop {
            let local = self.run_tip(run_id)?;
            let (integration, new) = match local {
                None => (Integration::Created, other),
                Some(tip) if tip == other => return Ok(Integration::Unchanged),
                Some(tip) if self.run_contains(run_id, tip, other)? => {
                    return Ok(Integration::LocalAhead);
                }
                Some(tip) if self.run_contains(run_id, other, tip)? => {
                    (Integration::FastForwarded, other)
                }
                Some(tip) => (Integration::Merged, self.merge_tips(run_id, tip, other)?),
            };
            match self.move_ref(run_id, local, new) {
                Ok(()) => return Ok(integration),
                Err(Error::LostRace { .. })
                    if retries + 1 < MAX_ATTEMPTS && started.elapsed() < MAX_WAIT =>
                {
                    retries += 1;
                    self.clear_stale_ref_lock(run_id);
                    backoff(retries);
                }
                Err(Error::LostRace { .. }) => {
                    return Err(Error::Contention {
                        run_id: run_id.to_string(),
                        attempts: retries + 1,
                    });
                }
                Err(other) => return Err(other),
            }
        }
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
        self.write_deterministic_commit(&message, merged.tree, &parents)
    }

    /// The union of two run trees: every record of either side under `records/`, every
    /// other file of either side, and `manifest.json` projected from the union in stored
    /// order. Where the two sides hold different content at one path, the entry with the
    /// smaller object id stays and the other moves to `<path>.conflict-<id12>` (whole
    /// subtrees are unioned recursively, except reviewed snapshots, which are kept whole).
    pub fn union_run_trees(&self, run_id: &RunId, trees: [ObjectId; 2]) -> Result<MergedTree, Error> {
        // Records: by file name; a name with two different blobs keeps the smaller one.
        let mut claims: BTreeMap<String, BTreeSet<ObjectId>> = BTreeMap::new();
        for tree in trees {
            for (name, id) in self.tree_entries(tree, RECORDS)? {
                claims.entry(name).or_default().insert(id);
            }
        }
        let mut kept: Vec<(String, ObjectId)> = Vec::with_capacity(claims.len());
        let mut displaced: Vec<(String, ObjectId)> = Vec::new();
        for (name, ids) in claims {
            let mut ids = ids.into_iter();
            let first = ids.next().expect("a claim holds at least one id");
            for id in ids {
                displaced.push((format!("{name}.conflict-{}", short(id)), id));
            }
            kept.push((name, first));
        }
        kept.sort_by(|a, b| record_order(&a.0, &b.0));
        let mut records = Vec::with_capacity(kept.len());
        for (name, id) in &kept {
            let bytes = self.blob(*id)?;
            records.push(
                Record::from_json(&bytes).map_err(|source| Error::CorruptRecord {
                    run_id: run_id.to_string(),
                    path: format!("{RECORDS}/{name}"),
                    source,
                })?,
            );
        }
        let manifest = Manifest::project(&records);
        let atoms = snapshot_ids(&records);

        // Everything else: a recursive union of the two roots.
        let root = self.union_trees(&trees, &[MANIFEST, RECORDS], &atoms)?;
        let records_tree = self.write_tree(
            kept.iter()
                .map(|(name, id)| Entry {
                    mode: EntryKind::Blob.into(),
                    filename: name.as_str().into(),
                    oid: *id,
                })
                .collect(),
        )?;
        let mut editor = self
            .repo
            .edit_tree(root)
            .map_err(Error::git("edit a merged run tree"))?;
        editor
            .upsert(RECORDS, EntryKind::Tree, records_tree)
            .map_err(Error::git("add records to a merged run tree"))?;
        for (name, id) in &displaced {
            editor
                .upsert(
                    format!("{RECORD_CONFLICTS}/{name}"),
                    EntryKind::Blob,
                    *id,
                )
                .map_err(Error::git("keep a conflicting record copy"))?;
        }
        let manifest_blob = self.write_blob(&super::manifest_json(&manifest))?;
        editor
            .upsert(MANIFEST, EntryKind::Blob, manifest_blob)
            .map_err(Error::git("add manifest.json to a merged run tree"))?;
        let tree = editor
            .write()
            .map_err(Error::git("write a merged run tree"))?
            .detach();
        Ok(MergedTree { tree, manifest })
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors within the run's chain.
    /// The walk stops at commits that are not the run's (its base commit and the project
    /// history behind it), so it costs the length of the run, not of the project.
    pub fn run_contains(
        &self,
        run_id: &RunId,
        descendant: ObjectId,
        ancestor: ObjectId,
    ) -> Result<bool, Error> {
        let trailer = format!("Pair-Run: {run_id}");
        let mut seen = HashSet::new();
        let mut queue = vec![descendant];
        while let Some(id) = queue.pop() {
            if id == ancestor {
                return Ok(true);
            }
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
            if !message.lines().any(|line| line.trim() == trailer.as_bytes()) {
                continue;
            }
            queue.extend(commit.parent_ids().map(|p| p.detach()));
        }
        Ok(false)
    }

    /// Every run ref with its tip, read in one pass.
    pub fn run_tips(&self) -> Result<BTreeMap<RunId, ObjectId>, Error> {
        Ok(self
            .refs_under(super::RUNS_PREFIX)?
            .into_iter()
            .filter_map(|(name, id)| {
                let run_id = RunId::parse(name.strip_prefix(super::RUNS_PREFIX)?).ok()?;
                Some((run_id, id))
            })
            .collect())
    }

    /// Every direct ref whose full name starts with `prefix`, with the object it points to.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>, Error> {
        let platform = self
            .repo
            .references()
            .map_err(Error::git("list refs"))?;
        let iter = platform
            .prefixed(prefix)
            .map_err(Error::git("list refs"))?;
        let mut out = Vec::new();
        for reference in iter {
            let reference = reference.map_err(|e| Error::Git {
                action: "read a ref".into(),
                source: gix::Error::from_error(e),
            })?;
            if let Some(id) = reference.target().try_id() {
                out.push((reference.name().as_bstr().to_string(), id.to_owned()));
            }
        }
        Ok(out)
    }

    /// Sets (or with `None` deletes) refs this tool owns outright, such as the staging copies
    /// of a remote's refs, in one transaction and without compare-and-swap: nothing but the
    /// transport writes them.
    pub fn overwrite_refs(&self, refs: &[(String, Option<ObjectId>)]) -> Result<(), Error> {
        let edits = refs
            .iter()
            .map(|(name, id)| {
                let name = name
                    .as_str()
                    .try_into()
                    .map_err(|e: gix::validate::reference::name::Error| Error::Git {
                        action: format!("use ref name {}", name.escape_debug()),
                        source: gix::Error::from_error(e),
                    })?;
                let change = match id {
                    Some(id) => Change::Update {
                        log: no_reflog(),
                        expected: PreviousValue::Any,
                        new: gix::refs::Target::Object(*id),
                    },
                    None => Change::Delete {
                        expected: PreviousValue::Any,
                        log: RefLog::AndReference,
                    },
                };
                Ok(RefEdit {
                    change,
                    name,
                    deref: false,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        if edits.is_empty() {
            return Ok(());
        }
        self.repo
            .edit_references_as(edits, None)
            .map(|_| ())
            .map_err(Error::git("update staging refs"))
    }

    /// Creates many run refs in one transaction, each on condition it does not exist yet.
    /// Returns `false`, changing nothing, when one of them exists meanwhile.
    fn create_run_refs(&self, runs: &[&(RunId, ObjectId)]) -> Result<bool, Error> {
        let edits: Vec<RefEdit> = runs
            .iter()
            .map(|(run_id, tip)| RefEdit {
                change: Change::Update {
                    log: no_reflog(),
                    expected: PreviousValue::MustNotExist,
                    new: gix::refs::Target::Object(*tip),
                },
                name: super::run_ref(run_id)
                    .try_into()
                    .expect("validated run ids make valid ref names"),
                deref: false,
            })
            .collect();
        match self.repo.edit_references_as(edits, None) {
            Ok(_) => Ok(true),
            Err(err) if err.is_conflict() || super::is_lock_held(&err) => Ok(false),
            Err(source) => Err(Error::Git {
                action: "create run refs".into(),
                source,
            }),
        }
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

/// A merged run tree and the projection stored in it.
#[derive(Debug, Clone)]
pub struct MergedTree {
    pub tree: ObjectId,
    pub manifest: Manifest,
}

/// Reviewed snapshots named by records: such a subtree is the identity of what was reviewed,
/// so two different ones at one path are both kept whole, never mixed file by file.
fn snapshot_ids(records: &[Record]) -> HashSet<ObjectId> {
    records
        .iter()
        .filter_map(|record| match &record.body {
            Body::ReviewDispatch(dispatch) => Some(dispatch.snapshot.as_str()),
            Body::Review(review) => Some(review.snapshot.as_str()),
            _ => None,
        })
        .filter_map(|hex| ObjectId::from_hex(hex.as_bytes()).ok())
        .collect()
}

fn short(id: ObjectId) -> String {
    let mut hex = id.to_string();
    hex.truncate(12);
    hex
}

fn no_reflog() -> LogChange {
    LogChange {
        mode: RefLog::AndReference,
        force_create_reflog: false,
        message: "git-pair: sync".into(),
    }
}
