//! The work tree as `start` sees it: the clean-tree precondition, computed in-process with gix
//! (no `git status` subprocess). Tracked modifications, staged changes and untracked files
//! that are not ignored make a tree dirty; ignored files do not. Also what a checkpoint needs
//! of the work tree: the git operations in progress, and restoring a snapshot (the one place
//! that writes the work tree, through `git`, since gix cannot check out here).

use gix::status::UntrackedFiles;

use gix::bstr::ByteSlice as _;

use crate::checkpoint::InProgress;
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
/// walk, run in parallel.
pub fn first_dirty(repo: &Repo) -> Result<Option<Dirty>, Error> {
    let mut repo = repo.gix().clone();
    // The clean check only reads the index: verifying its trailing checksum would hash the
    // whole file (megabytes on big repositories) and prove nothing a decode error would not.
    repo.config_snapshot_mut()
        .set_value(&gix::config::tree::Index::SKIP_HASH, "true")
        .map_err(Error::git("configure index reading"))?;
    let index = repo
        .index_or_empty()
        .map_err(Error::git("read the index"))?;
    if let Some(path) = first_staged(&repo, &index)? {
        return Ok(Some(Dirty {
            path,
            what: "staged",
        }));
    }
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

/// The first path whose index entry differs from `HEAD^{tree}`, if any.
fn first_staged(
    repo: &gix::Repository,
    index: &gix::worktree::Index,
) -> Result<Option<String>, Error> {
    let head_tree = repo
        .head_tree_id_or_empty()
        .map_err(Error::git("read HEAD's tree"))?
        .detach();
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
