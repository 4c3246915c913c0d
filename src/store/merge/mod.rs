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

mod union;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use gix::object::tree::EntryKind;
use gix::objs::tree::{Entry, EntryMode};
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use super::cas::{is_lock_held, retry_lost_races};
use super::layout::{MANIFEST, RECORDS, RUNS_PREFIX, manifest_json, run_ref};
use super::{Error, Repo};
use crate::model::{Body, Manifest, Record, RunId};
use union::{Union, union};

/// Where the losing copy of a record file that two sides hold with different bytes goes
/// (records are immutable, so this only happens to damaged or tampered state). Outside
/// `records/`, so the copy is kept but never projected twice.
const RECORD_CONFLICTS: &str = "conflicts/records";
/// From how many new refs on, creating them writes `packed-refs` once instead of loose files.
const PACK_THRESHOLD: usize = 16;
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
        retry_lost_races(
            |_| {
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
                self.move_ref(run_id, local, new)?;
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
        self.write_deterministic_commit(&message, merged.tree, &parents)
    }

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
            claims.extend(self.tree_entries(tree, RECORDS)?);
        }
        let Union { kept, displaced } = union(claims);
        let displaced: Vec<(String, ObjectId)> = displaced
            .into_iter()
            .map(|(name, id)| (format!("{name}.conflict-{}", short(id)), id))
            .collect();
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

    /// Every run ref with its tip, read in one pass.
    pub fn run_tips(&self) -> Result<BTreeMap<RunId, ObjectId>, Error> {
        Ok(self
            .refs_under(RUNS_PREFIX)?
            .into_iter()
            .filter_map(|(name, id)| {
                let run_id = RunId::parse(name.strip_prefix(RUNS_PREFIX)?).ok()?;
                Some((run_id, id))
            })
            .collect())
    }

    /// The newest `n` runs with their tips, oldest first, without listing every run: run ids
    /// sort by creation, so they are the loose run refs (few: `start` packs them) and the last
    /// `n` entries of the run range of the sorted `packed-refs`, read backwards from its end
    /// (a loose ref shadows a packed one, as everywhere in git). The same answer as the tail
    /// of [`Repo::run_tips`], at a cost that does not grow with the number of runs.
    pub fn newest_run_tips(&self, n: usize) -> Result<Vec<(RunId, ObjectId)>, Error> {
        let mut tips: BTreeMap<RunId, ObjectId> = BTreeMap::new();
        if !self.uses_files_ref_backend() {
            tips = self.run_tips()?;
        } else {
            // Loose refs first, then packed-refs: a ref packed meanwhile (written to
            // packed-refs, then its loose file deleted) is seen in one or the other.
            let mut loose = Vec::new();
            collect_loose(
                &self.common_dir().join(RUNS_PREFIX),
                RUNS_PREFIX,
                &mut loose,
            );
            let loose: Vec<(RunId, ObjectId)> = loose
                .into_iter()
                .filter_map(|(name, path)| {
                    let run_id = RunId::parse(name.strip_prefix(RUNS_PREFIX)?).ok()?;
                    Some((run_id, read_direct_ref(&path)?))
                })
                .collect();
            let packed = self
                .repo
                .refs
                .cached_packed_buffer()
                .map_err(Error::git("read packed-refs"))?;
            if let Some(packed) = packed {
                let newest_packed = packed_backwards(packed.as_ref().as_ref(), RUNS_PREFIX)
                    .filter_map(|(name, id)| {
                        Some((RunId::parse(name.strip_prefix(RUNS_PREFIX)?).ok()?, id))
                    })
                    .take(n);
                tips.extend(newest_packed);
            }
            // A loose ref shadows its packed value.
            tips.extend(loose);
        }
        let skip = tips.len().saturating_sub(n);
        Ok(tips.into_iter().skip(skip).collect())
    }

    /// The object the ref `name` points to, if it exists and is direct.
    pub fn ref_target(&self, name: &str) -> Result<Option<ObjectId>, Error> {
        let reference = self
            .repo
            .try_find_reference(name)
            .map_err(Error::git("read a ref"))?;
        Ok(reference.and_then(|r| r.target().try_id().map(ToOwned::to_owned)))
    }

    /// Every direct ref whose full name starts with `prefix`, with the object it points to.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>, Error> {
        let platform = self.repo.references().map_err(Error::git("list refs"))?;
        let iter = platform.prefixed(prefix).map_err(Error::git("list refs"))?;
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

    /// Sets refs this tool owns outright, such as the staging copies of a remote's refs,
    /// without compare-and-swap: they are a cache of what the remote holds, and a wrong
    /// value only costs a rejected lease and a fetch. Many go into `packed-refs` at once.
    pub fn overwrite_refs(&self, refs: &[(String, ObjectId)]) -> Result<(), Error> {
        if refs.is_empty() {
            return Ok(());
        }
        if refs.len() >= PACK_THRESHOLD
            && self.uses_files_ref_backend()
            && refs.iter().all(|(_, id)| self.is_commit(*id))
            && let Some(lock) = self.lock_packed_refs()?
        {
            let packed_path = self.common_dir().join("packed-refs");
            let existing = read_packed_refs(&packed_path)?;
            let content = packed_refs_with(&existing, refs, OnExisting::Replace)
                .expect("replacing never refuses");
            lock.commit(&content, &packed_path)?;
            // A loose file would shadow the value just packed.
            for (name, _) in refs {
                let _ = std::fs::remove_file(self.common_dir().join(name));
            }
            return Ok(());
        }
        let edits = refs
            .iter()
            .map(|(name, id)| {
                let name = super::cas::full_ref_name(name)?;
                Ok(RefEdit {
                    change: Change::Update {
                        log: no_reflog(),
                        expected: PreviousValue::Any,
                        new: gix::refs::Target::Object(*id),
                    },
                    name,
                    deref: false,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        self.repo
            .edit_references_as(edits, None)
            .map(|_| ())
            .map_err(Error::git("update staging refs"))
    }

    fn is_commit(&self, id: ObjectId) -> bool {
        self.repo
            .find_header(id)
            .is_ok_and(|h| h.kind() == gix::object::Kind::Commit)
    }

    /// Creates many run refs at once, each on condition it does not exist yet. Returns
    /// `false`, changing nothing, when one of them exists meanwhile.
    ///
    /// Many new refs go straight into `packed-refs` (one lock, one rename) instead of one
    /// loose file each: on a slow file system, creating a thousand lock files costs as much
    /// as the whole fetch. `git pack-refs` writes the same file the same way.
    fn create_run_refs(&self, runs: &[&(RunId, ObjectId)]) -> Result<bool, Error> {
        if runs.len() >= PACK_THRESHOLD && self.uses_files_ref_backend() {
            match self.create_packed_run_refs(runs)? {
                Packed::Written => return Ok(true),
                Packed::Exists => return Ok(false),
                // Someone else is rewriting packed-refs: take the ordinary path.
                Packed::Busy => {}
            }
        }
        let edits: Vec<RefEdit> = runs
            .iter()
            .map(|(run_id, tip)| RefEdit {
                change: Change::Update {
                    log: no_reflog(),
                    expected: PreviousValue::MustNotExist,
                    new: gix::refs::Target::Object(*tip),
                },
                name: run_ref(run_id)
                    .try_into()
                    .expect("validated run ids make valid ref names"),
                deref: false,
            })
            .collect();
        match self.repo.edit_references_as(edits, None) {
            Ok(_) => Ok(true),
            Err(err) if err.is_conflict() || is_lock_held(&err) => Ok(false),
            Err(source) => Err(Error::Git {
                action: "create run refs".into(),
                source,
            }),
        }
    }

    fn uses_files_ref_backend(&self) -> bool {
        self.config_values("extensions.refStorage")
            .last()
            .is_none_or(|backend| backend.eq_ignore_ascii_case("files"))
    }

    /// Moves the loose refs under `prefix` (a namespace this tool owns, such as a remote's
    /// staging copy) into `packed-refs` when there are at least `min_loose` of them, so
    /// that reading the namespace costs one file instead of one per ref. Only refs to
    /// commits are moved. A best-effort optimisation: when `packed-refs` is busy, nothing
    /// happens. Returns how many refs were packed.
    pub fn pack_loose_refs(&self, prefix: &str, min_loose: usize) -> Result<usize, Error> {
        self.pack_loose_refs_guarded(prefix, min_loose, &|_| None)
    }

    /// Packs the loose run refs when there are at least `min_loose` of them (a repository
    /// where thousands of runs were started reads one `packed-refs` instead of thousands of
    /// files). Each loose file is removed only under that run's writer lock, so a concurrent
    /// writer of ours never loses an update to the packing.
    pub fn pack_run_refs(&self, min_loose: usize) -> Result<usize, Error> {
        self.pack_loose_refs_guarded(RUNS_PREFIX, min_loose, &|name| {
            let run_id = RunId::parse(name.strip_prefix(RUNS_PREFIX)?).ok()?;
            self.lock_run(&run_id).ok().flatten()
        })
    }

    fn pack_loose_refs_guarded(
        &self,
        prefix: &str,
        min_loose: usize,
        guard: &dyn Fn(&str) -> Option<std::fs::File>,
    ) -> Result<usize, Error> {
        if !self.uses_files_ref_backend() {
            return Ok(0);
        }
        let mut loose = Vec::new();
        collect_loose(&self.common_dir().join(prefix), prefix, &mut loose);
        if loose.len() < min_loose {
            return Ok(0);
        }
        let Some(lock) = self.lock_packed_refs()? else {
            return Ok(0);
        };
        let mut packed: Vec<(String, ObjectId)> = Vec::with_capacity(loose.len());
        for (name, path) in &loose {
            let Some(id) = read_direct_ref(path) else {
                continue;
            };
            if self.is_commit(id) {
                packed.push((name.clone(), id));
            }
        }
        let packed_path = self.common_dir().join("packed-refs");
        let existing = read_packed_refs(&packed_path)?;
        let content = packed_refs_with(&existing, &packed, OnExisting::Replace)
            .expect("replacing never refuses");
        lock.commit(&content, &packed_path)?;
        // The packed copy now holds each value; a loose file changed meanwhile (a fetch
        // racing us) is kept, since it shadows the packed one.
        for (name, id) in &packed {
            let path = self.common_dir().join(name);
            let _held = guard(name);
            if read_direct_ref(&path) == Some(*id) {
                let _ = std::fs::remove_file(&path);
            }
        }
        remove_empty_dirs(&self.common_dir().join(prefix));
        // The emptied directory itself too, as git does: a directory that once held thousands
        // of entries keeps its size, and every later listing reads it whole. A writer that
        // needs it again creates it (gix and git both retry when it vanishes under them).
        let _ = std::fs::remove_dir(self.common_dir().join(prefix));
        Ok(packed.len())
    }

    /// Takes `packed-refs.lock`; `None` when another process holds it.
    fn lock_packed_refs(&self) -> Result<Option<LockFile>, Error> {
        let lock_path = self.common_dir().join("packed-refs.lock");
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock_path)
        {
            Ok(file) => Ok(Some(LockFile {
                file: Some(file),
                path: lock_path,
            })),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
            Err(e) => Err(Error::io("lock", &lock_path)(e)),
        }
    }

    /// Adds `runs` to `packed-refs` under its lock, after checking that none of them exists
    /// loose or packed. A loose ref created concurrently would shadow the packed one; nothing
    /// is lost then, because the staged copy that was to be created is merged on the next pull.
    fn create_packed_run_refs(&self, runs: &[&(RunId, ObjectId)]) -> Result<Packed, Error> {
        let packed_path = self.common_dir().join("packed-refs");
        let Some(lock) = self.lock_packed_refs()? else {
            return Ok(Packed::Busy);
        };
        let existing = read_packed_refs(&packed_path)?;
        let new: Vec<(String, ObjectId)> = runs
            .iter()
            .map(|(run_id, tip)| (run_ref(run_id), *tip))
            .collect();
        for (name, _) in &new {
            if self.common_dir().join(name).symlink_metadata().is_ok() {
                return Ok(Packed::Exists);
            }
        }
        let Some(content) = packed_refs_with(&existing, &new, OnExisting::Refuse) else {
            return Ok(Packed::Exists);
        };
        lock.commit(&content, &packed_path)?;
        Ok(Packed::Written)
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

enum Packed {
    Written,
    Exists,
    Busy,
}

/// `packed-refs.lock`, removed on drop unless renamed into place.
struct LockFile {
    file: Option<std::fs::File>,
    path: std::path::PathBuf,
}

impl LockFile {
    fn commit(mut self, content: &[u8], target: &std::path::Path) -> Result<(), Error> {
        use std::io::Write as _;
        let mut file = self.file.take().expect("the lock is open until committed");
        file.write_all(content)
            .and_then(|()| file.flush())
            .map_err(Error::io("write", &self.path))?;
        drop(file);
        std::fs::rename(&self.path, target).map_err(Error::io("replace", target))?;
        self.path = std::path::PathBuf::new();
        Ok(())
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn read_packed_refs(path: &std::path::Path) -> Result<Vec<u8>, Error> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io("read", path)(e)),
    }
}

/// The entries of a sorted `packed-refs` body (no header line) whose names start with `prefix`,
/// last first, as (name, target): the end of the prefix's range is found by binary search and
/// only the entries walked are decoded, so the newest of many runs cost the same as of few.
/// Peel lines (`^…`) belong to the entry above them; undecodable lines are skipped.
fn packed_backwards<'a>(
    buf: &'a [u8],
    prefix: &'a str,
) -> impl Iterator<Item = (&'a str, ObjectId)> + 'a {
    // The start of the entry holding byte `pos` (a peel line's entry is the line above).
    let entry_start = |mut pos: usize| loop {
        let start = buf[..pos]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        if start > 0 && buf.get(start) == Some(&b'^') {
            pos = start - 1;
        } else {
            return start;
        }
    };
    // The end of the entry starting at `start`: past its line and its peel lines.
    let entry_end = |start: usize| {
        let mut end = start;
        loop {
            end = buf[end..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(buf.len(), |i| end + i + 1);
            if buf.get(end) != Some(&b'^') {
                return end;
            }
        }
    };
    let name_at = |start: usize| {
        let line = &buf[start..];
        let line = &line[..line.iter().position(|b| *b == b'\n').unwrap_or(line.len())];
        let space = line.iter().position(|b| *b == b' ')?;
        Some((&line[space + 1..], &line[..space]))
    };
    // The first entry past the range: the first whose name is not below `prefix` with its
    // last byte raised (every name in the range sorts below that).
    let mut upper = prefix.as_bytes().to_vec();
    if let Some(last) = upper.last_mut() {
        *last += 1;
    }
    let (mut lo, mut hi) = (0, buf.len());
    while lo < hi {
        let start = entry_start(lo + (hi - lo) / 2);
        let below = name_at(start).is_none_or(|(name, _)| name < upper.as_slice());
        if below {
            lo = entry_end(start);
        } else {
            hi = start;
        }
    }
    let mut pos = lo;
    std::iter::from_fn(move || {
        while pos > 0 {
            let start = entry_start(pos - 1);
            pos = start;
            let Some((name, hex)) = name_at(start) else {
                continue;
            };
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            if !name.starts_with(prefix) {
                pos = 0;
                return None;
            }
            // A first field that is no id (a torn or foreign line) names no target: skipped.
            if let Ok(id) = ObjectId::from_hex(hex) {
                return Some((name, id));
            }
        }
        None
    })
}

/// The object id of a loose ref file holding one (not a symbolic ref, not a lock).
fn read_direct_ref(path: &std::path::Path) -> Option<ObjectId> {
    let bytes = std::fs::read(path).ok()?;
    // `ref: …` (symbolic) or a file being written holds no id: no direct ref, as documented.
    ObjectId::from_hex(bytes.trim_ascii_end()).ok()
}

/// Every loose ref file below `dir` (whose ref name starts with `prefix`), lock files aside.
fn collect_loose(dir: &std::path::Path, prefix: &str, out: &mut Vec<(String, std::path::PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let path = entry.path();
        let full = format!("{}/{name}", prefix.trim_end_matches('/'));
        match entry.file_type() {
            Ok(t) if t.is_dir() => collect_loose(&path, &full, out),
            Ok(t) if t.is_file() && !name.ends_with(".lock") => out.push((full, path)),
            _ => {}
        }
    }
}

/// Removes the empty directories below `dir` (what deleting loose refs leaves behind).
fn remove_empty_dirs(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&entry.path());
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

const PACKED_HEADER: &str = "# pack-refs with: peeled fully-peeled sorted \n";

/// What to do when a ref to add is already in `packed-refs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnExisting {
    Refuse,
    Replace,
}

/// `packed-refs` content with `new` refs (pointing at commits, so without `^` peel lines)
/// added to `existing`, sorted by name as git writes it; with [`OnExisting::Refuse`], `None`
/// when one of them is already there. Other entries and their peel lines are kept byte for
/// byte; the header keeps only the traits the old file had (a new file gets git's full set).
fn packed_refs_with(
    existing: &[u8],
    new: &[(String, ObjectId)],
    on_existing: OnExisting,
) -> Option<Vec<u8>> {
    let mut header: Option<&[u8]> = None;
    // (name, lines of the entry: the ref line and any `^` peel line after it)
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for line in existing.split_inclusive(|b| *b == b'\n') {
        if line.starts_with(b"#") {
            header.get_or_insert(line);
        } else if line.starts_with(b"^") {
            if let Some((_, block)) = entries.last_mut() {
                block.extend_from_slice(line);
            }
        } else if let Some(space) = line.iter().position(|b| *b == b' ') {
            let name = line[space + 1..].trim_ascii_end().to_vec();
            let mut block = line.to_vec();
            if !block.ends_with(b"\n") {
                block.push(b'\n');
            }
            entries.push((name, block));
        }
    }
    let new_names: HashSet<&[u8]> = new.iter().map(|(name, _)| name.as_bytes()).collect();
    let before = entries.len();
    entries.retain(|(name, _)| !new_names.contains(name.as_slice()));
    if entries.len() != before && on_existing == OnExisting::Refuse {
        return None;
    }
    for (name, id) in new {
        entries.push((
            name.as_bytes().to_vec(),
            format!("{id} {name}\n").into_bytes(),
        ));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let header = match header {
        None => PACKED_HEADER.as_bytes().to_vec(),
        Some(old) => {
            let traits = String::from_utf8_lossy(old);
            let mut line = "# pack-refs with:".to_owned();
            for t in ["peeled", "fully-peeled"] {
                if traits.split_whitespace().any(|w| w == t) {
                    line.push(' ');
                    line.push_str(t);
                }
            }
            line.push_str(" sorted \n");
            line.into_bytes()
        }
    };
    let mut out = header;
    for (_, block) in entries {
        out.extend_from_slice(&block);
    }
    Some(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn id(c: char) -> ObjectId {
        ObjectId::from_hex(c.to_string().repeat(40).as_bytes()).expect("hex")
    }

    #[test]
    fn new_refs_join_packed_refs_sorted_with_existing_entries_kept() {
        let existing = format!(
            "# pack-refs with: peeled fully-peeled sorted \n{a} refs/remotes/origin/main\n{b} refs/tags/v1\n^{c}\n",
            a = id('a'),
            b = id('b'),
            c = id('c')
        );
        let new = [
            ("refs/pair/runs/2".to_owned(), id('2')),
            ("refs/pair/runs/1".to_owned(), id('1')),
        ];
        let out = packed_refs_with(existing.as_bytes(), &new, OnExisting::Refuse).expect("added");
        let want = format!(
            "# pack-refs with: peeled fully-peeled sorted \n{one} refs/pair/runs/1\n{two} refs/pair/runs/2\n{a} refs/remotes/origin/main\n{b} refs/tags/v1\n^{c}\n",
            one = id('1'),
            two = id('2'),
            a = id('a'),
            b = id('b'),
            c = id('c')
        );
        assert_eq!(String::from_utf8(out).expect("utf-8"), want);
    }

    #[test]
    fn packed_refs_cases() {
        let new = [("refs/pair/runs/1".to_owned(), id('1'))];
        // A new file gets git's full header.
        let out = packed_refs_with(b"", &new, OnExisting::Refuse).expect("added");
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            format!("{PACKED_HEADER}{} refs/pair/runs/1\n", id('1'))
        );
        // An existing name is refused.
        let existing = format!("{} refs/pair/runs/1\n", id('9'));
        assert!(packed_refs_with(existing.as_bytes(), &new, OnExisting::Refuse).is_none());
        let replaced =
            packed_refs_with(existing.as_bytes(), &new, OnExisting::Replace).expect("replaced");
        assert_eq!(
            String::from_utf8(replaced).expect("utf-8"),
            format!("{PACKED_HEADER}{} refs/pair/runs/1\n", id('1'))
        );
        // A header without peeling traits does not gain them; a missing final newline is fixed.
        let existing = format!("# pack-refs with: sorted \n{} refs/x", id('9'));
        let out = String::from_utf8(
            packed_refs_with(existing.as_bytes(), &new, OnExisting::Refuse).expect("added"),
        )
        .expect("utf-8");
        assert!(out.starts_with("# pack-refs with: sorted \n"), "{out}");
        assert!(out.ends_with(" refs/x\n"), "{out}");
    }

    /// A naive reading of the same entries: every line decoded, the prefix's last first.
    fn packed_naive<'a>(buf: &'a str, prefix: &str) -> Vec<(&'a str, ObjectId)> {
        let mut out: Vec<_> = buf
            .lines()
            .filter(|l| !l.starts_with('^') && !l.starts_with('#'))
            .filter_map(|l| {
                let (hex, name) = l.split_once(' ')?;
                Some((name, ObjectId::from_hex(hex.as_bytes()).ok()?))
            })
            .filter(|(name, _)| name.starts_with(prefix))
            .collect();
        out.reverse();
        out
    }

    #[test]
    fn packed_entries_are_read_backwards_from_the_end_of_the_prefix_range() {
        let names = [
            "refs/heads/main",
            "refs/pair/dropped/1",
            "refs/pair/runs/20260101-000000-000aaa",
            "refs/pair/runs/20260101-000001-000aab",
            "refs/pair/runs/20260102-000000-000abc",
            "refs/pair/runs0",
            "refs/pair/runsx/1",
            "refs/remotes/origin/main",
            "refs/tags/v1",
        ];
        // Every subset (with and without peel lines, and a final newline) reads the same
        // backwards as the naive forward decoding does.
        for mask in 0u32..(1 << names.len()) {
            for (peeled, final_newline) in [(false, true), (true, true), (true, false)] {
                let mut buf = String::new();
                for (i, name) in names.iter().enumerate() {
                    if mask & (1 << i) != 0 {
                        let hex = format!("{:040x}", i + 1);
                        buf.push_str(&format!("{hex} {name}\n"));
                        if peeled && i % 2 == 0 {
                            buf.push_str(&format!("^{:040x}\n", 100 + i));
                        }
                    }
                }
                if !final_newline {
                    buf.pop();
                }
                let got: Vec<_> = packed_backwards(buf.as_bytes(), RUNS_PREFIX).collect();
                assert_eq!(got, packed_naive(&buf, RUNS_PREFIX), "{buf}");
            }
        }
    }

    #[test]
    fn the_newest_run_tips_are_the_tail_of_all_tips_packed_loose_or_both() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@e")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@e")
                .output()
                .expect("run git");
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8(out.stdout)
                .expect("utf-8")
                .trim()
                .to_owned()
        };
        git(&["init", "-q"]);
        let a = git(&[
            "commit-tree",
            "-m",
            "a",
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        ]);
        let b = git(&[
            "commit-tree",
            "-m",
            "b",
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        ]);
        let run = |i: usize| format!("refs/pair/runs/20260101-0000{i:02}-000abc");
        for i in 0..12 {
            git(&["update-ref", &run(i), &a]);
        }
        git(&["update-ref", "refs/tags/after", &a]);
        git(&["pack-refs", "--all"]);
        // Newer runs loose, and one packed run shadowed by a loose value.
        for i in 12..15 {
            git(&["update-ref", &run(i), &a]);
        }
        git(&["update-ref", &run(11), &b]);
        let repo = Repo::open_isolated(dir.path()).expect("open");
        let all: Vec<_> = repo.run_tips().expect("tips").into_iter().collect();
        assert_eq!(all.len(), 15);
        for n in [0, 1, 3, 4, 5, 15, 40] {
            let want = all[all.len().saturating_sub(n)..].to_vec();
            assert_eq!(repo.newest_run_tips(n).expect("newest"), want, "n = {n}");
        }
        let eleven = RunId::parse(&run(11)["refs/pair/runs/".len()..]).expect("id");
        assert!(
            repo.newest_run_tips(5)
                .expect("newest")
                .contains(&(eleven, ObjectId::from_hex(b.as_bytes()).expect("hex")))
        );
    }

    #[test]
    fn packing_the_run_refs_removes_their_emptied_directory_and_new_runs_still_land() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@e")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@e")
                .output()
                .expect("run git");
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8(out.stdout)
                .expect("utf-8")
                .trim()
                .to_owned()
        };
        git(&["init", "-q"]);
        let a = git(&[
            "commit-tree",
            "-m",
            "a",
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        ]);
        for i in 0..3 {
            git(&[
                "update-ref",
                &format!("refs/pair/runs/20260101-00000{i}-000abc"),
                &a,
            ]);
        }
        let repo = Repo::open_isolated(dir.path()).expect("open");
        assert_eq!(repo.pack_run_refs(1).expect("pack"), 3);
        let runs_dir = dir.path().join(".git/refs/pair/runs");
        assert!(!runs_dir.exists(), "the emptied directory is gone");
        assert_eq!(
            git(&["for-each-ref", "--format=%(refname)", "refs/pair/runs"])
                .lines()
                .count(),
            3
        );
        // A new loose run ref recreates the directory, through git and through gix alike.
        git(&["update-ref", "refs/pair/runs/20260101-000009-000abc", &a]);
        let id = ObjectId::from_hex(a.as_bytes()).expect("hex");
        let edits = vec![RefEdit {
            change: Change::Update {
                log: no_reflog(),
                expected: PreviousValue::MustNotExist,
                new: gix::refs::Target::Object(id),
            },
            name: super::super::cas::full_ref_name("refs/pair/runs/20260101-000010-000abc")
                .expect("name"),
            deref: false,
        }];
        assert_eq!(repo.pack_run_refs(1).expect("pack again"), 1);
        assert!(!runs_dir.exists());
        repo.gix()
            .edit_references(edits)
            .expect("gix creates the directory");
        assert_eq!(repo.run_tips().expect("tips").len(), 5);
    }
}
