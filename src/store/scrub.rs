//! Scrubbing a file out of a run (SPEC §14, `git pair scrub`): the run's commits no remote
//! has yet are written again with every stored snapshot's copy of the file (reviewed
//! snapshots `reviews/<n>/snapshot/<path>`, checkpoint snapshots) replaced by a short
//! placeholder; records, messages and everything else stay as they were. The run's ref moves
//! by compare-and-swap. Commits a remote already holds are never rewritten: a file one of
//! them holds is published, and only `drop` removes it there.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::object::tree::EntryKind;

use super::cas::{Swap, Swapped};
use super::layout::{Material, run_ref};
use super::{Error, Repo};
use crate::model::RunId;

/// The namespace of the local refs listing, per run, the blobs `scrub` removed from it here
/// (a blob of `<blob-id> <path>` lines). Push refuses those blobs wherever they appear again
/// (a later round that still holds the file): a blob a review flagged stays unpublished after
/// its flagged copy is gone. Push and pull never carry these refs.
pub const SCRUBBED_PREFIX: &str = "refs/pair-local/scrubbed/";

/// The ref listing the blobs scrubbed from run `run_id` here.
pub fn scrubbed_ref(run_id: &RunId) -> String {
    format!("{SCRUBBED_PREFIX}{run_id}")
}

/// What a scrub found or did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scrub {
    /// A commit some remote holds already stores the file: nothing was changed.
    Published {
        /// Where (paths inside the run's tree).
        places: Vec<String>,
    },
    /// No stored snapshot of the unpublished part holds the file: nothing was changed.
    Nothing,
    /// The unpublished part was written again without the file.
    Done(Scrubbed),
}

/// What a scrub rewrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scrubbed {
    /// The run's tip before and after.
    pub old_tip: ObjectId,
    pub new_tip: ObjectId,
    /// Commits written again.
    pub commits: usize,
    /// The stored copies replaced (paths inside the run's tree), each once.
    pub replaced: Vec<String>,
}

/// The text that takes the scrubbed file's place in stored snapshots.
pub fn scrub_placeholder(path: &str) -> String {
    format!("git pair scrub: {path} was removed from this run's stored snapshots\n")
}

impl Repo {
    /// Rewrites the commits of run `run_id` that no tip of `published` (the remotes' copies of
    /// the run) reaches, replacing the blob at `path` in every stored snapshot by
    /// [`scrub_placeholder`]; moves the run's ref by compare-and-swap.
    pub fn scrub_run(
        &self,
        run_id: &RunId,
        path: &str,
        published: &[ObjectId],
    ) -> Result<Scrub, Error> {
        let _writer = self.lock_run(run_id)?;
        let tip = self.run_tip(run_id)?.ok_or_else(|| Error::UnknownRun {
            run_id: run_id.to_string(),
        })?;
        let placeholder = self.write_blob(scrub_placeholder(path).as_bytes())?;
        let mut public = HashSet::new();
        for theirs in published {
            if self.repo.find_commit(*theirs).is_ok() {
                public.extend(self.run_commits(run_id, *theirs)?);
            }
        }
        let mut places = Vec::new();
        for commit in &public {
            let tree = self.commit_tree(*commit)?;
            for (place, id) in self.stored_copies(tree, path)? {
                if id != placeholder && !places.contains(&place) {
                    places.push(place);
                }
            }
        }
        if !places.is_empty() {
            places.sort();
            return Ok(Scrub::Published { places });
        }
        let mut rewritten: HashMap<ObjectId, ObjectId> = HashMap::new();
        let mut trees: HashMap<ObjectId, ObjectId> = HashMap::new();
        let mut replaced = Vec::new();
        let mut removed: Vec<ObjectId> = Vec::new();
        let mut commits = 0;
        // Post-order without recursion: a run may hold thousands of commits.
        let mut stack = vec![(tip, false)];
        while let Some((id, parents_done)) = stack.pop() {
            if rewritten.contains_key(&id) {
                continue;
            }
            if public.contains(&id) || !self.is_run_commit(run_id, id)? {
                rewritten.insert(id, id);
                continue;
            }
            let parents = self.commit_parents(id)?;
            if !parents_done {
                stack.push((id, true));
                stack.extend(parents.iter().map(|p| (*p, false)));
                continue;
            }
            let tree = self.commit_tree(id)?;
            let new_tree = match trees.get(&tree) {
                Some(t) => *t,
                None => {
                    let mut editor = self
                        .repo
                        .edit_tree(tree)
                        .map_err(Error::git("edit a run tree"))?;
                    let mut changed = false;
                    for (place, blob) in self.stored_copies(tree, path)? {
                        if blob == placeholder {
                            continue;
                        }
                        if !removed.contains(&blob) {
                            removed.push(blob);
                        }
                        editor
                            .upsert(place.as_str(), EntryKind::Blob, placeholder)
                            .map_err(Error::git("edit a run tree"))?;
                        changed = true;
                        if !replaced.contains(&place) {
                            replaced.push(place);
                        }
                    }
                    let new = if changed {
                        editor
                            .write()
                            .map_err(Error::git("write a run tree"))?
                            .detach()
                    } else {
                        tree
                    };
                    trees.insert(tree, new);
                    new
                }
            };
            let new_parents: Vec<ObjectId> = parents
                .iter()
                .map(|p| rewritten.get(p).copied().unwrap_or(*p))
                .collect();
            let new = if new_tree == tree && new_parents == parents {
                id
            } else {
                commits += 1;
                let message = self.commit_message_raw(id)?;
                self.write_commit(&message, new_tree, new_parents)?
            };
            rewritten.insert(id, new);
        }
        let new_tip = rewritten.get(&tip).copied().unwrap_or(tip);
        if replaced.is_empty() || new_tip == tip {
            return Ok(Scrub::Nothing);
        }
        // The run moves and the removed blobs are remembered in one transaction.
        let (name, list) = (run_ref(run_id), scrubbed_ref(run_id));
        let listed = self.ref_target(&list)?;
        let mut text = match listed {
            Some(blob) => String::from_utf8_lossy(&self.blob(blob)?).into_owned(),
            None => String::new(),
        };
        for blob in &removed {
            text.push_str(&format!("{blob} {}\n", path.escape_debug()));
        }
        let list_blob = self.write_blob(text.as_bytes())?;
        let swaps = [
            Swap {
                name: &list,
                expected: listed,
                new: Some(list_blob),
            },
            Swap {
                name: &name,
                expected: Some(tip),
                new: Some(new_tip),
            },
        ];
        if self.compare_and_swap(&swaps, "git-pair", None, || format!("scrub {name}"))?
            == Swapped::Lost
        {
            return Err(Error::LostRace {
                run_id: run_id.to_string(),
            });
        }
        replaced.sort();
        Ok(Scrub::Done(Scrubbed {
            old_tip: tip,
            new_tip,
            commits,
            replaced,
        }))
    }

    /// Every run `scrub` removed blobs from in this clone, with the list it keeps of them (read
    /// with [`Repo::scrubbed_in`]): one listing for many runs, not a lookup each.
    pub fn scrubbed_lists(&self) -> Result<HashMap<RunId, ObjectId>, Error> {
        Ok(self
            .refs_under(SCRUBBED_PREFIX)?
            .into_iter()
            .filter_map(|(name, list)| Some((super::ref_run_id(&name, SCRUBBED_PREFIX)?, list)))
            .collect())
    }

    /// The blobs named in a scrub's list (see [`Repo::scrubbed_lists`]).
    pub fn scrubbed_in(&self, list: ObjectId) -> Result<HashSet<ObjectId>, Error> {
        let text = self.blob(list)?;
        Ok(String::from_utf8_lossy(&text)
            .lines()
            .filter_map(|l| ObjectId::from_hex(l.split(' ').next()?.as_bytes()).ok())
            .collect())
    }

    /// Whether commit `id` carries run `run_id`'s trailer (is one of the run's own).
    fn is_run_commit(&self, run_id: &RunId, id: ObjectId) -> Result<bool, Error> {
        let trailer = format!("Pair-Run: {run_id}");
        let commit = self
            .repo
            .find_commit(id)
            .map_err(Error::git("read a run commit"))?;
        let message = commit
            .message_raw()
            .map_err(Error::git("read a run commit's message"))?;
        Ok(message
            .lines()
            .any(|line| line.trim() == trailer.as_bytes()))
    }

    /// The stored snapshot copies of `path` in the run tree `tree`: (path inside the run's
    /// tree, blob id).
    fn stored_copies(&self, tree: ObjectId, path: &str) -> Result<Vec<(String, ObjectId)>, Error> {
        let mut roots = Vec::new();
        for (dir, inner) in [
            ("reviews", Material::Snapshot.file_name()),
            ("checkpoints", "snapshot"),
        ] {
            let Some(parent) = self.subtree_at(tree, dir)? else {
                continue;
            };
            let listing = self
                .repo
                .find_tree(parent)
                .map_err(Error::git("read a run tree"))?;
            let decoded = listing.decode().map_err(Error::git("decode a run tree"))?;
            for entry in &decoded.entries {
                if entry.mode.is_tree() {
                    roots.push(format!("{dir}/{}/{inner}", entry.filename.to_str_lossy()));
                }
            }
        }
        let mut out = Vec::new();
        for root in roots {
            let place = format!("{root}/{path}");
            let found = self
                .repo
                .find_tree(tree)
                .map_err(Error::git("read a run tree"))?
                .lookup_entry_by_path(&place)
                .map_err(Error::git("look up a path in a run tree"))?;
            if let Some(entry) = found.filter(|e| e.mode().is_blob_or_symlink()) {
                out.push((place, entry.object_id()));
            }
        }
        Ok(out)
    }

    fn subtree_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, Error> {
        let found = self
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a run tree"))?
            .lookup_entry_by_path(path)
            .map_err(Error::git("look up a path in a run tree"))?;
        Ok(found.filter(|e| e.mode().is_tree()).map(|e| e.object_id()))
    }
}
