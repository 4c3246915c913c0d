//! Packing what git pair's own writes leave loose, as `git gc --auto` would but touching
//! nothing else: every run commit this clone writes is noted in `.git/pair/loose-commits`, and
//! so is every object a reviewed snapshot wrote loose; once [`PACK_AFTER_COMMITS`] lines have
//! piled up, the loose objects of those commits (the commits, their run trees, records,
//! manifests and stored material — a snapshot's subtree is not walked: only the objects the
//! snapshot noted as its own writes are taken, never a user's object) go into one pack, each object a delta against the same path's
//! newer version, and their loose copies are removed once the pack is durable. The packs so
//! written are listed in `.git/pair/packs`; once [`JOIN_AT`] of them are there they are
//! joined into one (their entries copied as they are, deltas and all) and removed, so a long
//! run is a few packs, not one per 128 commits. Best effort: a failure leaves objects loose
//! or packs apart, which only costs space and time.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::PathBuf;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::Repo;
use super::layout::snapshot_round;

/// Run commits noted before their loose objects are packed (an append writes about seven
/// objects, so this is about a thousand loose objects: a few hundred kilobytes on disk).
pub const PACK_AFTER_COMMITS: u64 = 128;
/// Bytes per noted commit: 40 hex digits and a newline.
const LINE: u64 = 41;
/// The mark of a noted object that is not a run commit (`<id> object`).
const LONE: &str = "object";
/// Commits one pack takes at most (older loose ones wait for the next).
const MAX_COMMITS: usize = 8_192;
/// A delta chain is cut (the object stored whole) at this depth, so reading an old version
/// applies at most this many deltas (git's `pack.depth`). The newest version of each thing is
/// whole, so reading a run's current state applies none.
const MAX_DEPTH: usize = 50;

/// git pair's own packs that are joined into one once there are this many (git's
/// `gc.autoPackLimit` is 50; a reader looks in every pack, newest first).
pub const JOIN_AT: usize = 8;

/// An object to pack, found at `path` of a run tree (`""`: a commit or a root tree).
struct Found {
    id: ObjectId,
    path: String,
}

impl Repo {
    /// Notes `commit` (a run commit just written, its objects loose) and packs what piled up
    /// once there is enough. Errors are swallowed: packing is housekeeping.
    pub(crate) fn note_loose_commit(&self, commit: ObjectId) {
        let log = self.loose_log();
        let line = format!("{commit}\n");
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut file| {
                file.write_all(line.as_bytes())?;
                file.metadata()
            });
        let Ok(meta) = appended else {
            return;
        };
        if meta.len() >= PACK_AFTER_COMMITS * LINE {
            let _ = self.pack_loose();
        }
    }

    /// Notes objects git pair wrote loose outside a run commit's own writes (a reviewed
    /// snapshot's new files and trees), so they are packed with the next pack: only objects
    /// this tool wrote are ever packed, never the user's.
    pub fn note_loose_objects(&self, ids: &[ObjectId]) {
        if ids.is_empty() {
            return;
        }
        let lines: String = ids.iter().map(|id| format!("{id} {LONE}\n")).collect();
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.loose_log())
            .and_then(|mut file| file.write_all(lines.as_bytes()));
    }

    fn loose_log(&self) -> PathBuf {
        self.pair_dir().join("loose-commits")
    }

    /// Packs the loose objects of the noted commits (and of their loose run ancestors) into
    /// one pack and removes their loose copies; returns how many objects were packed. One
    /// packer at a time: when another holds the lock, nothing is done.
    pub fn pack_loose(&self) -> std::io::Result<usize> {
        let lock_path = self.pair_dir().join("locks").join("pack");
        if let Some(dir) = lock_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)?;
        if lock.try_lock().is_err() {
            return Ok(0);
        }
        // Taken aside first: commits noted from now on go to a new log.
        let log = self.loose_log();
        let taken = log.with_extension("packing");
        if !taken.exists() {
            std::fs::rename(&log, &taken)?;
        }
        let text = std::fs::read_to_string(&taken)?;
        let (mut noted, mut lone) = (Vec::new(), Vec::new());
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let Some(Ok(id)) = words.next().map(|hex| ObjectId::from_hex(hex.as_bytes())) else {
                continue;
            };
            match words.next() {
                Some(LONE) => lone.push(id),
                _ => noted.push(id),
            }
        }
        let mut found = self.loose_run_objects(&noted);
        let mut seen: HashSet<ObjectId> = found.iter().map(|f| f.id).collect();
        for id in lone {
            if seen.insert(id) && self.is_loose(id) {
                found.push(Found {
                    id,
                    path: LONE.to_owned(),
                });
            }
        }
        let packed = self.write_loose_pack(&found)?;
        std::fs::remove_file(&taken)?;
        let _ = self.join_own_packs();
        drop(lock);
        Ok(packed)
    }

    fn packs_list(&self) -> PathBuf {
        self.pair_dir().join("packs")
    }

    /// The packs git pair wrote that still exist (a `git gc` may have repacked them).
    fn own_packs(&self) -> Vec<String> {
        let dir = self.common_dir().join("objects").join("pack");
        std::fs::read_to_string(self.packs_list())
            .unwrap_or_default()
            .lines()
            .filter(|name| {
                name.strip_prefix("pack-").is_some_and(|hex| {
                    hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit())
                }) && dir.join(format!("{name}.idx")).exists()
            })
            .map(str::to_owned)
            .collect()
    }

    /// Joins git pair's own packs into one once [`JOIN_AT`] are listed; the caller holds the
    /// pack lock. Never while a multi-pack index lists packs (removing one would break it).
    fn join_own_packs(&self) -> std::io::Result<()> {
        let names = self.own_packs();
        let pack_dir = self.common_dir().join("objects").join("pack");
        if names.len() < JOIN_AT || pack_dir.join("multi-pack-index").exists() {
            return Ok(());
        }
        let Some((joined, taken)) = crate::worktree::snapshot::pack::join(&pack_dir, &names)
            .map_err(std::io::Error::other)?
        else {
            return Ok(());
        };
        // Listed before the old ones go: a crash between leaves them unlisted, never lost.
        let mut list: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| !taken.iter().any(|t| t == n) && *n != joined)
            .collect();
        list.push(&joined);
        let text: String = list.iter().map(|n| format!("{n}\n")).collect();
        crate::util::fs::AtomicWrite::new(crate::util::fs::Mode::Umasked(0o666))
            .durable()
            .write(&self.packs_list(), text.as_bytes())
            .map_err(|(_, _, source)| source)?;
        for name in taken.iter().filter(|n| **n != joined) {
            // The index first: without it no reader looks in the pack.
            for ext in ["idx", "rev", "pack"] {
                let _ = std::fs::remove_file(pack_dir.join(format!("{name}.{ext}")));
            }
        }
        Ok(())
    }

    /// The path of object `id`'s loose file.
    fn loose_path(&self, id: ObjectId) -> PathBuf {
        let hex = id.to_string();
        self.common_dir()
            .join("objects")
            .join(&hex[..2])
            .join(&hex[2..])
    }

    fn is_loose(&self, id: ObjectId) -> bool {
        self.loose_path(id).exists()
    }

    /// The loose objects of the noted commits and of their loose ancestors that are run
    /// commits, newest commit first: each commit, then its tree walked through loose trees only
    /// (a packed tree's objects are packed with it), reviewed and checkpoint snapshots skipped.
    fn loose_run_objects(&self, noted: &[ObjectId]) -> Vec<Found> {
        let mut found = Vec::new();
        let mut seen: HashSet<ObjectId> = HashSet::new();
        let mut queue: Vec<ObjectId> = noted.to_vec();
        let mut commits = 0;
        // Newest noted last in the log: walk from there.
        while let Some(id) = queue.pop() {
            if commits >= MAX_COMMITS || !seen.insert(id) || !self.is_loose(id) {
                continue;
            }
            let Ok(commit) = self.repo.find_commit(id) else {
                continue;
            };
            let is_run = commit
                .message_raw()
                .is_ok_and(|m| m.lines().any(|l| l.starts_with(b"Pair-Run: ")));
            if !is_run {
                continue;
            }
            commits += 1;
            found.push(Found {
                id,
                path: String::new(),
            });
            if let Ok(tree) = commit.tree_id() {
                self.loose_tree_objects(tree.detach(), String::new(), &mut seen, &mut found);
            }
            // Parents go under the noted commits still queued, so the newest come first.
            let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
            queue.splice(0..0, parents);
        }
        found
    }

    fn loose_tree_objects(
        &self,
        tree: ObjectId,
        path: String,
        seen: &mut HashSet<ObjectId>,
        found: &mut Vec<Found>,
    ) {
        if !seen.insert(tree) || !self.is_loose(tree) {
            return;
        }
        let Ok(object) = self.repo.find_tree(tree) else {
            return;
        };
        let Ok(decoded) = object.decode() else {
            return;
        };
        let entries: Vec<(String, ObjectId, bool)> = decoded
            .entries
            .iter()
            .map(|e| (e.filename.to_string(), e.oid.to_owned(), e.mode.is_tree()))
            .collect();
        found.push(Found {
            id: tree,
            path: path.clone(),
        });
        for (name, id, is_tree) in entries {
            let child = if path.is_empty() {
                name
            } else {
                format!("{path}/{name}")
            };
            if is_tree {
                if snapshot_round(&child).is_none() {
                    self.loose_tree_objects(id, child, seen, found);
                }
            } else if seen.insert(id) && self.is_loose(id) {
                found.push(Found { id, path: child });
            }
        }
    }

    /// Writes `found` as one pack (each object after the first of its path a delta against
    /// the previous, newer one) and removes the loose copies; returns how many were packed.
    fn write_loose_pack(&self, found: &[Found]) -> std::io::Result<usize> {
        if found.is_empty() {
            return Ok(0);
        }
        // By what they are (the same path in every round: `reviews/*/prompt.md`, a record
        // kind, a bucket), newest first within each.
        let mut groups: Vec<(String, Vec<ObjectId>)> = Vec::new();
        let mut group_of: HashMap<String, usize> = HashMap::new();
        for f in found {
            let key = similar(&f.path);
            let at = *group_of.entry(key.clone()).or_insert_with(|| {
                groups.push((key, Vec::new()));
                groups.len() - 1
            });
            groups[at].1.push(f.id);
        }
        let mut objects: Vec<(ObjectId, gix::objs::Kind, Vec<u8>)> =
            Vec::with_capacity(found.len());
        let mut bases: Vec<Option<usize>> = Vec::with_capacity(found.len());
        for (group, ids) in &groups {
            let mut depth = 0;
            let mut previous: Option<(usize, gix::objs::Kind)> = None;
            for id in ids {
                let Ok(object) = self.repo.find_object(*id) else {
                    continue;
                };
                let kind = object.kind;
                // Records are read whole and oldest first (a transcript, a PR body): each is
                // stored whole, so reading every record applies no delta chain.
                let is_record = kind == gix::objs::Kind::Blob && group.starts_with("records/");
                let base = previous
                    .filter(|(_, k)| *k == kind && !is_record)
                    .filter(|_| depth < MAX_DEPTH)
                    .map(|(i, _)| i);
                depth = if base.is_some() { depth + 1 } else { 0 };
                bases.push(base);
                previous = Some((objects.len(), kind));
                objects.push((*id, kind, object.detach().data));
            }
        }
        let list: Vec<(ObjectId, gix::objs::Kind, &[u8])> = objects
            .iter()
            .map(|(id, kind, data)| (*id, *kind, data.as_slice()))
            .collect();
        let pack_dir = self.common_dir().join("objects").join("pack");
        let written = crate::worktree::snapshot::pack::write_with_bases(&pack_dir, &list, &bases)
            .map_err(std::io::Error::other)?;
        if let Some(name) = written {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.packs_list())
                .and_then(|mut file| file.write_all(format!("{name}\n").as_bytes()))?;
        }
        // The pack and its index are durable: the loose copies can go (as `git prune-packed`).
        for (id, _, _) in &objects {
            let _ = std::fs::remove_file(self.loose_path(*id));
        }
        Ok(objects.len())
    }
}

/// The group of objects whose versions look alike, for `path`: round numbers and buckets
/// (all-digit components) are one, a record file goes by its kind.
fn similar(path: &str) -> String {
    path.split('/')
        .map(|part| {
            if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else if let Some(kind) = super::layout::record_kind(part) {
                kind
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::similar;

    #[test]
    fn versions_of_one_thing_group_together() {
        assert_eq!(similar("reviews/12/prompt.md"), "reviews/*/prompt.md");
        assert_eq!(similar("records/0003"), "records/*");
        assert_eq!(
            similar("records/0003/000770-review-0123456789ab.json"),
            "records/*/review"
        );
        assert_eq!(similar("manifest.json"), "manifest.json");
        assert_eq!(similar(""), "");
    }
}
