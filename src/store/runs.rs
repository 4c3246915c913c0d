//! A run's commit chain: reading a run (tip, tree, manifest, records, stored files) and
//! appending records with compare-and-swap, reloading and re-applying after a lost race. A
//! kernel writer lock per run queues this tool's own writers; objects are written before the
//! ref moves, so a crash leaves the old state or the new one.

use gix::ObjectId;
use gix::object::tree::EntryKind;

use super::approval_checks::Carry;
use super::cas::{Swap, Swapped, retry_lost_races, test_hold_before_ref_update};
use super::layout::{
    MANIFEST, Material, RECORDS, RUNS_PREFIX, ReviewDir, checkpoint_snapshot_path, manifest_json,
    record_bucket, record_kind, run_ref,
};
use super::{Error, Repo, lock};
use crate::model::{
    Body, CarriedApprovals, CarriedSummary, CheckpointId, Manifest, Record, Refusal, RunId,
};

/// The largest `manifest.json` read; a larger one is not git pair's (a run of a thousand
/// rounds stores well under a megabyte) and the manifest is projected from the records.
pub const MAX_MANIFEST_BYTES: u64 = 8 << 20;
/// The largest stored file of a run read (packets, reviewer output, prompts are bounded far
/// below this when written); a larger one is refused unread.
pub const MAX_MATERIAL_BYTES: u64 = 64 << 20;

/// A ref lock file older than this, found while we hold the run's writer lock, was left by
/// a killed process (live writers hold ref locks for microseconds).
const STALE_REF_LOCK: std::time::Duration = std::time::Duration::from_secs(1);
/// A `packed-refs.lock` older than this was left by a killed process.
const STALE_PACKED_REFS_LOCK: std::time::Duration = std::time::Duration::from_secs(5);

/// A run as read from its ref: the tip commit, its tree, and the stored projection.
#[derive(Debug, Clone)]
pub struct RunState {
    pub run_id: RunId,
    pub tip: ObjectId,
    pub tree: ObjectId,
    pub manifest: Manifest,
}

/// The packed refs of a repository as of one moment (see [`Repo::packed_refs`]).
pub struct PackedRefs(Option<gix::refs::file::packed::SharedBufferSnapshot>);

/// Content to place in the run's tree beside the record.
#[derive(Debug, Clone)]
pub enum Content {
    /// A file with these bytes.
    Blob(Vec<u8>),
    /// An existing tree (a snapshot), kept reachable by the run.
    Tree(ObjectId),
}

/// What a writer wants to append: a record body plus files, and how the commit reads.
#[derive(Debug, Clone)]
pub struct Append {
    pub body: Body,
    /// More records stored in the same commit, after `body` (e.g. cost measurements).
    pub also: Vec<Body>,
    /// Paths relative to the run tree's root (e.g. `reviews/2/prompt.md`).
    pub files: Vec<(String, Content)>,
    /// Commit subject, one line.
    pub subject: String,
    /// `Pair-Round:` trailer.
    pub round: Option<u32>,
    /// `Pair-Verdict:` trailer.
    pub verdict: Option<String>,
}

impl Append {
    /// An append of just a record.
    pub fn record(body: Body, subject: impl Into<String>) -> Self {
        Append {
            body,
            also: Vec::new(),
            files: Vec::new(),
            subject: subject.into(),
            round: None,
            verdict: None,
        }
    }
}

/// A new run written but not yet created: its first commit exists, its ref does not.
#[derive(Debug, Clone)]
pub struct PreparedRun {
    pub run_id: RunId,
    pub commit: ObjectId,
    pub tree: ObjectId,
    pub manifest: Manifest,
    pub records: Vec<Record>,
    /// The run's base commit, kept reachable by a local ref (not by the run's chain).
    pub base: Option<ObjectId>,
}

/// The result of a successful append.
#[derive(Debug, Clone)]
pub struct Appended {
    pub state: RunState,
    /// The main record (`Append::body`).
    pub record: Record,
    /// The records of `Append::also`, in order.
    pub also: Vec<Record>,
    /// How many times the writer lost a race and re-applied.
    pub retries: u32,
}

impl Append {
    /// Stores `content` as `material` of round `round` with this record.
    pub fn put(&mut self, round: u32, material: Material, content: Content) {
        self.put_in(ReviewDir::Round(round), material, content);
    }

    /// Stores `content` as `material` of the review `dir` with this record.
    pub fn put_in(&mut self, dir: ReviewDir, material: Material, content: Content) {
        self.files.push((dir.path(material), content));
    }

    /// Stores the work-tree snapshot `tree` of checkpoint `id` with this record.
    pub fn put_checkpoint_snapshot(&mut self, id: &CheckpointId, tree: ObjectId) {
        self.files
            .push((checkpoint_snapshot_path(id), Content::Tree(tree)));
    }
}

impl Repo {
    /// Lists every run id under `refs/pair/runs/`, oldest first (ids sort by time).
    pub fn list_runs(&self) -> Result<Vec<RunId>, Error> {
        let platform = self
            .repo
            .references()
            .map_err(Error::git("list run refs"))?;
        let iter = platform
            .prefixed(RUNS_PREFIX)
            .map_err(Error::git("list run refs"))?;
        let mut runs = Vec::new();
        for reference in iter {
            let reference = reference.map_err(|e| Error::Git {
                action: "read a run ref".into(),
                source: gix::Error::from_error(e),
            })?;
            let name = reference.name().as_bstr().to_string();
            if let Some(id) = crate::store::ref_run_id(&name, RUNS_PREFIX) {
                runs.push(id);
            }
        }
        runs.sort();
        Ok(runs)
    }

    /// The tip of a run's ref, or `None` when the run does not exist.
    pub fn run_tip(&self, run_id: &RunId) -> Result<Option<ObjectId>, Error> {
        let name = run_ref(run_id);
        let reference = self
            .repo
            .try_find_reference(name.as_str())
            .map_err(Error::git("read a run ref"))?;
        Ok(reference.and_then(|r| r.target().try_id().map(ToOwned::to_owned)))
    }

    /// The refs' packed list as it is now, to look many run tips up in without checking the
    /// file for changes at each lookup ([`Repo::run_tip_in`]).
    pub fn packed_refs(&self) -> Result<PackedRefs, Error> {
        Ok(PackedRefs(
            self.repo
                .refs
                .cached_packed_buffer()
                .map_err(Error::git("read the packed refs"))?,
        ))
    }

    /// [`Repo::run_tip`], with the packed refs as `packed` has them.
    pub fn run_tip_in(
        &self,
        packed: &PackedRefs,
        run_id: &RunId,
    ) -> Result<Option<ObjectId>, Error> {
        let name = run_ref(run_id);
        let reference = self
            .repo
            .refs
            .try_find_packed(name.as_str(), packed.0.as_ref().map(|b| &***b))
            .map_err(Error::git("read a run ref"))?;
        Ok(reference.and_then(|r| r.target.try_id().map(ToOwned::to_owned)))
    }

    /// Loads a run: tip, tree and manifest.
    pub fn load(&self, run_id: &RunId) -> Result<RunState, Error> {
        let tip = self.run_tip(run_id)?.ok_or_else(|| Error::UnknownRun {
            run_id: run_id.to_string(),
        })?;
        self.load_at(run_id, tip)
    }

    /// Loads a run as of commit `tip`. The stored `manifest.json` is a cache: it is used only
    /// when it parses, is no larger than [`MAX_MANIFEST_BYTES`] and describes the tree's
    /// records: its stamp is the tree's `records/` id (one lookup, however long the run), or,
    /// for a manifest written before stamps, its head (record count and last record) is the
    /// records tree's; otherwise the manifest is projected from the records. (A fetched
    /// manifest that matches but whose content lies is replaced when it is pulled:
    /// [`Repo::reprojected`].)
    pub fn load_at(&self, run_id: &RunId, tip: ObjectId) -> Result<RunState, Error> {
        if let Some((tree, manifest)) = self.manifests.borrow().get(&tip) {
            return Ok(RunState {
                run_id: run_id.clone(),
                tip,
                tree: *tree,
                manifest: manifest.clone(),
            });
        }
        let tree = self.commit_tree(tip).map_err(|e| e.in_run(run_id))?;
        let (manifest_id, records_tree) = self.manifest_and_records_ids(tree)?;
        let stored = self.manifest_in(manifest_id)?;
        if let Some(manifest) = stored.as_ref().filter(|m| {
            m.records_tree.is_some() && m.records_tree == records_tree.map(|id| id.to_string())
        }) {
            self.remember(tip, tree, manifest);
            return Ok(RunState {
                run_id: run_id.clone(),
                tip,
                tree,
                manifest: manifest.clone(),
            });
        }
        let entries = self.record_entries(tree)?;
        let head = entries.last().map(|(name, _)| name.as_str());
        let manifest = match stored {
            Some(manifest)
                if manifest.records_tree.is_none()
                    && manifest.records == entries.len() as u64
                    && manifest.last_record() == head =>
            {
                manifest
            }
            _ if entries.is_empty() => {
                return Err(Error::CorruptRun {
                    run_id: run_id.to_string(),
                    detail: format!("commit {tip} has no usable manifest.json and no records"),
                });
            }
            _ => {
                let records = entries
                    .into_iter()
                    .map(|(name, oid)| self.read_record(run_id, &name, oid))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut manifest = Manifest::project(&records);
                manifest.records_tree = records_tree.map(|id| id.to_string());
                manifest
            }
        };
        self.remember(tip, tree, &manifest);
        Ok(RunState {
            run_id: run_id.clone(),
            tip,
            tree,
            manifest,
        })
    }

    /// The manifest stored in the run tree `tree`, when there is one that parses and is no
    /// larger than [`MAX_MANIFEST_BYTES`] (read only after its size is known).
    fn stored_manifest(&self, tree: ObjectId) -> Result<Option<Manifest>, Error> {
        let (manifest, _) = self.manifest_and_records_ids(tree)?;
        self.manifest_in(manifest)
    }

    /// The manifest blob `id`, when there is one that parses and is no larger than
    /// [`MAX_MANIFEST_BYTES`].
    fn manifest_in(&self, id: Option<ObjectId>) -> Result<Option<Manifest>, Error> {
        let Some(id) = id else {
            return Ok(None);
        };
        Ok(match self.blob_within(id, MAX_MANIFEST_BYTES)? {
            Ok(bytes) => serde_json::from_slice::<Manifest>(&bytes).ok(),
            Err(_) => None,
        })
    }

    /// The ids of the run tree `tree`'s `manifest.json` (a file) and `records/` (a tree),
    /// from one reading of the tree.
    pub(crate) fn manifest_and_records_ids(
        &self,
        tree: ObjectId,
    ) -> Result<(Option<ObjectId>, Option<ObjectId>), Error> {
        if tree.is_empty_tree() {
            // A new run's: no object to look up (one that is never stored would open every
            // pack index before gix answers it).
            return Ok((None, None));
        }
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a run tree"))?;
        let manifest = tree
            .find_entry(MANIFEST)
            .filter(|e| e.mode().is_blob())
            .map(|e| e.object_id());
        let records = tree
            .find_entry(RECORDS)
            .filter(|e| e.mode().is_tree())
            .map(|e| e.object_id());
        Ok((manifest, records))
    }

    /// `tip` (a run's commit from elsewhere) when its stored manifest is exactly the
    /// projection of its records; otherwise a commit on top of it whose only change is the
    /// manifest projected from the records. Deterministic (fixed identity, the tip's time),
    /// so every clone pulling the same tip writes the same commit. Reads every record.
    pub fn reprojected(&self, run_id: &RunId, tip: ObjectId) -> Result<ObjectId, Error> {
        let (commit, tree) = self.commit_and_tree(tip).map_err(|e| e.in_run(run_id))?;
        // A summary the tip carries is read by listings as the manifest is (one that is
        // absent or does not parse is not: they read the manifest), so it is checked as well.
        let carried = CarriedSummary::in_message(commit.message_raw_sloppy());
        // So are the approvals it carries, when checked under today's rules (`verify` reads
        // no others).
        let approvals = CarriedApprovals::in_message(commit.message_raw_sloppy()).filter(|a| {
            a.checked_under(super::approval_checks::rules(), tree.into())
                .is_some()
        });
        let records = self.records_in_tree(run_id, tree)?;
        let mut projected = Manifest::project(&records);
        // What the records give, worked out only when the tip carries approvals to compare.
        let fresh = approvals
            .is_some()
            .then(|| self.carry_approvals(run_id, tree, Carry::All(&records), projected.spent_usd));
        let stamp = self.records_tree_id(tree)?.map(|id| id.to_string());
        projected.records_tree = stamp.clone();
        if let Some(stored) = self.stored_manifest(tree)? {
            // Fields a newer version wrote are compared as they are, not trusted when not; a
            // manifest from before stamps is taken without one (it is checked by its head).
            projected.extra = stored.extra.clone();
            if stored.records_tree.is_none() {
                projected.records_tree = None;
            }
            if stored == projected
                && carried.is_none_or(|carried| carried == CarriedSummary::of(&projected))
                && approvals.is_none_or(|approvals| fresh.as_ref() == Some(&Some(approvals)))
            {
                return Ok(tip);
            }
        }
        projected.extra.clear();
        projected.records_tree = stamp;
        let blob = self.write_blob(&manifest_json(&projected))?;
        let mut editor = self
            .repo
            .edit_tree(tree)
            .map_err(Error::git("edit a run tree"))?;
        editor
            .upsert(MANIFEST, EntryKind::Blob, blob)
            .map_err(Error::git("add manifest.json to a run tree"))?;
        let fixed = editor
            .write()
            .map_err(Error::git("write a run tree"))?
            .detach();
        // The fix changes only the manifest, which no check reads: what the records give
        // holds for its tree.
        let carried_approvals = match fresh {
            Some(fresh) => fresh.map(|mut a| {
                a.set_tree(fixed.into());
                a
            }),
            None => self.carry_approvals(run_id, fixed, Carry::All(&records), projected.spent_usd),
        };
        let message = format!(
            "manifest: projected again from the records\n\nThe fetched manifest.json or the \
             summaries its commit carries did not match its records.\n\nPair-Run: {run_id}\n{}{}",
            projected.summary_trailer(),
            carried_approvals.map(|a| a.trailer()).unwrap_or_default()
        );
        self.write_deterministic_commit(&message, fixed, &[tip])
    }

    fn remember(&self, tip: ObjectId, tree: ObjectId, manifest: &Manifest) {
        self.manifests
            .borrow_mut()
            .insert(tip, (tree, manifest.clone()));
    }

    /// Reads every record of a run in stored order (by seq, then file name).
    pub fn records(&self, state: &RunState) -> Result<Vec<Record>, Error> {
        self.records_in_tree(&state.run_id, state.tree)
    }

    /// Reads the records of the run tree `tree`.
    pub fn records_in_tree(&self, run_id: &RunId, tree: ObjectId) -> Result<Vec<Record>, Error> {
        if let Some(records) = self.tree_records.borrow().get(&tree) {
            return Ok(records.clone());
        }
        self.record_entries(tree)?
            .into_iter()
            .map(|(name, oid)| self.read_record(run_id, &name, oid))
            .collect()
    }

    /// Reads and decodes one record blob; one too big to have been written by git pair is
    /// refused unread. Every record read goes through here.
    pub(crate) fn read_record(
        &self,
        run_id: &RunId,
        name: &str,
        oid: ObjectId,
    ) -> Result<Record, Error> {
        match self.blob_within(oid, crate::model::MAX_RECORD_BYTES as u64)? {
            Ok(bytes) => parse_record(run_id, name, &bytes),
            Err(size) => Err(corrupt_record(
                run_id,
                name,
                crate::model::RecordError::TooLarge {
                    bytes: usize::try_from(size).unwrap_or(usize::MAX),
                },
            )),
        }
    }

    /// The newest record of `kind` (e.g. `review`) that `wanted` accepts, reading records
    /// newest first and only those of that kind (the kind is in the file name), so finding
    /// the last approval costs a few blob reads however long the run is.
    pub fn newest_record(
        &self,
        state: &RunState,
        kind: &str,
        mut wanted: impl FnMut(&Record) -> bool,
    ) -> Result<Option<Record>, Error> {
        let mut newest = self.records_newest_first(state)?;
        while let Some((name, oid)) = newest.next_entry()? {
            if record_kind(&name) != Some(kind) {
                continue;
            }
            let record = self.read_record(&state.run_id, &name, oid)?;
            if wanted(&record) {
                return Ok(Some(record));
            }
        }
        Ok(None)
    }

    /// Reads the record file `name` (inside `records/`) of the run tree `tree`.
    pub fn record_named(
        &self,
        run_id: &RunId,
        tree: ObjectId,
        name: &str,
    ) -> Result<Option<Record>, Error> {
        // A record file name is unique (its id), so one written by this process is the same
        // in every tree that holds it: no need to read the records tree back.
        if let Some(record) = self.written_records.borrow().get(name) {
            return Ok(Some(record.clone()));
        }
        let Some(oid) = self.record_blob_id(tree, name)? else {
            return Ok(None);
        };
        self.read_record(run_id, name, oid).map(Some)
    }

    /// Reads a stored file of a run by path (e.g. `reviews/1/diff.patch`); one larger than
    /// [`MAX_MATERIAL_BYTES`] is refused unread.
    pub fn run_file(&self, state: &RunState, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let Some(id) = self.blob_id_at(state.tree, path)? else {
            return Ok(None);
        };
        match self.blob_within(id, MAX_MATERIAL_BYTES)? {
            Ok(bytes) => Ok(Some(bytes)),
            Err(size) => Err(Error::CorruptRun {
                run_id: state.run_id.to_string(),
                detail: format!(
                    "{path} is {size} bytes, more than the {MAX_MATERIAL_BYTES} stored material may be"
                ),
            }),
        }
    }

    /// The id of the blob stored at `path` in the run tree `tree`, when a blob (or symlink) is
    /// there.
    pub fn run_blob_id(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, Error> {
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a run tree"))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(Error::git("look up a path in a run tree"))?;
        Ok(entry
            .filter(|e| e.mode().is_blob_or_symlink())
            .map(|e| e.object_id()))
    }

    /// The tree id stored at `path` in the run (e.g. a reviewed snapshot).
    pub fn run_subtree(&self, state: &RunState, path: &str) -> Result<Option<ObjectId>, Error> {
        let tree = self
            .repo
            .find_tree(state.tree)
            .map_err(Error::git("read a run tree"))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(Error::git("look up a path in a run tree"))?;
        Ok(entry.filter(|e| e.mode().is_tree()).map(|e| e.object_id()))
    }

    /// Creates a run whose first record is `start`. Its first commit has no parent: the base
    /// commit (and the project history behind it) is not part of the run, so publishing the
    /// run publishes neither (SPEC §14). The base stays reachable here through the local ref
    /// `refs/pair-local/bases/<run-id>`, which push and pull never carry.
    pub fn create_run(
        &self,
        run_id: &RunId,
        base: Option<ObjectId>,
        append: Append,
    ) -> Result<Appended, Error> {
        let prepared = self.prepare_run(run_id, base, append)?;
        self.publish_run(prepared)
    }

    /// Writes the objects of a new run (its records, manifest, tree and first commit) without
    /// creating its ref: nothing refers to them until [`Repo::publish_run`]. Safe to do ahead,
    /// even on another handle of the repository, while the run may still be refused.
    pub fn prepare_run(
        &self,
        run_id: &RunId,
        base: Option<ObjectId>,
        append: Append,
    ) -> Result<PreparedRun, Error> {
        let now = crate::util::time::rfc3339(crate::util::time::now_unix());
        let records = new_records(0, &now, &append);
        let mut manifest = Manifest::project(&records);
        let empty = ObjectId::empty_tree(self.repo.object_hash());
        let tree = self.write_state_tree(empty, &records, &mut manifest, &append.files)?;
        let approvals =
            self.carry_approvals(run_id, tree, Carry::All(&records), manifest.spent_usd);
        let message = commit_message(run_id, &records, &append, &manifest, approvals.as_ref());
        let commit = self.write_unique_commit(&message, tree, Vec::new())?;
        Ok(PreparedRun {
            run_id: run_id.clone(),
            commit,
            tree,
            manifest,
            records,
            base,
        })
    }

    /// Creates the ref of a run whose objects [`Repo::prepare_run`] wrote (compare-and-swap:
    /// the ref must not exist) and, when its start record claims it, this clone's ownership
    /// ref in the same transaction.
    pub fn publish_run(&self, prepared: PreparedRun) -> Result<Appended, Error> {
        let PreparedRun {
            run_id,
            commit,
            tree,
            manifest,
            records,
            base,
        } = prepared;
        // The run, its base keeper and its ownership appear together or not at all (one
        // transaction). The claim comes first: a crash between the renames leaves at worst a
        // claim on no run (ignored), never a run this clone lost.
        let (name, owned, kept) = (
            run_ref(&run_id),
            super::owned::owned_ref(&run_id),
            super::owned::base_ref(&run_id),
        );
        let claim = if manifest.claimed {
            Some(self.write_unique_blob(
                super::owned::claim_text(&run_id, super::owned::Claim::Started).as_bytes(),
            )?)
        } else {
            None
        };
        let mut swaps = Vec::new();
        if let Some(claim) = claim {
            swaps.push(Swap {
                name: &owned,
                expected: None,
                new: Some(claim),
            });
        }
        if let Some(base) = base {
            swaps.push(Swap {
                name: &kept,
                expected: None,
                new: Some(base),
            });
        }
        if swaps.is_empty() {
            self.move_ref(&run_id, None, commit)?;
        } else {
            swaps.push(Swap {
                name: &name,
                expected: None,
                new: Some(commit),
            });
            if self.compare_and_swap(&swaps, "git-pair", None, || format!("create {name}"))?
                == Swapped::Lost
            {
                return Err(Error::LostRace {
                    run_id: run_id.to_string(),
                });
            }
        }
        self.note_loose_commit(commit);
        // What was just written is known: reading the new run back (to render it) reads nothing.
        self.remember(commit, tree, &manifest);
        self.written_records
            .borrow_mut()
            .extend(records.iter().map(|r| (r.file_name(), r.clone())));
        self.tree_records.borrow_mut().insert(tree, records.clone());
        Ok(Appended {
            state: RunState {
                run_id,
                tip: commit,
                tree,
                manifest,
            },
            record: records[0].clone(),
            also: records[1..].to_vec(),
            retries: 0,
        })
    }

    /// Appends one record to a run with compare-and-swap, reloading and re-running `build`
    /// whenever another writer moved the ref first. `build` may refuse; then nothing is stored.
    pub fn append(
        &self,
        run_id: &RunId,
        mut build: impl FnMut(&RunState) -> Result<Append, Refusal>,
    ) -> Result<Appended, Error> {
        // Writers of this tool queue on a kernel lock (released when a process dies, unlike
        // a lock file); the compare-and-swap below still guards against every other writer.
        let _writer = self.lock_run(run_id)?;
        retry_lost_races(
            |retries| {
                let state = self.load(run_id)?;
                let append = build(&state).map_err(Error::Refused)?;
                let now = crate::util::time::rfc3339(crate::util::time::now_unix());
                let records = new_records(state.manifest.last_seq, &now, &append);
                let mut manifest = state.manifest.clone();
                for record in &records {
                    manifest.apply(record);
                }
                let tree =
                    self.write_state_tree(state.tree, &records, &mut manifest, &append.files)?;
                let parent = self.carried_approvals(state.tip)?;
                let approvals = self.carry_approvals(
                    run_id,
                    tree,
                    Carry::From(parent, state.tree, &records),
                    manifest.spent_usd,
                );
                let message =
                    commit_message(run_id, &records, &append, &manifest, approvals.as_ref());
                let commit = self.write_unique_commit(&message, tree, vec![state.tip])?;
                test_hold_before_ref_update();
                self.move_ref(run_id, Some(state.tip), commit)?;
                self.note_loose_commit(commit);
                self.remember(commit, tree, &manifest);
                self.written_records
                    .borrow_mut()
                    .extend(records.iter().map(|r| (r.file_name(), r.clone())));
                Ok(Appended {
                    state: RunState {
                        run_id: run_id.clone(),
                        tip: commit,
                        tree,
                        manifest,
                    },
                    record: records[0].clone(),
                    also: records[1..].to_vec(),
                    retries,
                })
            },
            || self.clear_stale_ref_lock(run_id),
            |attempts| Error::Contention {
                run_id: run_id.to_string(),
                attempts,
            },
        )
    }

    /// Moves `refs/pair/runs/<id>` from `expected` (None: must not exist) to `new`.
    /// A concurrent writer is reported as [`Error::LostRace`], never overwritten.
    pub fn move_ref(
        &self,
        run_id: &RunId,
        expected: Option<ObjectId>,
        new: ObjectId,
    ) -> Result<(), Error> {
        let name = run_ref(run_id);
        let swap = Swap {
            name: &name,
            expected,
            new: Some(new),
        };
        match self.compare_and_swap(&[swap], "git-pair", None, || format!("update {name}"))? {
            Swapped::Done => Ok(()),
            Swapped::Lost => Err(Error::LostRace {
                run_id: run_id.to_string(),
            }),
        }
    }

    /// Takes this tool's per-run writer lock (`.git/pair/locks/<id>`), waiting for it.
    ///
    /// Test-only (debug builds): `GIT_PAIR_TEST_NO_WRITER_LOCK=1` skips it, so tests can drive the
    /// compare-and-swap retry path with real concurrency.
    pub fn lock_run(&self, run_id: &RunId) -> Result<Option<std::fs::File>, Error> {
        if crate::util::test_switch("GIT_PAIR_TEST_NO_WRITER_LOCK").is_some() {
            return Ok(None);
        }
        self.hold_lock(run_id.as_str()).map(Some)
    }

    /// Opens `.git/pair/locks/<name>` and waits for its exclusive lock (released when the file
    /// is closed, also by a killed process).
    fn hold_lock(&self, name: &str) -> Result<std::fs::File, Error> {
        lock::hold(&self.pair_dir().join("locks").join(name))
    }

    /// Takes this tool's lock for sharing state with `remote_component` (`.git/pair/locks/`),
    /// waiting for it: one pull or push per remote at a time. While it is held, every ref
    /// lock file in that remote's staging namespace was left by a killed process (only the
    /// holder writes there), so they are removed.
    pub fn lock_sync(&self, staging_prefix: &str) -> Result<std::fs::File, Error> {
        let name: String = staging_prefix
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let file = self.hold_lock(&format!("sync-{name}"))?;
        lock::remove_lock_files(&self.common_dir().join(staging_prefix));
        lock::remove_if_older(
            &self.common_dir().join("packed-refs.lock"),
            STALE_PACKED_REFS_LOCK,
        );
        Ok(file)
    }

    /// Removes the run ref's lock file when a killed writer left it behind. Only called
    /// while holding the writer lock, so no writer of ours can own it.
    pub(crate) fn clear_stale_ref_lock(&self, run_id: &RunId) {
        let lock = self.common_dir().join(format!("{}.lock", run_ref(run_id)));
        lock::remove_if_older(&lock, STALE_REF_LOCK);
        // A packed run ref is updated through `packed-refs`: a writer killed while rewriting
        // it (a pull, a push, a start packing refs) leaves `packed-refs.lock`, and every
        // update of a packed ref would then wait forever. git itself holds it for well under
        // a second even with many thousands of refs.
        lock::remove_if_older(
            &self.common_dir().join("packed-refs.lock"),
            STALE_PACKED_REFS_LOCK,
        );
    }

    /// Writes the run tree after `records`: `base_tree` with the records in their buckets,
    /// `manifest` (stamped with the new `records/` id) and `files`. Costs the bucket the
    /// records go to and the trees above it, not the run; a run written before buckets has
    /// its records moved into buckets once, by its first append (the same blobs, new trees).
    fn write_state_tree(
        &self,
        base_tree: ObjectId,
        records: &[Record],
        manifest: &mut Manifest,
        files: &[(String, Content)],
    ) -> Result<ObjectId, Error> {
        let records_tree = self.write_records_tree(base_tree, records)?;
        manifest.records_tree = Some(records_tree.to_string());
        let manifest_json = manifest_json(manifest);
        // gix's high-level tree editor checks that every entry of every tree it writes exists
        // (a stat per entry). Every id here was just written or comes from a tree already in
        // the repository, so the plain editor is used.
        let mut editor = self.plain_editor(Some(base_tree))?;
        let mut upsert = |path: &str, kind: EntryKind, id: ObjectId| -> Result<(), Error> {
            editor
                .upsert(path.split('/'), kind, id)
                .map(|_| ())
                .map_err(|e| Error::Git {
                    action: format!("add {path} to a run tree"),
                    source: gix::Error::from_error(e),
                })
        };
        upsert(RECORDS, EntryKind::Tree, records_tree)?;
        let manifest_blob = self.write_unique_blob(&manifest_json)?;
        upsert(MANIFEST, EntryKind::Blob, manifest_blob)?;
        for (path, content) in files {
            let (kind, id) = match content {
                Content::Blob(bytes) => (EntryKind::Blob, self.write_blob(bytes)?),
                Content::Tree(id) => (EntryKind::Tree, *id),
            };
            upsert(path, kind, id)?;
        }
        editor
            .write(|tree| self.write_unique_tree(tree))
            .map_err(Error::git("write a run tree"))
    }

    /// Writes the `records/` tree of `base_tree` with `records` added to their buckets (and
    /// any record kept flat moved into its bucket); returns its id.
    fn write_records_tree(
        &self,
        base_tree: ObjectId,
        records: &[Record],
    ) -> Result<ObjectId, Error> {
        let old = self.records_tree_id(base_tree)?;
        let flat = self.records_top(old)?.flat;
        let mut editor = self.plain_editor(old)?;
        let mut upsert = |path: [&str; 2], id: ObjectId| -> Result<(), Error> {
            editor
                .upsert(path, EntryKind::Blob, id)
                .map(|_| ())
                .map_err(|e| Error::Git {
                    action: format!("add {RECORDS}/{}/{} to a run tree", path[0], path[1]),
                    source: gix::Error::from_error(e),
                })
        };
        for (name, id) in &flat {
            let Some(seq) = super::layout::record_seq(name) else {
                // Not a record (nothing of ours writes one there): left where it is.
                continue;
            };
            upsert([&record_bucket(seq), name], *id)?;
        }
        for record in records {
            let record_blob = self.write_unique_blob(&record.to_json())?;
            upsert(
                [&record_bucket(record.seq), &record.file_name()],
                record_blob,
            )?;
        }
        for (name, _) in flat
            .iter()
            .filter(|(n, _)| super::layout::record_seq(n).is_some())
        {
            editor.remove([name.as_str()]).map_err(|e| Error::Git {
                action: format!("move {RECORDS}/{name} into its bucket"),
                source: gix::Error::from_error(e),
            })?;
        }
        editor
            .write(|tree| self.write_unique_tree(tree))
            .map_err(Error::git("write a records tree"))
    }

    /// gix's plain tree editor on tree `root` (`None` or the empty tree: a new tree).
    fn plain_editor(&self, root: Option<ObjectId>) -> Result<gix::objs::tree::Editor<'_>, Error> {
        let empty = ObjectId::empty_tree(self.repo.object_hash());
        let root: gix::objs::Tree = match root.filter(|id| *id != empty) {
            None => gix::objs::Tree::empty(),
            Some(id) => self
                .repo
                .find_tree(id)
                .map_err(Error::git("read a run tree"))?
                .decode()
                .map_err(Error::git("decode a run tree"))?
                .into(),
        };
        Ok(gix::objs::tree::Editor::new(
            root,
            &self.repo.objects,
            self.repo.object_hash(),
        ))
    }

    /// The bytes of `material` of round `round`, if stored.
    pub fn round_file(
        &self,
        state: &RunState,
        round: u32,
        material: Material,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.run_file(state, &material.path(round))
    }

    /// The work-tree snapshot of checkpoint `id`, if this run stores it.
    pub fn checkpoint_snapshot(
        &self,
        state: &RunState,
        id: &CheckpointId,
    ) -> Result<Option<ObjectId>, Error> {
        self.run_subtree(state, &checkpoint_snapshot_path(id))
    }

    /// The work-tree snapshot reviewed in round `round`, if stored.
    pub fn round_snapshot(&self, state: &RunState, round: u32) -> Result<Option<ObjectId>, Error> {
        self.run_subtree(state, &Material::Snapshot.path(round))
    }
}

/// The records of one append, numbered after `last_seq`, all stamped `now`.
fn new_records(last_seq: u64, now: &str, append: &Append) -> Vec<Record> {
    std::iter::once(&append.body)
        .chain(&append.also)
        .zip(last_seq + 1..)
        .map(|(body, seq)| Record::new(seq, now.to_owned(), body.clone()))
        .collect()
}

/// The message of a run commit storing `records` (its new ones) and `manifest`, carrying
/// `approvals`.
fn commit_message(
    run_id: &RunId,
    records: &[Record],
    append: &Append,
    manifest: &Manifest,
    approvals: Option<&CarriedApprovals>,
) -> String {
    let subject = append.subject.lines().next().unwrap_or("record").trim();
    // A subject quotes a task or a summary: `git log` of the run hands no control character
    // to a terminal (escaped as git quotes paths).
    let subject = crate::render::escape::line(subject);
    let mut message = format!("{subject}\n\nPair-Run: {run_id}\n");
    for record in records {
        message.push_str(&format!("Pair-Record: {}\n", record.file_name()));
    }
    if let Some(round) = append.round {
        message.push_str(&format!("Pair-Round: {round}\n"));
    }
    if let Some(verdict) = append
        .verdict
        .as_deref()
        .filter(|v| crate::util::is_single_line(v))
    {
        message.push_str(&format!("Pair-Verdict: {verdict}\n"));
    }
    message.push_str(&manifest.summary_trailer());
    if let Some(approvals) = approvals {
        message.push_str(&approvals.trailer());
    }
    message
}

/// The record file `name` of run `run_id`, from its bytes (read elsewhere), checked as
/// [`Repo::read_record`] checks what it reads.
pub fn parse_record(run_id: &RunId, name: &str, bytes: &[u8]) -> Result<Record, Error> {
    if bytes.len() > crate::model::MAX_RECORD_BYTES {
        return Err(corrupt_record(
            run_id,
            name,
            crate::model::RecordError::TooLarge { bytes: bytes.len() },
        ));
    }
    Record::from_json(bytes).map_err(|e| corrupt_record(run_id, name, e))
}

fn corrupt_record(run_id: &RunId, name: &str, source: crate::model::RecordError) -> Error {
    Error::CorruptRecord {
        run_id: run_id.to_string(),
        path: format!("{RECORDS}/{name}"),
        source,
    }
}
