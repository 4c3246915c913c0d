//! What a push would publish that the remote does not have yet (SPEC §14): the commits of a
//! run (or of `refs/notes/pair`) between what the remote holds and the local tip, and the
//! blobs those commits add. Bounded by what is new: a commit's tree is compared path by path
//! with its parents' (shared subtrees are skipped by id, never walked), and a reviewed
//! snapshot with the run's base tree and the previous round's snapshot, so only files the
//! run changed are listed. Reads objects only; scanning them is the caller's business.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::layout::{MANIFEST, snapshot_round};
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

/// One decoded tree: name → (is a tree, is a blob, id).
type Entries = Rc<HashMap<Vec<u8>, (bool, bool, ObjectId)>>;

/// More reference trees for the subtree at a path (a snapshot's base and previous round).
type ExtraRefs<'f, 'r> = dyn FnMut(&mut Trees<'r>, &str) -> Result<Vec<ObjectId>, Error> + 'f;

/// Reads trees once per walk.
struct Trees<'r> {
    repo: &'r Repo,
    cache: HashMap<ObjectId, Entries>,
}

impl<'r> Trees<'r> {
    fn entries(&mut self, tree: ObjectId) -> Result<Entries, Error> {
        if let Some(entries) = self.cache.get(&tree) {
            return Ok(entries.clone());
        }
        let object = self
            .repo
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
        self.cache.insert(tree, entries.clone());
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
        extra: &mut ExtraRefs<'_, 'r>,
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
}

impl Repo {
    /// What publishing run `run_id` at `tip` sends to a remote holding it at `known` (`None`:
    /// the remote lacks the run): the run's commits reachable from `tip` and not from
    /// `known`, and the blobs they add (records, `manifest.json`, stored material, files of
    /// reviewed snapshots that differ from the run's base and from the previous round's).
    pub fn run_outgoing(
        &self,
        run_id: &RunId,
        tip: ObjectId,
        known: Option<ObjectId>,
    ) -> Result<Outgoing, Error> {
        let trailer = format!("Pair-Run: {run_id}");
        let is_run_commit =
            |message: &[u8]| message.lines().any(|l| l.trim() == trailer.as_bytes());
        let mut known_commits = HashSet::new();
        if let Some(known) = known {
            let mut queue = vec![known];
            while let Some(id) = queue.pop() {
                if !known_commits.insert(id) {
                    continue;
                }
                let (message, parents) = self.commit_message_and_parents(id)?;
                if is_run_commit(&message) {
                    queue.extend(parents);
                }
            }
        }
        let base_tree = self.base_tree(tip)?;
        let mut trees = Trees {
            repo: self,
            cache: HashMap::new(),
        };
        let mut out = Outgoing::default();
        let mut seen_blobs = HashSet::new();
        let mut visited = HashSet::new();
        let mut queue = vec![tip];
        while let Some(id) = queue.pop() {
            if known_commits.contains(&id) || !visited.insert(id) {
                continue;
            }
            let (message, parents) = self.commit_message_and_parents(id)?;
            if !is_run_commit(&message) {
                continue;
            }
            let mut parent_trees = Vec::new();
            for parent in &parents {
                let (parent_message, _) = self.commit_message_and_parents(*parent)?;
                if is_run_commit(&parent_message) {
                    parent_trees.push(self.commit_tree(*parent)?);
                    queue.push(*parent);
                }
            }
            let root = self.commit_tree(id)?;
            // A snapshot is compared with the base and the round before's snapshot too.
            let mut extra = |trees: &mut Trees<'_>, path: &str| -> Result<Vec<ObjectId>, Error> {
                let Some(round) = snapshot_round(path) else {
                    return Ok(Vec::new());
                };
                let mut refs: Vec<ObjectId> = base_tree.into_iter().collect();
                if let Some(earlier) = earlier_snapshot(trees, root, round)? {
                    refs.push(earlier);
                }
                Ok(refs)
            };
            trees.new_blobs(
                root,
                "",
                &parent_trees,
                &mut extra,
                &mut seen_blobs,
                &mut out.blobs,
            )?;
            out.commits
                .push((id, String::from_utf8_lossy(&message).into_owned()));
        }
        Ok(out)
    }

    /// What publishing `refs/notes/pair` at `tip` sends to a remote holding `known`: the
    /// notes commits not reachable from `known` and the note blobs they add.
    pub fn notes_outgoing(
        &self,
        tip: ObjectId,
        known: Option<ObjectId>,
    ) -> Result<Outgoing, Error> {
        let mut known_commits = HashSet::new();
        let mut queue: Vec<ObjectId> = known.into_iter().collect();
        while let Some(id) = queue.pop() {
            if known_commits.insert(id) {
                queue.extend(self.commit_parents(id)?);
            }
        }
        let mut trees = Trees {
            repo: self,
            cache: HashMap::new(),
        };
        let mut out = Outgoing::default();
        let mut seen_blobs = HashSet::new();
        let mut queue = vec![tip];
        let mut visited = HashSet::new();
        while let Some(id) = queue.pop() {
            if known_commits.contains(&id) || !visited.insert(id) {
                continue;
            }
            let (message, parents) = self.commit_message_and_parents(id)?;
            let parent_trees = parents
                .iter()
                .map(|p| self.commit_tree(*p))
                .collect::<Result<Vec<_>, _>>()?;
            queue.extend(parents);
            trees.new_blobs(
                self.commit_tree(id)?,
                "",
                &parent_trees,
                &mut |_, _| Ok(Vec::new()),
                &mut seen_blobs,
                &mut out.blobs,
            )?;
            out.commits
                .push((id, String::from_utf8_lossy(&message).into_owned()));
        }
        Ok(out)
    }

    /// A blob's content when it is text of at most `max_bytes`.
    pub fn blob_text(&self, id: ObjectId, max_bytes: u64) -> Result<BlobText, Error> {
        let header = self
            .repo
            .find_header(id)
            .map_err(Error::git("read a blob header"))?;
        if header.size() > max_bytes {
            return Ok(BlobText::TooLarge(header.size()));
        }
        let bytes = self.blob(id)?;
        if crate::secrets::looks_binary(&bytes) {
            return Ok(BlobText::Binary);
        }
        Ok(BlobText::Text(bytes))
    }

    fn commit_message_and_parents(&self, id: ObjectId) -> Result<(Vec<u8>, Vec<ObjectId>), Error> {
        let commit = self
            .repo
            .find_commit(id)
            .map_err(Error::git("read a commit"))?;
        let message = commit
            .message_raw()
            .map_err(Error::git("read a commit message"))?
            .to_vec();
        Ok((message, commit.parent_ids().map(|p| p.detach()).collect()))
    }

    /// The tree of the base commit recorded in the manifest at `tip`, if it is here.
    fn base_tree(&self, tip: ObjectId) -> Result<Option<ObjectId>, Error> {
        let Some(manifest) = self.blob_at(self.commit_tree(tip)?, MANIFEST)? else {
            return Ok(None);
        };
        let base = serde_json::from_slice::<serde_json::Value>(&manifest)
            .ok()
            .and_then(|m| m.get("base")?.as_str().map(str::to_owned))
            .and_then(|b| ObjectId::from_hex(b.as_bytes()).ok());
        Ok(base.and_then(|b| self.commit_tree(b).ok()))
    }
}

/// The snapshot of the latest round before `round` in the run tree `root`.
fn earlier_snapshot(
    trees: &mut Trees<'_>,
    root: ObjectId,
    round: u32,
) -> Result<Option<ObjectId>, Error> {
    let Some(reviews) = trees.subtree(root, "reviews")? else {
        return Ok(None);
    };
    let entries = trees.entries(reviews)?;
    let latest = entries
        .iter()
        .filter(|(_, e)| e.0)
        .filter_map(|(name, e)| Some((name.to_str().ok()?.parse::<u32>().ok()?, e.2)))
        .filter(|(n, _)| *n < round)
        .max_by_key(|(n, _)| *n);
    match latest {
        Some((_, tree)) => trees.subtree(tree, super::layout::Material::Snapshot.file_name()),
        None => Ok(None),
    }
}
