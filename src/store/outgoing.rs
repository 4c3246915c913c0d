//! What a push would publish that the remote does not have yet (SPEC §14): the commits of a
//! run (or of `refs/notes/pair`) between what the remote holds and the local tip, and the
//! blobs those commits add. Bounded by what is new: a commit's tree is compared path by path
//! with its parents' (shared subtrees are skipped by id, never walked), and a reviewed
//! snapshot with the run's base tree and the previous round's snapshot, so only files the
//! run changed are listed. `manifest.json` is not listed: it is a projection of the records,
//! which are. Reads objects only (through a delta-base cache: packs keep a run's objects as
//! long delta chains); scanning them is the caller's business.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::layout::{MANIFEST, Material, snapshot_round};
use super::{Error, Repo};
use crate::model::RunId;

/// New commits and the blobs they add.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outgoing {
    /// The new commits with their messages, newest first.
    pub commits: Vec<(ObjectId, String)>,
    /// The blobs they add, each once, with the first path it was found at (relative to the
    /// root of the run's or the notes' tree).
    pub blobs: Vec<NewBlob>,
    /// Parents of the new commits that are not the run's own (a base commit, in runs written
    /// before the base left the chain): a push would publish them and the history behind
    /// them too, unless the remote has them.
    pub outside: Vec<ObjectId>,
}

/// A blob a push would publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBlob {
    pub id: ObjectId,
    pub path: String,
}

/// A blob's content as far as scanning is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobText {
    /// Text, at most the size asked for.
    Text(Vec<u8>),
    /// Larger than the size asked for (its size).
    TooLarge(u64),
    /// Binary (a NUL in its first 8,000 bytes).
    Binary,
}

/// How many decoded commits and trees a reader keeps before it forgets them (checked between
/// runs).
const DECODED_CACHE_BOUND: usize = 4096;

/// One decoded tree: name → (is a tree, is a blob, id).
type Entries = Rc<HashMap<Vec<u8>, (bool, bool, ObjectId)>>;

/// One decoded commit: message, parents, tree.
type CommitInfo = Rc<(Vec<u8>, Vec<ObjectId>, ObjectId)>;

/// Reads what pushes would publish: objects through a delta-base cache, commits and trees
/// decoded once. One per push.
pub struct OutgoingReader {
    repo: gix::Repository,
    commits: HashMap<ObjectId, CommitInfo>,
    trees: HashMap<ObjectId, Entries>,
}

impl Repo {
    /// A reader for [`OutgoingReader::run_outgoing`] and friends.
    pub fn outgoing_reader(&self) -> OutgoingReader {
        let mut repo = self.repo.clone();
        repo.objects.set_pack_cache(|| {
            Box::new(crate::diff::DeltaBaseCache::new(
                crate::diff::DELTA_BASE_CACHE_LIMIT,
            ))
        });
        OutgoingReader {
            repo,
            commits: HashMap::new(),
            trees: HashMap::new(),
        }
    }
}

impl OutgoingReader {
    /// What publishing run `run_id` at `tip` sends to a remote holding it at `known` (`None`:
    /// the remote lacks the run): the run's commits reachable from `tip` and not from
    /// `known`, the blobs they add (records, stored material, files of reviewed snapshots
    /// that differ from the previous round's and from `public_base`'s tree — a commit the
    /// caller knows the remote has; `None`: every file of a first snapshot is new), and the
    /// commits outside the run they name as parents.
    pub fn run_outgoing(
        &mut self,
        run_id: &RunId,
        tip: ObjectId,
        known: Option<ObjectId>,
        public_base: Option<ObjectId>,
    ) -> Result<Outgoing, Error> {
        self.bound_caches();
        let trailer = format!("Pair-Run: {run_id}");
        let is_run_commit =
            |message: &[u8]| message.lines().any(|l| l.trim() == trailer.as_bytes());
        let mut known_commits = HashSet::new();
        let mut queue: Vec<ObjectId> = known.into_iter().collect();
        while let Some(id) = queue.pop() {
            if !known_commits.insert(id) {
                continue;
            }
            let commit = self.commit(id)?;
            if is_run_commit(&commit.0) {
                queue.extend(commit.1.iter().copied());
            }
        }
        let mut base_tree: Option<Option<ObjectId>> = None;
        let mut out = Outgoing::default();
        let mut seen_blobs = HashSet::new();
        let mut visited = HashSet::new();
        let mut queue = vec![tip];
        while let Some(id) = queue.pop() {
            if known_commits.contains(&id) || !visited.insert(id) {
                continue;
            }
            let commit = self.commit(id)?;
            if !is_run_commit(&commit.0) {
                continue;
            }
            let mut parent_trees = Vec::new();
            for parent in &commit.1 {
                let parent_commit = self.commit(*parent)?;
                if is_run_commit(&parent_commit.0) {
                    parent_trees.push(parent_commit.2);
                    queue.push(*parent);
                } else if !out.outside.contains(parent) {
                    out.outside.push(*parent);
                }
            }
            let root = commit.2;
            // A snapshot is compared with the base and the round before's snapshot too.
            let mut extra =
                |reader: &mut OutgoingReader, path: &str| -> Result<Vec<ObjectId>, Error> {
                    let Some(round) = snapshot_round(path) else {
                        return Ok(Vec::new());
                    };
                    if base_tree.is_none() {
                        base_tree = Some(match public_base {
                            Some(base) => reader.commit(base).ok().map(|c| c.2),
                            None => None,
                        });
                    }
                    let mut refs: Vec<ObjectId> = base_tree.flatten().into_iter().collect();
                    if let Some(earlier) = reader.earlier_snapshot(root, round)? {
                        refs.push(earlier);
                    }
                    Ok(refs)
                };
            let mut blobs = Vec::new();
            self.new_blobs(
                root,
                "",
                &parent_trees,
                &mut extra,
                &mut seen_blobs,
                &mut blobs,
            )?;
            out.blobs
                .extend(blobs.into_iter().filter(|b| b.path != MANIFEST));
            out.commits
                .push((id, String::from_utf8_lossy(&commit.0).into_owned()));
        }
        Ok(out)
    }

    /// What publishing `refs/notes/pair` at `tip` sends to a remote holding `known`: the
    /// notes commits not reachable from `known` and the note blobs they add.
    pub fn notes_outgoing(
        &mut self,
        tip: ObjectId,
        known: Option<ObjectId>,
    ) -> Result<Outgoing, Error> {
        let mut known_commits = HashSet::new();
        let mut queue: Vec<ObjectId> = known.into_iter().collect();
        while let Some(id) = queue.pop() {
            if known_commits.insert(id) {
                queue.extend(self.commit(id)?.1.iter().copied());
            }
        }
        let mut out = Outgoing::default();
        let mut seen_blobs = HashSet::new();
        let mut queue = vec![tip];
        let mut visited = HashSet::new();
        while let Some(id) = queue.pop() {
            if known_commits.contains(&id) || !visited.insert(id) {
                continue;
            }
            let commit = self.commit(id)?;
            let mut parent_trees = Vec::new();
            for parent in &commit.1 {
                parent_trees.push(self.commit(*parent)?.2);
                queue.push(*parent);
            }
            self.new_blobs(
                commit.2,
                "",
                &parent_trees,
                &mut |_, _| Ok(Vec::new()),
                &mut seen_blobs,
                &mut out.blobs,
            )?;
            out.commits
                .push((id, String::from_utf8_lossy(&commit.0).into_owned()));
        }
        Ok(out)
    }

    /// What publishing the project commits `commits` (a base and the history behind it that
    /// the remote lacks) sends: their messages and the blobs each adds over its parents.
    pub fn history_outgoing(&mut self, commits: &[ObjectId]) -> Result<Outgoing, Error> {
        let mut out = Outgoing::default();
        let mut seen_blobs = HashSet::new();
        for id in commits {
            let commit = self.commit(*id)?;
            let mut parent_trees = Vec::new();
            for parent in &commit.1 {
                parent_trees.push(self.commit(*parent)?.2);
            }
            self.new_blobs(
                commit.2,
                "",
                &parent_trees,
                &mut |_, _| Ok(Vec::new()),
                &mut seen_blobs,
                &mut out.blobs,
            )?;
            out.commits
                .push((*id, String::from_utf8_lossy(&commit.0).into_owned()));
        }
        Ok(out)
    }

    /// The tree of commit `id` (a run's tip: its run tree), read as the walk reads it.
    pub fn commit_tree(&mut self, id: ObjectId) -> Result<ObjectId, Error> {
        Ok(self.commit(id)?.2)
    }

    /// A blob's content when it is text of at most `max_bytes`.
    pub fn blob_text(&mut self, id: ObjectId, max_bytes: u64) -> Result<BlobText, Error> {
        let header = self
            .repo
            .find_header(id)
            .map_err(Error::git("read a blob header"))?;
        if header.size() > max_bytes {
            return Ok(BlobText::TooLarge(header.size()));
        }
        let mut blob = self.repo.find_blob(id).map_err(Error::git("read a blob"))?;
        let bytes = blob.take_data();
        if crate::secrets::looks_binary(&bytes) {
            return Ok(BlobText::Binary);
        }
        Ok(BlobText::Text(bytes))
    }

    /// Forgets the decoded commits and trees once they are many: they serve a run's own walk
    /// (and objects runs share, such as a base), while keeping those of every run of a push of
    /// 100,000 runs held most of its memory.
    fn bound_caches(&mut self) {
        if self.commits.len() + self.trees.len() > DECODED_CACHE_BOUND {
            self.commits.clear();
            self.trees.clear();
        }
    }

    fn commit(&mut self, id: ObjectId) -> Result<CommitInfo, Error> {
        if let Some(info) = self.commits.get(&id) {
            return Ok(info.clone());
        }
        let commit = self
            .repo
            .find_commit(id)
            .map_err(Error::git("read a commit"))?;
        let message = commit
            .message_raw()
            .map_err(Error::git("read a commit message"))?
            .to_vec();
        let parents = commit.parent_ids().map(|p| p.detach()).collect();
        let tree = commit
            .tree_id()
            .map_err(Error::git("read a commit's tree"))?
            .detach();
        let info: CommitInfo = Rc::new((message, parents, tree));
        self.commits.insert(id, info.clone());
        Ok(info)
    }

    fn entries(&mut self, tree: ObjectId) -> Result<Entries, Error> {
        if let Some(entries) = self.trees.get(&tree) {
            return Ok(entries.clone());
        }
        let object = self
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a tree"))?;
        let decoded = object.decode().map_err(Error::git("decode a tree"))?;
        let entries: Entries = Rc::new(
            decoded
                .entries
                .iter()
                .map(|e| {
                    (
                        e.filename.to_vec(),
                        (
                            e.mode.is_tree(),
                            e.mode.is_blob_or_symlink(),
                            e.oid.to_owned(),
                        ),
                    )
                })
                .collect(),
        );
        self.trees.insert(tree, entries.clone());
        Ok(entries)
    }

    fn subtree(&mut self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, Error> {
        let mut at = tree;
        for part in path.split('/') {
            match self.entries(at)?.get(part.as_bytes()) {
                Some(&(true, _, id)) => at = id,
                _ => return Ok(None),
            }
        }
        Ok(Some(at))
    }

    /// Appends to `out` every blob under `tree` (at `prefix`) that no tree of `refs` holds at
    /// the same path; `extra` gives more reference trees for a subtree at a given path.
    fn new_blobs(
        &mut self,
        tree: ObjectId,
        prefix: &str,
        refs: &[ObjectId],
        extra: &mut ExtraRefs<'_>,
        seen: &mut HashSet<ObjectId>,
        out: &mut Vec<NewBlob>,
    ) -> Result<(), Error> {
        let entries = self.entries(tree)?;
        let ref_entries: Vec<Entries> = refs
            .iter()
            .map(|r| self.entries(*r))
            .collect::<Result<_, _>>()?;
        let mut names: Vec<&Vec<u8>> = entries.keys().collect();
        names.sort();
        for name in names {
            let (is_tree, is_blob, id) = entries[name];
            if ref_entries
                .iter()
                .any(|r| r.get(name).is_some_and(|e| e.2 == id))
                || !seen.insert(id)
            {
                continue;
            }
            let path = format!("{prefix}{}", name.to_str_lossy());
            if is_tree {
                let mut sub_refs: Vec<ObjectId> = ref_entries
                    .iter()
                    .filter_map(|r| r.get(name).filter(|e| e.0).map(|e| e.2))
                    .collect();
                sub_refs.extend(extra(self, &path)?);
                self.new_blobs(id, &format!("{path}/"), &sub_refs, extra, seen, out)?;
            } else if is_blob {
                out.push(NewBlob { id, path });
            }
        }
        Ok(())
    }

    /// The snapshot of the latest round before `round` in the run tree `root`.
    fn earlier_snapshot(&mut self, root: ObjectId, round: u32) -> Result<Option<ObjectId>, Error> {
        let Some(reviews) = self.subtree(root, "reviews")? else {
            return Ok(None);
        };
        let entries = self.entries(reviews)?;
        let latest = entries
            .iter()
            .filter(|(_, e)| e.0)
            .filter_map(|(name, e)| Some((name.to_str().ok()?.parse::<u32>().ok()?, e.2)))
            .filter(|(n, _)| *n < round)
            .max_by_key(|(n, _)| *n);
        match latest {
            Some((_, tree)) => self.subtree(tree, Material::Snapshot.file_name()),
            None => Ok(None),
        }
    }
}

/// More reference trees for the subtree at a path (a snapshot's base and previous round).
type ExtraRefs<'f> = dyn FnMut(&mut OutgoingReader, &str) -> Result<Vec<ObjectId>, Error> + 'f;
