//! The work tree and the index as the loop's preconditions see them, computed in-process with
//! gix (no `git status` subprocess): the clean-tree check of `start` (tracked modifications,
//! staged changes and untracked files that are not ignored make a tree dirty; ignored files do
//! not), and the index compared with a tree — what a commit would record against what a
//! reviewer approved — without writing a single object, skipping every directory whose
//! cache-tree id already proves it equal. Also what a checkpoint needs of the work tree: the
//! git operations in progress, and restoring a snapshot (the one place that writes the work
//! tree, through `git`, since gix cannot check out here).

pub mod export;
mod fast;
pub mod snapshot;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::status::UntrackedFiles;

use crate::model::checkpoint::rules::InProgress;
use crate::store::{Error, Head, Repo};

/// Why the work tree is not clean: the first offending path found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirty {
    /// Repository-relative path.
    pub path: String,
    /// `staged`, `modified`, `deleted`, `untracked`, … as `git status` would say.
    pub what: &'static str,
}

/// Returns the first reason the work tree is dirty, or None when it is clean.
///
/// Stops at the first finding. Staged changes are looked for first, and skipped entirely
/// when the index's cache tree says the index is exactly `HEAD^{tree}` — the shortcut git's
/// own `diff-index --cached` takes — so a clean tree costs one stat pass and one directory
/// walk, run in parallel: first by the fast path (`fast.rs`, which only proves a tree clean),
/// then, when it cannot, by gix's status, which finds the first dirty path.
pub fn first_dirty(repo: &Repo) -> Result<Option<Dirty>, Error> {
    // HEAD's tree through the few commit → tree pairs git pair keeps (often no pack index is
    // opened: see `Repo::project_commit_tree`).
    let head_tree = repo.head_tree_or_empty()?;
    let mut repo = repo.gix().clone();
    // The clean check only reads the index: verifying its trailing checksum would hash the
    // whole file (megabytes on big repositories) and prove nothing a decode error would not.
    repo.config_snapshot_mut()
        .set_value(&gix::config::tree::Index::SKIP_HASH, "true")
        .map_err(Error::git("configure index reading"))?;
    let index = repo
        .index_or_empty()
        .map_err(Error::git("read the index"))?;
    if let Some(path) = first_staged(&repo, &index, head_tree)? {
        return Ok(Some(Dirty {
            path,
            what: "staged",
        }));
    }
    if fast::is_clean(&repo, &index) {
        return Ok(None);
    }
    first_unstaged(&repo, index)
}

/// The slow path of [`first_dirty`]: gix's full index ↔ work-tree status, stopping at the
/// first unstaged change or untracked file that is not ignored.
fn first_unstaged(
    repo: &gix::Repository,
    index: gix::worktree::Index,
) -> Result<Option<Dirty>, Error> {
    let iter = repo
        .status(gix::progress::Discard)
        .map_err(Error::git("prepare a status check"))?
        .index(index.into())
        .untracked_files(UntrackedFiles::Files)
        .index_worktree_rewrites(None)
        .into_index_worktree_iter(Vec::new())
        .map_err(Error::git("start a status check"))?;
    for item in iter {
        let item = item.map_err(Error::git("check the work tree's status"))?;
        if let Some(summary) = item.summary() {
            use gix::status::index_worktree::iter::Summary;
            let what = match summary {
                Summary::Added => "untracked",
                Summary::Removed => "deleted",
                Summary::Modified | Summary::TypeChange => "modified",
                Summary::Renamed | Summary::Copied => "renamed",
                Summary::IntentToAdd => "intent-to-add",
                Summary::Conflict => "conflicted",
            };
            return Ok(Some(Dirty {
                path: item.rela_path().to_string(),
                what,
            }));
        }
    }
    Ok(None)
}

/// The first path whose index entry differs from `head_tree` (`HEAD^{tree}`), if any.
fn first_staged(
    repo: &gix::Repository,
    index: &gix::worktree::Index,
    head_tree: gix::ObjectId,
) -> Result<Option<String>, Error> {
    let cache_tree_matches = index.tree().is_some_and(|root| {
        root.id == head_tree
            && root.num_entries.and_then(|n| usize::try_from(n).ok()) == Some(index.entries().len())
    });
    if cache_tree_matches {
        return Ok(None);
    }
    let mut pathspec = repo
        .pathspec(
            false,
            None::<&str>,
            false,
            &gix::index::State::new(repo.object_hash()),
            gix::worktree::stack::state::attributes::Source::IdMapping,
        )
        .map_err(Error::git("prepare a pathspec"))?;
    let mut first = None;
    repo.tree_index_status(
        &head_tree,
        index,
        Some(&mut pathspec),
        gix::status::tree_index::TrackRenames::Disabled,
        |change, _, _| {
            first = Some(change.location().to_string());
            Ok(gix::diff::index::Action::Break(()))
        },
    )
    .map_err(Error::git("compare the index with HEAD"))?;
    Ok(first)
}

/// The git operations in progress in this work tree's git directory (merge, rebase,
/// cherry-pick, revert, bisect) and a held `index.lock`, each with the marker found: while
/// any is there, the work tree is between two states and is not handed over.
pub fn in_progress(repo: &Repo) -> Vec<(InProgress, String)> {
    let git_dir = repo.git_dir();
    let dirs = [git_dir.as_path(), repo.common_dir()];
    let mut found = Vec::new();
    for what in InProgress::ALL {
        // A linked work tree keeps its own markers; bisect state may sit in the common dir.
        let marker = what.markers().iter().find(|marker| {
            dirs.iter()
                .any(|dir| std::fs::symlink_metadata(dir.join(marker)).is_ok())
        });
        if let Some(marker) = marker {
            found.push((what, (*marker).to_owned()));
        }
    }
    found
}

/// How `restore` puts a recorded HEAD in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checkout {
    /// Switch to this branch, which exists and points at the commit.
    Branch(String),
    /// Create this branch at the commit (it does not exist here) and switch to it.
    NewBranch(String),
    /// Detach HEAD at the commit.
    Detached,
}

/// Why a restore stopped.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error(transparent)]
    Store(#[from] Error),
    #[error("cannot compare the snapshot with HEAD: {0}")]
    Diff(#[from] crate::diff::Error),
    /// A file git does not track here (an ignored one) would be overwritten.
    #[error(
        "restoring would overwrite {path}, which is not tracked here (an ignored file?); nothing was changed"
    )]
    InTheWay { path: String },
    /// A `git` step failed; `state` says what it left behind.
    #[error("git {step} failed while restoring ({state}): {detail}")]
    Git {
        step: String,
        state: &'static str,
        detail: String,
    },
}

/// How long one `git` step of a restore may take.
const RESTORE_STEP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Checks out `commit` (as `checkout` says) and lays the tree `snapshot` down as uncommitted
/// changes: afterwards the index holds `commit`'s tree and the work tree holds `snapshot`
/// (modified and deleted files unstaged, new files untracked, modes and symlinks as stored).
/// The caller has checked that the work tree is clean. Refuses before changing anything when
/// a file git does not track here (an ignored one) is in the way.
///
/// gix 0.90, built with this crate's features, cannot write a tree into a work tree (no
/// checkout), so the three steps that do run `git` through `crate::process` (`LC_ALL=C`):
/// `git checkout` (refuses to lose work; runs the user's post-checkout hook like any
/// checkout), `git read-tree -m -u <commit> <snapshot>` (a two-tree merge: it refuses to
/// overwrite untracked files, including ignored ones), then `git read-tree -m <commit>` (the
/// index back to HEAD's tree, keeping the stat data of unchanged entries; the work tree is not
/// touched).
pub fn restore(
    repo: &Repo,
    commit: gix::ObjectId,
    snapshot: gix::ObjectId,
    checkout: &Checkout,
) -> Result<(), RestoreError> {
    let work_dir = repo.work_dir()?.to_path_buf();
    if let Some(path) = first_in_the_way(repo, snapshot)? {
        return Err(RestoreError::InTheWay { path });
    }
    let head = repo.head()?;
    let hex = commit.to_string();
    let args: Option<Vec<String>> = match checkout {
        Checkout::Branch(name) => {
            let already = matches!(&head, Head::Branch { name: on, commit: Some(c) } if on == name && *c == commit);
            (!already).then(|| vec!["checkout".into(), "-q".into(), name.clone(), "--".into()])
        }
        Checkout::NewBranch(name) => Some(vec![
            "checkout".into(),
            "-q".into(),
            "-b".into(),
            name.clone(),
            hex.clone(),
        ]),
        Checkout::Detached => {
            let already = matches!(&head, Head::Detached { commit: c } if *c == commit);
            (!already).then(|| {
                vec![
                    "checkout".into(),
                    "-q".into(),
                    "--detach".into(),
                    hex.clone(),
                ]
            })
        }
    };
    if let Some(args) = args {
        git_step(&work_dir, &args, "checkout", "nothing was changed")?;
    }
    if repo.commit_tree(commit)? == snapshot {
        return Ok(());
    }
    let snapshot_hex = snapshot.to_string();
    git_step(
        &work_dir,
        &[
            "read-tree".into(),
            "-m".into(),
            "-u".into(),
            hex.clone(),
            snapshot_hex,
        ],
        "read-tree -m -u",
        "HEAD is checked out, the snapshot is not laid down",
    )?;
    git_step(
        &work_dir,
        &["read-tree".into(), "-m".into(), hex],
        "read-tree -m",
        "the work tree holds the snapshot, the index holds it too: unstage with git reset -q",
    )?;
    Ok(())
}

fn git_step(
    work_dir: &std::path::Path,
    args: &[String],
    step: &str,
    state: &'static str,
) -> Result<(), RestoreError> {
    let failed = |detail: String| RestoreError::Git {
        step: step.to_owned(),
        state,
        detail,
    };
    let finished = crate::process::git(work_dir, args, RESTORE_STEP_TIMEOUT)
        .map_err(|e| failed(e.to_string()))?;
    if finished.status.is_some_and(|s| s.success()) {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&finished.stderr_tail);
    let detail = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let status = finished
        .status
        .map_or_else(|| "no exit status".to_owned(), |s| s.to_string());
    Err(failed(if detail.is_empty() { status } else { detail }))
}

/// The first path the restore would write that exists on disk but is not tracked here (the
/// work tree is clean, so only an ignored file can be such a path).
fn first_in_the_way(repo: &Repo, snapshot: gix::ObjectId) -> Result<Option<String>, RestoreError> {
    let gix_repo = repo.gix();
    let current = gix_repo
        .head_tree_id_or_empty()
        .map_err(Error::git("read HEAD's tree"))?
        .detach();
    let index = gix_repo
        .index_or_empty()
        .map_err(Error::git("read the index"))?;
    let work_dir = repo.work_dir()?;
    for change in crate::diff::raw_changes(gix_repo, Some(current), snapshot)? {
        if change.new.is_none() || index.entry_by_path(change.path.as_bstr()).is_some() {
            continue;
        }
        let Ok(relative) = gix::path::from_bstr(change.path.as_bstr()) else {
            continue;
        };
        if std::fs::symlink_metadata(work_dir.join(relative)).is_ok() {
            return Ok(Some(change.path.to_string()));
        }
    }
    Ok(None)
}

/// How a path of the index differs from a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StagedChange {
    /// In the index, not in the tree.
    Added,
    /// In both, with another id or mode.
    Modified,
    /// In the tree, not in the index.
    Deleted,
    /// Conflicted in the index (a merge in progress): no tree can be written.
    Unmerged,
}

impl StagedChange {
    /// A short word for messages, as `git status --short` would mark it.
    pub fn as_str(self) -> &'static str {
        match self {
            StagedChange::Added => "added",
            StagedChange::Modified => "modified",
            StagedChange::Deleted => "deleted",
            StagedChange::Unmerged => "unmerged",
        }
    }
}

/// What the index holds, in brief: enough to tell whether it equals a tree without a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSummary {
    /// The root id of the index's cache tree when it is valid: the tree `git write-tree` would
    /// write now.
    pub cached_tree: Option<ObjectId>,
}

/// The index as a commit would record it, read once (`GIT_INDEX_FILE` honoured, as in a hook
/// during `git commit -a`), to be compared with trees.
pub struct StagedIndex {
    repo: gix::Repository,
    index: gix::worktree::Index,
}

impl StagedIndex {
    /// Reads the index (an absent one is empty).
    pub fn read(repo: &Repo) -> Result<StagedIndex, Error> {
        let repo = index_reader(repo.gix())?;
        let index = repo
            .index_or_empty()
            .map_err(Error::git("read the index"))?;
        Ok(StagedIndex { repo, index })
    }

    /// What the index holds, in brief.
    pub fn summary(&self) -> IndexSummary {
        let entries = self.index.entries().len();
        IndexSummary {
            cached_tree: self
                .index
                .tree()
                .filter(|root| {
                    root.num_entries.and_then(|n| usize::try_from(n).ok()) == Some(entries)
                })
                .map(|root| root.id),
        }
    }

    /// Calls `on_change` for every path where the index differs from `tree`, in path order:
    /// what committing the index now would change relative to `tree`. Intent-to-add entries
    /// are not part of what a commit records, so they are skipped, as `git write-tree` skips
    /// them.
    ///
    /// Writes nothing. Every directory whose cache-tree entry is valid and carries the id of
    /// the tree's directory is skipped whole; during `git commit` git has just refreshed the
    /// cache tree, so an unchanged index costs one id comparison.
    pub fn changes_against(
        &self,
        tree: ObjectId,
        on_change: &mut dyn FnMut(&[u8], StagedChange),
    ) -> Result<(), Error> {
        index_tree_changes(&self.repo, &self.index, tree, on_change)
            .map_err(Error::git("compare the index with a tree"))
    }
}

/// [`StagedIndex::changes_against`] on the index as it is now.
pub fn staged_changes(
    repo: &Repo,
    tree: ObjectId,
    on_change: &mut dyn FnMut(&[u8], StagedChange),
) -> Result<IndexSummary, Error> {
    let staged = StagedIndex::read(repo)?;
    staged.changes_against(tree, on_change)?;
    Ok(staged.summary())
}

/// [`staged_changes`] over an index already read, for the snapshot code.
pub(crate) fn index_tree_changes(
    repo: &gix::Repository,
    index: &gix::index::State,
    tree: ObjectId,
    on_change: &mut dyn FnMut(&[u8], StagedChange),
) -> Result<(), gix::Error> {
    let mut walk = Walk {
        repo,
        index,
        on_change,
    };
    walk.dir(Some(tree), b"", index.tree(), 0..index.entries().len())
}

/// The repository opened for reading the index only: its trailing checksum is not verified
/// (that would hash the whole file, megabytes on big repositories, and prove nothing a decode
/// error would not).
pub(crate) fn index_reader(repo: &gix::Repository) -> Result<gix::Repository, Error> {
    let mut repo = repo.clone();
    repo.config_snapshot_mut()
        .set_value(&gix::config::tree::Index::SKIP_HASH, "true")
        .map_err(Error::git("configure index reading"))?;
    Ok(repo)
}

/// One index-against-tree comparison in progress.
struct Walk<'a> {
    repo: &'a gix::Repository,
    index: &'a gix::index::State,
    on_change: &'a mut dyn FnMut(&[u8], StagedChange),
}

/// One name of a directory level: a file (with its index entries), or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    File,
    Dir,
}

impl Walk<'_> {
    /// Compares the index entries in `range` (all under `prefix`, which is empty or ends in
    /// `/`) with `tree` (`None`: the directory is absent from the tree).
    fn dir(
        &mut self,
        tree: Option<ObjectId>,
        prefix: &[u8],
        cache: Option<&gix::index::extension::Tree>,
        range: std::ops::Range<usize>,
    ) -> Result<(), gix::Error> {
        if let (Some(tree), Some(cache)) = (tree, cache)
            && cache.id == tree
            && cache.num_entries.and_then(|n| usize::try_from(n).ok()) == Some(range.len())
        {
            return Ok(());
        }
        let object = match tree {
            Some(id) => Some(self.repo.find_tree(id)?),
            None => None,
        };
        let decoded = match &object {
            Some(tree) => tree.decode()?.entries,
            None => Vec::new(),
        };
        let entries = self.index.entries();
        let mut i = range.start;
        let mut t = 0;
        loop {
            // The index's next name at this level: a file, or a directory and its entries.
            let ours = (i < range.end).then(|| {
                let path = entries[i].path(self.index);
                let rest: &[u8] = &path[prefix.len()..];
                match rest.find_byte(b'/') {
                    Some(slash) if slash + 1 < rest.len() => {
                        let name = &rest[..slash];
                        // Entries are sorted by path, so the directory's are one run: found
                        // by bisection, not by reading each (a skipped directory costs its
                        // name, not its size).
                        let dir = &path[..prefix.len() + slash + 1];
                        let end = i
                            + 1
                            + entries[i + 1..range.end]
                                .partition_point(|e| e.path(self.index).starts_with(dir));
                        (name, Kind::Dir, i..end)
                    }
                    // A sparse index records a whole directory as one `dir/` entry.
                    Some(slash) => (&rest[..slash], Kind::Dir, i..i + 1),
                    None => {
                        let mut end = i + 1;
                        while end < range.end && entries[end].path(self.index) == path {
                            end += 1;
                        }
                        (rest, Kind::File, i..end)
                    }
                }
            });
            let theirs = decoded.get(t).map(|e| {
                let kind = if e.mode.is_tree() {
                    Kind::Dir
                } else {
                    Kind::File
                };
                (e.filename.as_bytes(), kind, e)
            });
            let order = match (&ours, &theirs) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some((a, ak, _)), Some((b, bk, _))) => tree_order(a, *ak, b, *bk),
            };
            match order {
                std::cmp::Ordering::Less => {
                    let (_, _, span) = ours.expect("Less only with an index name");
                    i = span.end;
                    self.only_in_index(span);
                }
                std::cmp::Ordering::Greater => {
                    let (name, kind, entry) = theirs.expect("Greater only with a tree name");
                    t += 1;
                    let path = [prefix, name].concat();
                    match kind {
                        Kind::File => (self.on_change)(&path, StagedChange::Deleted),
                        Kind::Dir => self.only_in_tree(entry.oid.to_owned(), &path)?,
                    }
                }
                std::cmp::Ordering::Equal => {
                    let (name, kind, span) = ours.expect("Equal with both");
                    let (_, _, entry) = theirs.expect("Equal with both");
                    i = span.end;
                    t += 1;
                    let sparse_dir = kind == Kind::Dir
                        && span.len() == 1
                        && entries[span.start].path(self.index).ends_with(b"/");
                    if kind == Kind::File || sparse_dir {
                        self.compare_file(span, entry.mode, entry.oid.to_owned());
                    } else {
                        let sub_prefix = [prefix, name, b"/"].concat();
                        let child = cache.and_then(|c| {
                            c.children
                                .iter()
                                .find(|child| child.name.as_slice() == name)
                        });
                        self.dir(Some(entry.oid.to_owned()), &sub_prefix, child, span)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Index entries with no counterpart in the tree: added (conflicted ones unmerged).
    fn only_in_index(&mut self, span: std::ops::Range<usize>) {
        let entries = self.index.entries();
        let mut i = span.start;
        while i < span.end {
            let path = entries[i].path(self.index);
            let mut end = i + 1;
            while end < span.end && entries[end].path(self.index) == path {
                end += 1;
            }
            let group = &entries[i..end];
            i = end;
            if group.iter().any(|e| e.stage_raw() != 0) {
                (self.on_change)(path, StagedChange::Unmerged);
            } else if group.iter().any(|e| !is_intent_to_add(e)) {
                (self.on_change)(path, StagedChange::Added);
            }
        }
    }

    /// A file (or a sparse directory entry) in both: equal, modified, or unmerged.
    fn compare_file(
        &mut self,
        span: std::ops::Range<usize>,
        mode: gix::objs::tree::EntryMode,
        id: ObjectId,
    ) {
        let group = &self.index.entries()[span];
        let path = group[0].path(self.index);
        if group.iter().any(|e| e.stage_raw() != 0) {
            (self.on_change)(path, StagedChange::Unmerged);
            return;
        }
        let entry = &group[0];
        if is_intent_to_add(entry) {
            (self.on_change)(path, StagedChange::Deleted);
        } else if entry.id != id || entry.mode.bits() != u32::from(mode.value()) {
            (self.on_change)(path, StagedChange::Modified);
        }
    }

    /// Every file of the tree `id` at `path`: deleted from the index.
    fn only_in_tree(&mut self, id: ObjectId, path: &[u8]) -> Result<(), gix::Error> {
        let tree = self.repo.find_tree(id)?;
        let decoded = tree.decode()?;
        for entry in &decoded.entries {
            let child = [path, b"/", entry.filename.as_bytes()].concat();
            if entry.mode.is_tree() {
                self.only_in_tree(entry.oid.to_owned(), &child)?;
            } else {
                (self.on_change)(&child, StagedChange::Deleted);
            }
        }
        Ok(())
    }
}

fn is_intent_to_add(entry: &gix::index::Entry) -> bool {
    entry
        .flags
        .contains(gix::index::entry::Flags::INTENT_TO_ADD)
}

/// git's tree order, which is also the index's path order: a directory sorts as its name
/// followed by `/`.
fn tree_order(a: &[u8], a_kind: Kind, b: &[u8], b_kind: Kind) -> std::cmp::Ordering {
    let key = |name: &[u8], kind: Kind| {
        name.iter()
            .copied()
            .chain((kind == Kind::Dir).then_some(b'/'))
            .collect::<Vec<u8>>()
    };
    if a_kind == b_kind {
        return a.cmp(b);
    }
    key(a, a_kind).cmp(&key(b, b_kind))
}
