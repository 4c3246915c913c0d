//! The clean-tree check's fast path: proves a work tree clean with fewer and cheaper system
//! calls than `git status` (per tracked directory one `openat` and its listing; per tracked
//! file one `fstatat` of a single path component, relative to its directory) and little else,
//! the directories shared out between the cores. It only ever answers "clean": anything it
//! does not handle exactly as gix's status does (a changed or racily clean entry, an untracked
//! path that is not ignored, a submodule, a conflict, a case-insensitive file system, …)
//! answers "not proven", and the caller runs gix's full status, which names the first dirty
//! path.

use std::ffi::{CStr, OsStr};
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use gix::bstr::ByteSlice as _;
use gix::index::entry::{Flags, Mode, Stat};
use rustix::fs::{AtFlags, FileType, OFlags};

/// Index entries gix's status does not compare with the work tree.
const NOT_CHECKED: Flags = Flags::UPTODATE
    .union(Flags::SKIP_WORKTREE)
    .union(Flags::ASSUME_VALID)
    .union(Flags::FSMONITOR_VALID);

/// Whether the work tree provably has no unstaged change and no untracked file that is not
/// ignored. `false` means "not proven", never "dirty".
pub(super) fn is_clean(repo: &gix::Repository, index: &gix::index::State) -> bool {
    Check::new(repo, index).is_some_and(|check| check.run(repo))
}

/// A tracked directory: what the index says is directly inside it.
struct TrackedDir<'a> {
    /// Its path from the work tree root (empty for the root), without a trailing '/'.
    path: &'a [u8],
    /// Its files, as indices into the index's entries (sorted by name, as the index is).
    files: Vec<usize>,
    /// How many of `files` gix's status compares with the work tree.
    checked_files: usize,
    /// The names of its tracked subdirectories, sorted.
    subdirs: Vec<&'a [u8]>,
}

/// One check: the index, its tracked directories and the configuration the stat comparison
/// needs.
struct Check<'a> {
    root: std::path::PathBuf,
    index: &'a gix::index::State,
    dirs: Vec<TrackedDir<'a>>,
    stat: gix::index::entry::stat::Options,
    symlinks: bool,
    executable_bit: bool,
    /// Whether some entry is not in the work tree (skip-worktree): only then may a
    /// `.gitignore` have to be read from the index.
    skips_worktree: bool,
}

/// What one worker found outside the index: (path, mode) to be checked against the ignore
/// rules on the thread that owns the repository.
type Untracked = Vec<(Vec<u8>, Mode)>;

impl<'a> Check<'a> {
    /// The check, or None when the repository has something only gix's status handles.
    fn new(repo: &gix::Repository, index: &'a gix::index::State) -> Option<Check<'a>> {
        let root = repo.workdir()?.to_path_buf();
        let fs = repo.filesystem_options().ok()?;
        if fs.ignore_case || fs.precompose_unicode {
            return None;
        }
        let stat = repo.stat_options().ok()?;
        let backing = index.path_backing();
        let mut dirs = vec![TrackedDir {
            path: b"",
            files: Vec::new(),
            checked_files: 0,
            subdirs: Vec::new(),
        }];
        // The directories of the previous entry, root first, as indices into `dirs`: the
        // index is sorted, so a directory's entries are contiguous and a directory left is
        // never entered again.
        let mut open = vec![0];
        let mut skips_worktree = false;
        for (i, entry) in index.entries().iter().enumerate() {
            let plain = matches!(
                entry.mode,
                Mode::FILE | Mode::FILE_EXECUTABLE | Mode::SYMLINK
            );
            if !plain || entry.stage_raw() != 0 || entry.flags.contains(Flags::INTENT_TO_ADD) {
                return None;
            }
            skips_worktree |= entry.flags.contains(Flags::SKIP_WORKTREE);
            let path = entry.path_in(backing).as_bytes();
            let (parent, name) = match path.rfind_byte(b'/') {
                Some(slash) => (&path[..slash], &path[slash + 1..]),
                None => (&path[..0], path),
            };
            if !is_plain_component(name) {
                return None;
            }
            // Most entries share the previous entry's directory; only a change of directory
            // walks the components.
            let current = *open.last().expect("the root is always open");
            if dirs[current].path != parent {
                let ends = parent
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'/')
                    .map(|(at, _)| at)
                    .chain((!parent.is_empty()).then_some(parent.len()));
                let mut depth = 0;
                let mut start = 0;
                for end in ends {
                    let component = &parent[start..end];
                    if !is_plain_component(component) {
                        return None;
                    }
                    depth += 1;
                    let dir_path = &parent[..end];
                    if open.get(depth).is_none_or(|&d| dirs[d].path != dir_path) {
                        open.truncate(depth);
                        dirs[open[depth - 1]].subdirs.push(component);
                        open.push(dirs.len());
                        dirs.push(TrackedDir {
                            path: dir_path,
                            files: Vec::new(),
                            checked_files: 0,
                            subdirs: Vec::new(),
                        });
                    }
                    start = end + 1;
                }
                open.truncate(depth + 1);
            }
            let dir = &mut dirs[*open.last().expect("the root is always open")];
            dir.files.push(i);
            if !entry.flags.intersects(NOT_CHECKED) {
                dir.checked_files += 1;
            }
        }
        for dir in &mut dirs {
            // `a-b/` sorts before `a/` in the index, but `a` before `a-b` by name.
            if !dir.subdirs.is_sorted() {
                dir.subdirs.sort_unstable();
            }
        }
        Some(Check {
            root,
            index,
            dirs,
            stat,
            symlinks: fs.symlink,
            executable_bit: fs.executable_bit,
            skips_worktree,
        })
    }

    /// Checks every tracked directory, shared out between the cores (this thread too), then
    /// asks the ignore rules about what was found outside the index.
    fn run(&self, repo: &gix::Repository) -> bool {
        let Ok(root) = rustix::fs::open(
            &self.root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        ) else {
            return false;
        };
        let not_proven = AtomicBool::new(false);
        let next_dir = AtomicUsize::new(0);
        let work = || {
            let mut untracked = Untracked::new();
            let mut buf = ListingBuffer::default();
            loop {
                if not_proven.load(Ordering::Relaxed) {
                    break;
                }
                let Some(dir) = self.dirs.get(next_dir.fetch_add(1, Ordering::Relaxed)) else {
                    break;
                };
                if !self.check_dir(root.as_fd(), dir, &mut buf, &mut untracked) {
                    not_proven.store(true, Ordering::Relaxed);
                    break;
                }
            }
            untracked
        };
        let helpers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .saturating_sub(1)
            .min(self.dirs.len().saturating_sub(1));
        let mut untracked = Untracked::new();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..helpers).map(|_| scope.spawn(work)).collect();
            untracked = work();
            for handle in handles {
                match handle.join() {
                    Ok(found) => untracked.extend(found),
                    Err(_) => not_proven.store(true, Ordering::Relaxed),
                }
            }
        });
        !not_proven.load(Ordering::Relaxed) && self.all_ignored(repo, &untracked)
    }

    /// Lists the tracked directory `dir` and compares the listing with the index: every
    /// tracked file there and unchanged by its stat data, every tracked subdirectory a
    /// directory, everything else collected into `untracked`.
    fn check_dir(
        &self,
        root: BorrowedFd<'_>,
        dir: &TrackedDir<'a>,
        buf: &mut ListingBuffer,
        untracked: &mut Untracked,
    ) -> bool {
        let Some(fd) = open_dir(root, dir.path) else {
            return false;
        };
        let skip = if dir.path.is_empty() {
            0
        } else {
            dir.path.len() + 1
        };
        let entries = self.index.entries();
        let backing = self.index.path_backing();
        let mut checked_files = 0;
        let listed = for_each_entry(&fd, buf, |name, kind| {
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." {
                return true;
            }
            if bytes == b".git" {
                // The repository itself at the root; a nested repository elsewhere: gix decides.
                return dir.path.is_empty();
            }
            let file = dir
                .files
                .binary_search_by(|&i| entries[i].path_in(backing).as_bytes()[skip..].cmp(bytes));
            if let Ok(at) = file {
                let entry = &entries[dir.files[at]];
                if entry.flags.intersects(NOT_CHECKED) {
                    return true;
                }
                checked_files += 1;
                return self.unchanged(fd.as_fd(), name, entry);
            }
            let kind = match kind {
                FileType::Unknown => {
                    match rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(stat) => FileType::from_raw_mode(stat.st_mode),
                        Err(_) => return false,
                    }
                }
                known => known,
            };
            if dir.subdirs.binary_search(&bytes).is_ok() {
                // A tracked directory must still be one (not a file, not a symlink).
                return kind == FileType::Directory;
            }
            let mut path = Vec::with_capacity(dir.path.len() + 1 + bytes.len());
            if !dir.path.is_empty() {
                path.extend_from_slice(dir.path);
                path.push(b'/');
            }
            path.extend_from_slice(bytes);
            let mode = match kind {
                FileType::Directory => Mode::DIR,
                FileType::Symlink => Mode::SYMLINK,
                _ => Mode::FILE,
            };
            untracked.push((path, mode));
            true
        });
        // A tracked file missing from the listing was deleted.
        listed && checked_files == dir.checked_files
    }

    /// Whether the file `name` in `dir` matches `entry` as gix's status would find without
    /// reading it: same type and executable bit, same stat data, not racily clean.
    // The stat fields' types differ between platforms: the casts are not all no-ops.
    #[allow(clippy::unnecessary_cast)]
    fn unchanged(&self, dir: BorrowedFd<'_>, name: &CStr, entry: &gix::index::Entry) -> bool {
        let Ok(st) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            return false;
        };
        let kind = FileType::from_raw_mode(st.st_mode);
        let is_file = kind == FileType::RegularFile;
        let is_executable = is_file && (st.st_mode as u32) & 0o100 != 0;
        if kind == FileType::Directory
            || entry
                .mode
                .change_to_match_fs_with_values(
                    is_file,
                    false,
                    kind == FileType::Symlink,
                    is_executable,
                    self.symlinks,
                    self.executable_bit,
                )
                .is_some()
        {
            return false;
        }
        // As `gix_index::entry::Stat::from_fs` reads it (times before 1970 or out of range
        // are left to gix).
        let (Some(mtime), Some(ctime)) = (
            stat_time(st.st_mtime as i64, st.st_mtime_nsec as i64),
            stat_time(st.st_ctime as i64, st.st_ctime_nsec as i64),
        ) else {
            return false;
        };
        let stat = Stat {
            mtime,
            ctime,
            dev: st.st_dev as u32,
            ino: st.st_ino as u32,
            uid: st.st_uid as u32,
            gid: st.st_gid as u32,
            size: st.st_size as u32,
        };
        stat.matches(&entry.stat, self.stat)
            && (!entry.id.is_empty_blob() || entry.stat.size == 0)
            && !stat.is_racy(self.index.timestamp(), self.stat)
    }

    /// Whether every path found outside the index is ignored.
    fn all_ignored(&self, repo: &gix::Repository, untracked: &Untracked) -> bool {
        if untracked.is_empty() {
            return true;
        }
        // The index only lends `.gitignore` files that are not in the work tree; without such
        // entries, scanning it for them finds none.
        let no_entries = gix::index::State::new(repo.object_hash());
        let lends = if self.skips_worktree {
            self.index
        } else {
            &no_entries
        };
        let Ok(mut excludes) = repo.excludes(
            lends,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        ) else {
            return false;
        };
        untracked.iter().all(|(path, mode)| {
            excludes
                .at_entry(path.as_bstr(), Some(*mode))
                .is_ok_and(|platform| platform.is_excluded())
        })
    }
}

/// A stat time as gix reads it, or None for one it would not read as is.
fn stat_time(secs: i64, nsecs: i64) -> Option<gix::index::entry::stat::Time> {
    Some(gix::index::entry::stat::Time {
        secs: u32::try_from(secs).ok()?,
        nsecs: u32::try_from(nsecs).ok().filter(|n| *n < 1_000_000_000)?,
    })
}

/// A path component git would store: not empty, not `.` or `..`.
fn is_plain_component(name: &[u8]) -> bool {
    !name.is_empty() && name != b"." && name != b".."
}

/// Opens the directory at `path` (relative to `root`; the root itself when empty) for
/// listing, never through a symlink at its last component (earlier ones are directories
/// checked in their own turn).
fn open_dir(root: BorrowedFd<'_>, path: &[u8]) -> Option<OwnedFd> {
    let path = if path.is_empty() { b"." } else { path };
    rustix::fs::openat(
        root,
        OsStr::from_bytes(path),
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok()
}

/// The buffer directory listings are read into, reused across directories.
struct ListingBuffer(Vec<std::mem::MaybeUninit<u8>>);

impl Default for ListingBuffer {
    fn default() -> Self {
        ListingBuffer(vec![std::mem::MaybeUninit::uninit(); 32 * 1024])
    }
}

/// Calls `each(name, type)` for every entry of the directory `fd` (`.` and `..` included)
/// until it returns false; whether the listing was read whole and `each` never said false.
#[cfg(target_os = "linux")]
fn for_each_entry(
    fd: &OwnedFd,
    buf: &mut ListingBuffer,
    mut each: impl FnMut(&CStr, FileType) -> bool,
) -> bool {
    let mut entries = rustix::fs::RawDir::new(fd, &mut buf.0);
    while let Some(entry) = entries.next() {
        let Ok(entry) = entry else { return false };
        if !each(entry.file_name(), entry.file_type()) {
            return false;
        }
    }
    true
}

/// Calls `each(name, type)` for every entry of the directory `fd` (`.` and `..` included)
/// until it returns false; whether the listing was read whole and `each` never said false.
#[cfg(not(target_os = "linux"))]
fn for_each_entry(
    fd: &OwnedFd,
    _buf: &mut ListingBuffer,
    mut each: impl FnMut(&CStr, FileType) -> bool,
) -> bool {
    let Ok(entries) = rustix::fs::Dir::read_from(fd) else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else { return false };
        if !each(entry.file_name(), entry.file_type()) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;
    use std::time::{Duration, SystemTime};

    use crate::store::Repo;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    }

    fn write(dir: &Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn set_mtime(path: &Path, when: SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(path)
            .expect("open")
            .set_modified(when)
            .expect("set mtime");
    }

    /// A committed repository whose stat data is settled as in a real one: files last
    /// changed well before the index was written, so nothing is racily clean.
    fn settled_repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        write(root, ".gitignore", "target/\n*.log\n");
        write(root, "a.txt", "a\n");
        write(root, "dir/b.txt", "b\n");
        write(root, "dir/sub/c.txt", "c\n");
        write(root, "dir.txt", "sorts between dir and dir/\n");
        write(
            root,
            "dir-x/y.txt",
            "dir-x/ sorts before dir/, dir before dir-x\n",
        );
        write(root, "run.sh", "#!/bin/sh\n");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        std::os::unix::fs::symlink("a.txt", root.join("link")).expect("symlink");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        let past = SystemTime::now() - Duration::from_secs(100);
        for file in [
            ".gitignore",
            "a.txt",
            "dir/b.txt",
            "dir/sub/c.txt",
            "dir.txt",
            "dir-x/y.txt",
            "run.sh",
        ] {
            set_mtime(&root.join(file), past);
        }
        git(root, &["update-index", "-q", "--refresh"]);
        // The symlink's own mtime cannot be set from std: date the index after it instead.
        set_mtime(
            &root.join(".git/index"),
            SystemTime::now() + Duration::from_secs(100),
        );
        dir
    }

    fn fast_verdict(root: &Path) -> bool {
        let repo = Repo::open_isolated(root).expect("open");
        let index = repo.gix().index_or_empty().expect("index");
        super::is_clean(repo.gix(), &index)
    }

    #[test]
    fn a_settled_clean_tree_is_proven_clean_with_ignored_files_around() {
        let dir = settled_repo();
        let root = dir.path();
        assert!(fast_verdict(root));
        write(root, "target/debug/out.bin", "x");
        write(root, "dir/sub/build.log", "x");
        write(root, "notes.log", "x");
        std::fs::create_dir_all(root.join("target/empty")).expect("mkdir");
        assert!(fast_verdict(root));
        // (git may rewrite the index here, so it is asked last.)
        assert_eq!(git(root, &["status", "--porcelain"]), "");
    }

    #[test]
    fn every_kind_of_change_is_left_to_the_full_status() {
        type Change = fn(&Path);
        let cases: &[(&str, Change)] = &[
            ("modified", |r| write(r, "dir/b.txt", "changed\n")),
            ("deleted", |r| {
                std::fs::remove_file(r.join("dir/sub/c.txt")).expect("rm")
            }),
            ("untracked at the root", |r| write(r, "new.txt", "x")),
            ("untracked in a tracked dir", |r| {
                write(r, "dir/sub/new.txt", "x")
            }),
            ("untracked dir", |r| write(r, "fresh/deep/new.txt", "x")),
            ("untracked symlink", |r| {
                std::os::unix::fs::symlink("nowhere", r.join("dangling")).expect("ln")
            }),
            (
                "empty untracked dir (clean for git, not proven here)",
                |r| std::fs::create_dir_all(r.join("empty/deeper")).expect("mkdir"),
            ),
            ("executable bit", |r| {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(r.join("a.txt"), std::fs::Permissions::from_mode(0o755))
                    .expect("chmod")
            }),
            ("file replaced by a symlink", |r| {
                std::fs::remove_file(r.join("dir.txt")).expect("rm");
                std::os::unix::fs::symlink("a.txt", r.join("dir.txt")).expect("ln")
            }),
            ("symlink replaced by a file", |r| {
                std::fs::remove_file(r.join("link")).expect("rm");
                write(r, "link", "a.txt")
            }),
            ("tracked dir moved behind a symlink", |r| {
                std::fs::rename(r.join("dir"), r.join("moved")).expect("mv");
                std::os::unix::fs::symlink("moved", r.join("dir")).expect("ln")
            }),
            ("tracked dir replaced by a file", |r| {
                std::fs::remove_dir_all(r.join("dir/sub")).expect("rm");
                write(r, "dir/sub", "x")
            }),
            ("nested repository in a tracked dir", |r| {
                git(&r.join("dir"), &["init", "-q", "inner"]);
            }),
            ("file replaced by a dir", |r| {
                std::fs::remove_file(r.join("a.txt")).expect("rm");
                write(r, "a.txt/inside", "x")
            }),
        ];
        for (what, change) in cases {
            let dir = settled_repo();
            change(dir.path());
            assert!(!fast_verdict(dir.path()), "{what}");
        }
    }

    #[test]
    fn a_gitignore_only_in_the_index_still_ignores() {
        let dir = settled_repo();
        let root = dir.path();
        git(root, &["update-index", "--skip-worktree", ".gitignore"]);
        std::fs::remove_file(root.join(".gitignore")).expect("rm");
        write(root, "target/out.bin", "x");
        set_mtime(
            &root.join(".git/index"),
            SystemTime::now() + Duration::from_secs(100),
        );
        assert!(fast_verdict(root));
        assert_eq!(git(root, &["status", "--porcelain"]), "");
    }

    #[test]
    fn entries_status_skips_are_skipped_here_too() {
        let dir = settled_repo();
        let root = dir.path();
        git(root, &["update-index", "--skip-worktree", "dir/sub/c.txt"]);
        std::fs::remove_file(root.join("dir/sub/c.txt")).expect("rm");
        git(root, &["update-index", "--assume-unchanged", "dir-x/y.txt"]);
        write(root, "dir-x/y.txt", "changed, but assumed unchanged\n");
        set_mtime(
            &root.join(".git/index"),
            SystemTime::now() + Duration::from_secs(100),
        );
        assert!(fast_verdict(root));
        assert_eq!(git(root, &["status", "--porcelain"]), "");
    }

    #[test]
    fn racily_clean_entries_are_left_to_the_full_status() {
        let dir = settled_repo();
        let root = dir.path();
        // Same size, same second as the index: only reading the file can tell.
        set_mtime(
            &root.join(".git/index"),
            SystemTime::now() - Duration::from_secs(200),
        );
        assert!(!fast_verdict(root));
    }

    #[test]
    fn the_first_dirty_path_is_still_named() {
        let dir = settled_repo();
        let root = dir.path();
        write(root, "dir/sub/new.txt", "x");
        let repo = Repo::open_isolated(root).expect("open");
        let dirty = crate::worktree::first_dirty(&repo).expect("check");
        assert_eq!(
            dirty,
            Some(crate::worktree::Dirty {
                path: "dir/sub/new.txt".into(),
                what: "untracked"
            })
        );
    }

    /// Random tracked trees with random edits, for the property below.
    mod random {
        use super::*;
        use proptest::prelude::*;

        /// Directories and names chosen so that paths sort in git's tricky orders (`d.txt`
        /// between `d` and `d/`, `d-x/` before `d/`) and files share directories.
        const DIRS: [&str; 4] = ["", "d/", "d/e/", "d-x/"];
        const NAMES: [&str; 4] = ["a.txt", "d.txt", "c", "Z"];
        const CONTENTS: [&str; 3] = ["one\n", "two\n", "three lines\nof\ntext\n"];

        #[derive(Debug, Clone)]
        pub(super) enum Edit {
            /// Rewrites a tracked file (maybe with the content it had).
            Rewrite(usize, usize),
            Delete(usize),
            ToggleExecutable(usize),
            ReplaceBySymlink(usize),
            Untracked(usize, usize),
            /// A file the `.gitignore` ignores.
            Ignored(usize),
            EmptyDir(usize),
        }

        pub(super) fn files() -> impl Strategy<Value = Vec<(String, usize)>> {
            proptest::collection::btree_map(
                (0..DIRS.len(), 0..NAMES.len())
                    .prop_map(|(d, n)| format!("{}{}", DIRS[d], NAMES[n])),
                0..CONTENTS.len(),
                1..8,
            )
            .prop_map(|m| m.into_iter().collect())
        }

        pub(super) fn edits() -> impl Strategy<Value = Vec<Edit>> {
            let edit = prop_oneof![
                (0usize..8, 0..CONTENTS.len()).prop_map(|(i, c)| Edit::Rewrite(i, c)),
                (0usize..8).prop_map(Edit::Delete),
                (0usize..8).prop_map(Edit::ToggleExecutable),
                (0usize..8).prop_map(Edit::ReplaceBySymlink),
                (0..DIRS.len(), 0..2usize).prop_map(|(d, n)| Edit::Untracked(d, n)),
                (0..DIRS.len()).prop_map(Edit::Ignored),
                (0..DIRS.len()).prop_map(Edit::EmptyDir),
            ];
            proptest::collection::vec(edit, 0..3)
        }

        /// `files` committed and settled (see `settled_repo`).
        pub(super) fn repo(files: &[(String, usize)]) -> tempfile::TempDir {
            let dir = tempfile::tempdir().expect("tempdir");
            let root = dir.path();
            git(root, &["init", "-q", "-b", "main"]);
            write(root, ".gitignore", "*.log\nbuild/\n");
            for (path, content) in files {
                write(root, path, CONTENTS[*content]);
            }
            git(root, &["add", "-A"]);
            git(root, &["commit", "-q", "-m", "base"]);
            let past = SystemTime::now() - Duration::from_secs(100);
            set_mtime(&root.join(".gitignore"), past);
            for (path, _) in files {
                set_mtime(&root.join(path), past);
            }
            git(root, &["update-index", "-q", "--refresh"]);
            set_mtime(
                &root.join(".git/index"),
                SystemTime::now() + Duration::from_secs(100),
            );
            dir
        }

        pub(super) fn apply(root: &Path, files: &[(String, usize)], edit: &Edit) {
            use std::os::unix::fs::PermissionsExt as _;
            let file = |i: usize| root.join(&files[i % files.len()].0);
            // An earlier edit may have removed or replaced the file: then this one is moot.
            let is_file = |i: usize| {
                std::fs::symlink_metadata(file(i)).is_ok_and(|m| m.file_type().is_file())
            };
            match *edit {
                Edit::Rewrite(i, c) => {
                    if is_file(i) {
                        std::fs::write(file(i), CONTENTS[c]).expect("rewrite");
                    }
                }
                Edit::Delete(i) => {
                    if is_file(i) {
                        std::fs::remove_file(file(i)).expect("rm");
                    }
                }
                Edit::ToggleExecutable(i) => {
                    if is_file(i) {
                        let mode = std::fs::metadata(file(i))
                            .expect("stat")
                            .permissions()
                            .mode();
                        std::fs::set_permissions(
                            file(i),
                            std::fs::Permissions::from_mode(mode ^ 0o111),
                        )
                        .expect("chmod");
                    }
                }
                Edit::ReplaceBySymlink(i) => {
                    if is_file(i) {
                        std::fs::remove_file(file(i)).expect("rm");
                        std::os::unix::fs::symlink("elsewhere", file(i)).expect("ln");
                    }
                }
                Edit::Untracked(d, n) => {
                    write(root, &format!("{}new-{n}.txt", DIRS[d]), "new\n");
                }
                Edit::Ignored(d) => write(root, &format!("{}out.log", DIRS[d]), "log\n"),
                Edit::EmptyDir(d) => {
                    std::fs::create_dir_all(root.join(format!("{}empty", DIRS[d]))).expect("mkdir");
                }
            }
        }
    }

    proptest::proptest! {
        // Each case builds a repository with git: a few dozen keep the run to seconds.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]

        /// The fast path is sound: whatever the tree and its edits, when it proves the tree
        /// clean, gix's full status (the slow path) and `git status` find nothing either; and
        /// a settled tree nobody touched is proven clean.
        #[test]
        fn proven_clean_means_gix_and_git_see_no_change(
            files in random::files(),
            edits in random::edits(),
        ) {
            let dir = random::repo(&files);
            let root = dir.path();
            for edit in &edits {
                random::apply(root, &files, edit);
            }
            let repo = Repo::open_isolated(root).expect("open");
            let index = repo.gix().index_or_empty().expect("index");
            let fast = super::is_clean(repo.gix(), &index);
            let slow = crate::worktree::first_unstaged(repo.gix(), index).expect("status");
            // (git may rewrite the index here, so it is asked last.)
            let porcelain = git(root, &["status", "--porcelain", "--untracked-files=all"]);
            if fast {
                proptest::prop_assert_eq!(slow, None, "{:?}", edits);
                proptest::prop_assert_eq!(porcelain, "", "{:?}", edits);
            }
            if edits.is_empty() {
                proptest::prop_assert!(fast, "an untouched settled tree is proven clean");
            }
        }
    }
}
