//! Which work-tree paths may differ from the index — the candidates a snapshot comparison must
//! read — found as `git status` finds them, but without its output: one `lstat` per tracked
//! file (stat data and racy-git rules as git applies them), and one `readdir` per directory,
//! whose names are matched against the index directory by directory (no per-file index
//! search); ignore rules are consulted only for names the index does not know. The tracked
//! and the untracked halves run on two threads.
//!
//! The result is a superset: a file whose stat data moved but whose content did not is a
//! candidate, and the caller compares content. Nothing is written.

use std::collections::HashMap;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

use gix::bstr::{BStr, BString, ByteSlice};

/// The git modes this scan tells apart (the parent module's, repeated so this module stands
/// alone).
const EXECUTABLE: u32 = 0o100755;
const SYMLINK: u32 = 0o120000;
const GITLINK: u32 = 0o160000;
const TREE: u32 = 0o040000;

/// What `core.*` says about modes, as `git add` reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Modes {
    /// `core.fileMode`: trust the executable bit of files.
    pub file_mode: bool,
    /// `core.symlinks`: the file system has symlinks.
    pub symlinks: bool,
}

/// Every path of the work tree that may differ from `index`: tracked files whose stat data,
/// type or executable bit moved (or that are racily clean, missing, conflicted or
/// intent-to-add), and untracked files that are not ignored (an untracked nested repository
/// as one path). Checked-out submodules are not looked into. Unsorted.
pub(super) fn candidates(
    repo: &gix::Repository,
    index: &gix::index::State,
    workdir: &Path,
    modes: Modes,
) -> Result<Vec<BString>, gix::Error> {
    let untracked_repo = repo.clone().into_sync();
    std::thread::scope(|scope| {
        let untracked = scope.spawn(|| {
            let repo = untracked_repo.to_thread_local();
            let mut out = Vec::new();
            Untracked::new(&repo, index, workdir)?.walk(&mut out)?;
            Ok::<_, gix::Error>(out)
        });
        let mut out = tracked(repo, index, workdir, modes)?;
        let untracked = untracked
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        out.extend(untracked);
        Ok(out)
    })
}

/// Tracked entries whose work-tree file may have changed since the index recorded it.
///
/// Each file is `lstat`ed by its name relative to its directory, opened once (`fstatat`):
/// the kernel then walks one path component per file instead of all of them, which is most
/// of what a status costs on a big tree.
fn tracked(
    repo: &gix::Repository,
    index: &gix::index::State,
    workdir: &Path,
    settings: Modes,
) -> Result<Vec<BString>, gix::Error> {
    use gix::index::entry::Flags;

    let stat_options = repo.stat_options()?;
    let timestamp = index.timestamp();
    let mut dir: Option<(&[u8], Option<rustix::fd::OwnedFd>)> = None;
    let mut out = Vec::new();
    for entry in index.entries() {
        // As `git status` (and gix's status, which the snapshot uses): entries the index
        // vouches for are not looked at.
        if entry.flags.intersects(
            Flags::UPTODATE | Flags::SKIP_WORKTREE | Flags::ASSUME_VALID | Flags::FSMONITOR_VALID,
        ) {
            continue;
        }
        let path = entry.path(index);
        if entry.stage_raw() != 0 || entry.flags.contains(Flags::INTENT_TO_ADD) {
            out.push(path.to_owned());
            continue;
        }
        let mode = entry.mode.bits();
        if mode == GITLINK || path.ends_with(b"/") {
            // Submodules are compared by their HEAD elsewhere; a sparse directory entry has
            // no file.
            continue;
        }
        let (parent, name): (&[u8], &[u8]) = match path.rfind_byte(b'/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (b"", path.as_bytes()),
        };
        if dir.as_ref().is_none_or(|(open, _)| *open != parent) {
            let full = if parent.is_empty() {
                workdir.to_path_buf()
            } else {
                workdir.join(std::ffi::OsStr::from_bytes(parent))
            };
            let fd = rustix::fs::open(
                &full,
                rustix::fs::OFlags::RDONLY
                    | rustix::fs::OFlags::DIRECTORY
                    | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .ok();
            dir = Some((parent, fd));
        }
        let stat = dir.as_ref().and_then(|(_, fd)| fd.as_ref()).and_then(|fd| {
            rustix::fs::statat(fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()
        });
        let Some(stat) = stat else {
            out.push(path.to_owned());
            continue;
        };
        let file_type = rustix::fs::FileType::from_raw_mode(stat.st_mode);
        let is_file = file_type == rustix::fs::FileType::RegularFile;
        let is_symlink = file_type == rustix::fs::FileType::Symlink;
        let same_type = if mode == SYMLINK {
            is_symlink || (!settings.symlinks && is_file)
        } else {
            is_file
        };
        let is_executable = is_file && stat.st_mode & 0o100 != 0;
        let same_exec =
            !settings.file_mode || mode == SYMLINK || is_executable == (mode == EXECUTABLE);
        let same_stat = entry.stat.matches(&index_stat(&stat), stat_options);
        if !(same_type && same_exec && same_stat) || entry.stat.is_racy(timestamp, stat_options) {
            out.push(path.to_owned());
        }
    }
    Ok(out)
}

/// `stat` as the index records it, truncated as git truncates it (and as
/// `gix::index::entry::Stat::from_fs` does).
#[allow(
    clippy::unnecessary_cast,
    reason = "the field types of struct stat differ between platforms"
)]
fn index_stat(stat: &rustix::fs::Stat) -> gix::index::entry::Stat {
    // Truncation to 32 bits is on purpose: git compares the low bits. A time before 1970 is
    // recorded as 0, as gix records it.
    let time = |secs: i64, nsecs: i64| {
        if secs < 0 {
            gix::index::entry::stat::Time::default()
        } else {
            gix::index::entry::stat::Time {
                secs: secs as u32,
                nsecs: nsecs as u32,
            }
        }
    };
    gix::index::entry::Stat {
        mtime: time(stat.st_mtime as i64, stat.st_mtime_nsec as i64),
        ctime: time(stat.st_ctime as i64, stat.st_ctime_nsec as i64),
        dev: stat.st_dev as u32,
        ino: stat.st_ino as u32,
        uid: stat.st_uid,
        gid: stat.st_gid,
        size: stat.st_size as u32,
    }
}

/// What the index holds under one name of a directory.
#[derive(Debug, Clone)]
enum Known {
    /// A file (or a submodule, or a sparse directory entry) with this mode.
    File(u32),
    /// A directory: the index entries under it.
    Dir(Range<usize>),
}

/// The walk for untracked files.
struct Untracked<'a> {
    index: &'a gix::index::State,
    workdir: &'a Path,
    excludes: gix::AttributeStack<'a>,
}

impl<'a> Untracked<'a> {
    fn new(
        repo: &'a gix::Repository,
        index: &'a gix::index::State,
        workdir: &'a Path,
    ) -> Result<Self, gix::Error> {
        let excludes = repo.excludes(
            index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )?;
        Ok(Untracked {
            index,
            workdir,
            excludes,
        })
    }

    fn walk(&mut self, out: &mut Vec<BString>) -> Result<(), gix::Error> {
        // (directory relative to the work tree, the index entries under it if it is tracked)
        let mut stack: Vec<(BString, Option<Range<usize>>)> =
            vec![(BString::default(), Some(0..self.index.entries().len()))];
        while let Some((dir, range)) = stack.pop() {
            let known = range.map(|range| self.known(dir.as_bstr(), range));
            let full = if dir.is_empty() {
                self.workdir.to_path_buf()
            } else {
                self.workdir.join(std::ffi::OsStr::from_bytes(&dir))
            };
            let Ok(entries) = std::fs::read_dir(&full) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.as_bytes();
                if name == b".git" {
                    continue;
                }
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                let mut child = dir.clone();
                if !child.is_empty() {
                    child.push(b'/');
                }
                child.extend_from_slice(name);
                match known.as_ref().and_then(|k| k.get(name)) {
                    Some(Known::Dir(range)) if is_dir => stack.push((child, Some(range.clone()))),
                    // A tracked file (or submodule) still there: the tracked check covers it.
                    Some(Known::File(_)) if !is_dir => {}
                    Some(Known::File(mode)) if *mode == GITLINK || *mode == TREE => {}
                    _ if is_dir => {
                        if self.excluded(child.as_bstr(), true)? {
                            continue;
                        }
                        let mut dot_git = full.join(std::ffi::OsStr::from_bytes(name));
                        dot_git.push(".git");
                        if std::fs::symlink_metadata(&dot_git).is_ok() {
                            // A nested repository: `git add -A` records it as one entry.
                            out.push(child);
                        } else {
                            stack.push((child, None));
                        }
                    }
                    _ => {
                        if !self.excluded(child.as_bstr(), false)? {
                            out.push(child);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The names the index holds directly under `dir`, from its entries in `range`.
    fn known(&self, dir: &BStr, range: Range<usize>) -> HashMap<&'a [u8], Known> {
        let index = self.index;
        let entries = index.entries();
        let prefix = if dir.is_empty() { 0 } else { dir.len() + 1 };
        let mut known = HashMap::new();
        let mut i = range.start;
        while i < range.end {
            let path: &'a BStr = entries[i].path(index);
            let rest: &'a [u8] = &path[prefix..];
            match rest.find_byte(b'/') {
                Some(slash) if slash + 1 < rest.len() => {
                    let name = &rest[..slash];
                    let mut end = i + 1;
                    while end < range.end
                        && entries[end].path(index)[prefix..]
                            .strip_prefix(name)
                            .is_some_and(|r| r.first() == Some(&b'/'))
                    {
                        end += 1;
                    }
                    known.insert(name, Known::Dir(i..end));
                    i = end;
                }
                Some(slash) => {
                    known.insert(&rest[..slash], Known::File(TREE));
                    i += 1;
                }
                None => {
                    known.insert(rest, Known::File(entries[i].mode.bits()));
                    i += 1;
                }
            }
        }
        known
    }

    fn excluded(&mut self, path: &BStr, is_dir: bool) -> Result<bool, gix::Error> {
        let mode = if is_dir {
            gix::index::entry::Mode::DIR
        } else {
            gix::index::entry::Mode::FILE
        };
        Ok(self.excludes.at_entry(path, Some(mode))?.is_excluded())
    }
}
