//! The work tree as a tree object: tracked and untracked-but-not-ignored files, through git's
//! clean filters, with modes, symlinks and submodule commits as `git add -A` would record
//! them. Its id equals `cp .git/index tmp && GIT_INDEX_FILE=tmp git add -A && git write-tree`.
//!
//! Only objects are written: the user's index and work tree are never modified. New objects go
//! into one pack rather than one loose file each (much faster for large changes). Open the
//! repository `.with_object_memory()` to compute a snapshot without writing anything.

pub(crate) mod pack;
mod scan;

use std::collections::HashMap;
use std::path::PathBuf;

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};

use crate::store::Repo;

/// Errors while snapshotting, each naming what failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The repository has no work tree.
    #[error("{git_dir} is a bare repository: there is no work tree to snapshot")]
    Bare { git_dir: PathBuf },
    /// The index could not be read.
    #[error("cannot read the index: {}", crate::util::chain::error_chain(source))]
    Index {
        #[source]
        source: gix::Error,
    },
    /// Comparing the index with the work tree failed.
    #[error(
        "cannot compare the index with the work tree: {}",
        crate::util::chain::error_chain(source)
    )]
    Status {
        #[source]
        source: gix::Error,
    },
    /// A work-tree file could not be read, filtered or stored.
    #[error(
        "cannot store {path} from the work tree: {}",
        crate::util::chain::error_chain(source)
    )]
    WriteBlob {
        path: String,
        #[source]
        source: gix::Error,
    },
    /// A tree object could not be written.
    #[error(
        "cannot write the tree for '{path}': {}",
        crate::util::chain::error_chain(source)
    )]
    WriteTree {
        path: String,
        #[source]
        source: gix::Error,
    },
    /// The new objects could not be stored.
    #[error(transparent)]
    WritePack(#[from] pack::Error),
    /// A snapshot blob could not be read back.
    #[error(
        "cannot read blob {id} of the snapshot: {}",
        crate::util::chain::error_chain(source)
    )]
    ReadBlob {
        id: String,
        #[source]
        source: gix::Error,
    },
    /// A new object could not be written loose.
    #[error(
        "cannot write object {id}: {}",
        crate::util::chain::error_chain(source)
    )]
    WriteLoose {
        id: String,
        #[source]
        source: gix::Error,
    },
}

/// One path of the snapshot: git mode and object id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Leaf {
    mode: u32,
    id: ObjectId,
}

const REGULAR: u32 = 0o100644;
const EXECUTABLE: u32 = 0o100755;
const SYMLINK: u32 = 0o120000;
const GITLINK: u32 = 0o160000;
const TREE: u32 = 0o040000;

/// Writes the work tree as a tree object into `repo`'s object database and returns its id.
///
/// Starts from the index (whose stat data lets unchanged files be skipped without reading
/// them), applies what `git add -A` would: modified, deleted, untracked (not ignored) and
/// conflicted paths, executable-bit and type changes, submodules moved to another commit.
/// Works with an unborn `HEAD`; the result does not depend on `HEAD` at all.
///
/// The objects are collected in memory and then written as one pack. When `repo` already keeps
/// new objects in memory (`with_object_memory()`), they stay there and nothing is written.
pub fn write_worktree_tree(repo: &gix::Repository) -> Result<ObjectId, Error> {
    let caller_keeps_objects_in_memory = repo.objects.clone().take_object_memory().is_some();
    if caller_keeps_objects_in_memory {
        return snapshot_into(repo);
    }
    stage_worktree_tree(repo)?.write(repo)
}

/// A work-tree snapshot computed in memory and not written yet: its objects can be read (to
/// scan them, say) before anything is stored, then written with [`Staged::write`] or dropped.
pub struct Staged {
    staging: gix::Repository,
    tree: ObjectId,
}

/// Computes the work tree's snapshot like [`write_worktree_tree`], keeping the new objects in
/// memory.
pub fn stage_worktree_tree(repo: &gix::Repository) -> Result<Staged, Error> {
    let staging = repo.clone().with_object_memory();
    let tree = snapshot_into(&staging)?;
    Ok(Staged { staging, tree })
}

impl Staged {
    /// The snapshot's tree id.
    pub fn tree(&self) -> ObjectId {
        self.tree
    }

    /// The repository with the snapshot's objects readable (those in memory and those stored
    /// already), for reading and diffing; nothing written through it reaches the disk.
    pub fn objects(&self) -> &gix::Repository {
        &self.staging
    }

    /// The bytes of blob `id` (in memory or stored).
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, Error> {
        let mut blob = self
            .staging
            .find_blob(id)
            .map_err(|source| Error::ReadBlob {
                id: id.to_string(),
                source: gix::Error::from_error(source),
            })?;
        Ok(blob.take_data())
    }

    /// Writes the snapshot's new objects into `repo`'s object database and returns the tree.
    pub fn write(self, repo: &gix::Repository) -> Result<ObjectId, Error> {
        self.write_telling_loose(repo).map(|(tree, _)| tree)
    }

    /// [`Staged::write`], and the ids of the objects it wrote loose (for the store to pack
    /// them with its own once they pile up).
    fn write_telling_loose(
        self,
        repo: &gix::Repository,
    ) -> Result<(ObjectId, Vec<ObjectId>), Error> {
        let Staged { mut staging, tree } = self;
        write_staged(repo, &mut staging, tree)
    }
}

fn write_staged(
    repo: &gix::Repository,
    staging: &mut gix::Repository,
    tree: ObjectId,
) -> Result<(ObjectId, Vec<ObjectId>), Error> {
    let Some(storage) = staging.objects.take_object_memory() else {
        return Ok((tree, Vec::new()));
    };
    let mut objects: Vec<(ObjectId, gix::objs::Kind, &[u8])> = storage
        .iter()
        .map(|(id, (kind, data))| (*id, *kind, data.as_slice()))
        .collect();
    objects.retain(|(id, _, _)| !repo.has_object(id));
    if objects.len() <= LOOSE_LIMIT {
        // A typical round changes a few files: a pack per review would pile up hundreds of
        // packs over a long run, and every object lookup (ours and git's) pays for each.
        for (id, kind, data) in &objects {
            let written = gix::objs::Write::write_buf(&repo.objects, *kind, data).map_err(|e| {
                Error::WriteLoose {
                    id: id.to_string(),
                    source: gix::Error::from_error(e),
                }
            })?;
            debug_assert_eq!(written, *id);
        }
        return Ok((tree, objects.iter().map(|(id, _, _)| *id).collect()));
    }
    objects.sort_by_key(|(id, _, _)| *id);
    pack::write(&repo.objects.store_ref().path().join("pack"), &objects)?;
    Ok((tree, Vec::new()))
}

/// The snapshot's tree id, computed without writing any object (to compare the work tree
/// with a stored tree).
pub fn worktree_tree_id(repo: &gix::Repository) -> Result<ObjectId, Error> {
    snapshot_into(&repo.clone().with_object_memory())
}

// The snapshot on an opened [`Repo`], for the operations layer: it names the store's
// repository, never gix's, and gets the same trees as the functions above.

/// Writes the work tree's snapshot into the object database ([`write_worktree_tree`]).
pub fn write(repo: &Repo) -> Result<ObjectId, Error> {
    let gix = repo.gix();
    if gix.objects.clone().take_object_memory().is_some() {
        return snapshot_into(gix);
    }
    stage_worktree_tree(gix)?.write_into(repo)
}

/// Computes the work tree's snapshot in memory, written later or never
/// ([`stage_worktree_tree`]).
pub fn stage(repo: &Repo) -> Result<Staged, Error> {
    stage_worktree_tree(repo.gix())
}

/// The snapshot's tree id, nothing written ([`worktree_tree_id`]).
pub fn tree_id(repo: &Repo) -> Result<ObjectId, Error> {
    worktree_tree_id(repo.gix())
}

/// Whether the work tree, as a snapshot would hold it, is exactly `tree`
/// ([`worktree_equals_tree`]).
pub fn equals(repo: &Repo, tree: ObjectId) -> Result<bool, Error> {
    worktree_equals_tree(repo.gix(), tree)
}

impl Staged {
    /// Writes the snapshot's new objects into `repo` and returns the tree ([`Staged::write`]).
    pub fn write_into(self, repo: &Repo) -> Result<ObjectId, Error> {
        let (tree, loose) = self.write_telling_loose(repo.gix())?;
        repo.note_loose_objects(&loose);
        Ok(tree)
    }

    /// The entries that differ from `old` (a tree, `None` for the empty tree) to the
    /// snapshot, its objects read from memory where they are not stored yet.
    pub fn changes_since(
        &self,
        old: Option<ObjectId>,
    ) -> Result<Vec<crate::diff::RawChange>, crate::diff::Error> {
        crate::diff::raw_changes(self.objects(), old, self.tree())
    }
}

/// Up to this many new objects are written loose; more go into one pack.
const LOOSE_LIMIT: usize = 256;

fn snapshot_into(repo: &gix::Repository) -> Result<ObjectId, Error> {
    let workdir = repo.workdir().ok_or_else(|| Error::Bare {
        git_dir: repo.git_dir().to_owned(),
    })?;
    let index = repo
        .index_or_empty()
        .map_err(|source| Error::Index { source })?;
    let settings = Settings::from_config(repo);

    let worktree_changes = changed_paths(repo, &index)?;
    let base = index_leaves(&index);
    let in_index = |path: &BStr| {
        base.binary_search_by(|(p, _)| p.cmp(&path))
            .ok()
            .map(|i| base[i].1)
    };
    let mut updates: HashMap<BString, Option<Leaf>> = HashMap::new();

    let (mut pipeline, _) = repo
        .filter_pipeline(None)
        .map_err(|source| Error::Index { source })?;
    for path in worktree_changes {
        let object = pipeline
            .worktree_file_to_object(path.as_bstr(), &index)
            .map_err(|source| Error::WriteBlob {
                path: path.to_str_lossy().into_owned(),
                source,
            })?;
        let leaf = object.map(|(id, kind, _)| Leaf {
            mode: settings.mode_for(kind, in_index(path.as_bstr()).map(|l| l.mode)),
            id,
        });
        updates.insert(path, leaf);
    }
    for (path, leaf) in &base {
        if leaf.mode != GITLINK || updates.contains_key(*path) {
            continue;
        }
        let Ok(relative) = gix::path::from_bstr(*path) else {
            continue;
        };
        if let Some(head) = submodule_head(repo, &workdir.join(relative))
            && head != leaf.id
        {
            let moved = Leaf {
                mode: GITLINK,
                id: head,
            };
            updates.insert((*path).to_owned(), Some(moved));
        }
    }

    // The index's entries with the updates applied, then the new paths, in path order.
    let mut leaves: Vec<(&BStr, Leaf)> = Vec::with_capacity(base.len() + updates.len());
    for &(path, leaf) in &base {
        match updates.get(path) {
            None => leaves.push((path, leaf)),
            Some(Some(updated)) => leaves.push((path, *updated)),
            Some(None) => {}
        }
    }
    let before_additions = leaves.len();
    for (path, update) in &updates {
        if let Some(leaf) = update
            && in_index(path.as_bstr()).is_none()
        {
            leaves.push((path.as_bstr(), *leaf));
        }
    }
    if leaves.len() > before_additions {
        leaves.sort_by(|a, b| a.0.cmp(b.0));
    }
    write_trees(repo, &leaves)
}

/// What `git add` reads from `core.*` about modes.
struct Settings {
    /// `core.fileMode`: trust the executable bit of files.
    file_mode: bool,
    /// `core.symlinks`: the file system has symlinks.
    symlinks: bool,
}

impl Settings {
    fn from_config(repo: &gix::Repository) -> Settings {
        let config = repo.config_snapshot();
        Settings {
            file_mode: config.boolean("core.fileMode").unwrap_or(true),
            symlinks: config.boolean("core.symlinks").unwrap_or(true),
        }
    }

    /// git's `ce_mode_from_stat`: the mode recorded for a work-tree file of `kind`, given the
    /// mode already in the index.
    fn mode_for(&self, kind: gix::objs::tree::EntryKind, in_index: Option<u32>) -> u32 {
        use gix::objs::tree::EntryKind;
        let mode = match kind {
            EntryKind::Blob => REGULAR,
            EntryKind::BlobExecutable => EXECUTABLE,
            EntryKind::Link => SYMLINK,
            EntryKind::Commit => GITLINK,
            EntryKind::Tree => TREE,
        };
        let is_regular = mode == REGULAR || mode == EXECUTABLE;
        match in_index {
            Some(SYMLINK) if !self.symlinks && is_regular => SYMLINK,
            Some(old @ (REGULAR | EXECUTABLE)) if !self.file_mode && is_regular => old,
            None if !self.file_mode && is_regular => REGULAR,
            _ => mode,
        }
    }
}

/// The index's entries as `git write-tree` would write them: stage 0 only, without
/// intent-to-add entries (their work-tree state is picked up as a change), in path order.
fn index_leaves(index: &gix::index::State) -> Vec<(&BStr, Leaf)> {
    index
        .entries()
        .iter()
        .filter(|e| {
            e.stage_raw() == 0 && !e.flags.contains(gix::index::entry::Flags::INTENT_TO_ADD)
        })
        .map(|e| {
            let leaf = Leaf {
                mode: e.mode.bits(),
                id: e.id,
            };
            (e.path(index), leaf)
        })
        .collect()
}

/// Paths whose work-tree state must be (re-)read: modified, deleted, type-changed,
/// conflicted, intent-to-add, and untracked files that are not ignored.
fn changed_paths(
    repo: &gix::Repository,
    index: &gix::worktree::Index,
) -> Result<Vec<BString>, Error> {
    let mut paths = Vec::new();
    for_each_changed_path(repo, index, &mut |path| {
        paths.push(path);
        std::ops::ControlFlow::Continue(())
    })?;
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// Calls `each` with every path [`changed_paths`] collects, as the status walk finds them
/// (unsorted, possibly repeated), until it breaks.
fn for_each_changed_path(
    repo: &gix::Repository,
    index: &gix::worktree::Index,
    each: &mut dyn FnMut(BString) -> std::ops::ControlFlow<()>,
) -> Result<(), Error> {
    use gix::status::index_worktree::Item;
    use gix::status::plumbing::index_as_worktree::EntryStatus;

    let status = |source| Error::Status { source };
    let iter = repo
        .status(gix::progress::Discard)
        .map_err(status)?
        .index(gix::worktree::IndexPersistedOrInMemory::Persisted(
            index.clone(),
        ))
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .index_worktree_submodules(gix::status::Submodule::Given {
            ignore: gix::submodule::config::Ignore::All,
            check_dirty: false,
        })
        .into_index_worktree_iter(Vec::new())
        .map_err(status)?;
    for item in iter {
        let path = match item.map_err(status)? {
            Item::Modification {
                rela_path, status, ..
            } => match status {
                EntryStatus::NeedsUpdate(_) => continue,
                EntryStatus::Change(_)
                | EntryStatus::Conflict { .. }
                | EntryStatus::IntentToAdd => rela_path,
            },
            Item::DirectoryContents { entry, .. } => {
                if entry.status != gix::dir::entry::Status::Untracked {
                    continue;
                }
                entry.rela_path
            }
            Item::Rewrite { .. } => continue,
        };
        if each(path).is_break() {
            break;
        }
    }
    Ok(())
}

/// Whether the work tree, as [`write_worktree_tree`] would snapshot it, is exactly `tree`;
/// computed without building or writing any tree, and stopping at the first difference.
///
/// A path can only differ from `tree` where the index differs from `tree` (found through the
/// index's cache tree, so unchanged directories cost nothing) or where the work tree may differ
/// from the index (`scan`: the stat and directory walk `git status` also makes, leaner). Only
/// those paths are read from the work tree (through the clean filters, blobs kept in memory)
/// and compared with `tree`'s entry; a checked-out submodule is compared by its `HEAD`.
pub fn worktree_equals_tree(repo: &gix::Repository, tree: ObjectId) -> Result<bool, Error> {
    let repo = {
        let mut repo = repo.clone().with_object_memory();
        // Only reading the index: its trailing checksum proves nothing a decode error would not.
        repo.config_snapshot_mut()
            .set_value(&gix::config::tree::Index::SKIP_HASH, "true")
            .map_err(|e| Error::Index { source: e })?;
        repo
    };
    if repo.workdir().is_none() {
        return Err(Error::Bare {
            git_dir: repo.git_dir().to_owned(),
        });
    }
    let index = repo
        .index_or_empty()
        .map_err(|source| Error::Index { source })?;
    let settings = Settings::from_config(&repo);
    let tree_object = repo
        .find_tree(tree)
        .map_err(|e| Error::Status { source: e })?;
    let (mut pipeline, _) = repo
        .filter_pipeline(None)
        .map_err(|source| Error::Index { source })?;
    let in_index = |path: &BStr| index.entry_by_path(path).map(|e| e.mode.bits());
    let mut differs = |path: &BStr| -> Result<bool, Error> {
        let want = tree_object
            .lookup_entry(path.split(|&b| b == b'/'))
            .map_err(|e| Error::Status { source: e })?
            .map(|e| (u32::from(e.mode().value()), e.object_id()));
        if want.is_some_and(|(mode, _)| mode == TREE) {
            // A directory of `tree`: equal here when it is a directory in the work tree too;
            // its files are compared one by one, as they are candidates themselves.
            let Ok(relative) = gix::path::from_bstr(path) else {
                return Ok(true);
            };
            let workdir = repo.workdir().expect("checked above");
            let is_dir =
                std::fs::symlink_metadata(workdir.join(relative)).is_ok_and(|meta| meta.is_dir());
            return Ok(!is_dir);
        }
        let have = if in_index(path) == Some(GITLINK) {
            let Ok(relative) = gix::path::from_bstr(path) else {
                return Ok(true);
            };
            let workdir = repo.workdir().expect("checked above");
            match submodule_head(&repo, &workdir.join(relative)) {
                Some(head) => Some((GITLINK, head)),
                None => index.entry_by_path(path).map(|e| (GITLINK, e.id)),
            }
        } else {
            pipeline
                .worktree_file_to_object(path, &index)
                .map_err(|source| Error::WriteBlob {
                    path: path.to_str_lossy().into_owned(),
                    source,
                })?
                .map(|(id, kind, _)| (settings.mode_for(kind, in_index(path)), id))
        };
        Ok(want != have)
    };

    let mut staged = Vec::new();
    crate::worktree::index_tree_changes(&repo, &index, tree, &mut |path, _| {
        staged.push(BString::from(path));
    })
    .map_err(|source| Error::Status { source })?;
    for path in &staged {
        if differs(path.as_bstr())? {
            return Ok(false);
        }
    }
    for entry in index.entries() {
        if entry.mode.bits() == GITLINK && entry.stage_raw() == 0 {
            let path = entry.path(&index);
            if differs(path)? {
                return Ok(false);
            }
        }
    }
    let workdir = repo.workdir().expect("checked above");
    let modes = scan::Modes {
        file_mode: settings.file_mode,
        symlinks: settings.symlinks,
    };
    let candidates = scan::candidates(&repo, &index, workdir, modes)
        .map_err(|source| Error::Status { source })?;
    for path in candidates {
        if differs(path.as_bstr())? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The commit a checked-out submodule's `HEAD` points to, or `None` when the directory holds
/// no repository with a commit (git then keeps what the index records).
fn submodule_head(repo: &gix::Repository, path: &std::path::Path) -> Option<ObjectId> {
    if !path.join(".git").exists() {
        return None;
    }
    let submodule = gix::open_opts(path, repo.open_options().clone()).ok()?;
    submodule.head_id().ok().map(|id| id.detach())
}

/// Writes the trees for `leaves` (sorted by path) and returns the root tree's id.
fn write_trees(repo: &gix::Repository, leaves: &[(&BStr, Leaf)]) -> Result<ObjectId, Error> {
    let mut at = 0;
    let id = write_tree(repo, leaves, &mut at, b"".as_bstr())?;
    debug_assert_eq!(at, leaves.len());
    Ok(id)
}

/// Writes the tree for all leaves under `prefix` (which ends in `/` unless it is the root),
/// starting at `leaves[*at]`, and advances `at` past them.
fn write_tree(
    repo: &gix::Repository,
    leaves: &[(&BStr, Leaf)],
    at: &mut usize,
    prefix: &BStr,
) -> Result<ObjectId, Error> {
    use gix::objs::tree::{Entry, EntryKind, EntryMode};

    let mut entries: Vec<Entry> = Vec::new();
    while let Some((path, leaf)) = leaves.get(*at) {
        let Some(rest) = path.strip_prefix(prefix.as_bytes()) else {
            break;
        };
        match rest.find_byte(b'/') {
            Some(slash) if slash + 1 == rest.len() && leaf.mode == TREE => {
                // A sparse index records a whole directory as one entry.
                entries.push(Entry {
                    mode: EntryKind::Tree.into(),
                    filename: rest[..slash].into(),
                    oid: leaf.id,
                });
                *at += 1;
            }
            Some(slash) => {
                let name = &rest[..slash];
                let sub_prefix: BString = path[..prefix.len() + slash + 1].into();
                let oid = write_tree(repo, leaves, at, sub_prefix.as_bstr())?;
                entries.push(Entry {
                    mode: EntryKind::Tree.into(),
                    filename: name.into(),
                    oid,
                });
            }
            None => {
                let mode =
                    EntryMode::try_from(leaf.mode).unwrap_or_else(|_| EntryKind::Blob.into());
                entries.push(Entry {
                    mode,
                    filename: rest.into(),
                    oid: leaf.id,
                });
                *at += 1;
            }
        }
    }
    let tree = gix::objs::Tree { entries };
    repo.write_object(&tree)
        .map(|id| id.detach())
        .map_err(|source| Error::WriteTree {
            path: prefix.to_str_lossy().into_owned(),
            source,
        })
}
