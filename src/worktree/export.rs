//! Lays a stored tree down in a fresh directory, read through gix: the reviewed snapshot a
//! reviewer runs in, so it sees what it reviews and nothing of the live work tree (no ignored
//! file such as `.env`, no `.git`). Either a temporary directory, or one at a path that stays
//! the same for a whole run (a vendor whose sessions belong to the directory they ran in),
//! laid down afresh each time. Regular and executable files only: symbolic links and
//! submodules are left out (nothing there can point a reader elsewhere), and an entry whose
//! name could leave the directory (`..`, `.git`, a `/`) refuses the whole tree.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::objs::tree::EntryKind;

use crate::store::{Error, Repo};

/// Writes `tree` into a new temporary directory (removed when the returned value is dropped).
pub fn export(repo: &Repo, tree: ObjectId) -> Result<tempfile::TempDir, Error> {
    let dir = tempfile::Builder::new()
        .prefix("git-pair-snapshot-")
        .tempdir()
        .map_err(|source| {
            io(
                "create a temporary directory for",
                Path::new("the snapshot"),
                source,
            )
        })?;
    lay_down(repo, tree, dir.path())?;
    Ok(dir)
}

/// A snapshot laid down at a fixed path; the directory is removed when this is dropped.
#[derive(Debug)]
pub struct FixedDir {
    path: PathBuf,
}

impl FixedDir {
    /// Where the snapshot lies.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FixedDir {
    fn drop(&mut self) {
        remove(&self.path);
    }
}

/// Writes `tree` into the directory `path`, replacing whatever was there (never following a
/// symbolic link found at `path`): created with mode 0700 and refused if something else
/// appears there meanwhile. The parents are created (0700) when missing.
pub fn export_at(repo: &Repo, tree: ObjectId, path: &Path) -> Result<FixedDir, Error> {
    use std::os::unix::fs::DirBuilderExt as _;
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|e| io("create", parent, e))?;
    }
    remove(path);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(path)
        .map_err(|e| io("create", path, e))?;
    // From here on the directory is ours: a failure below removes it.
    let dir = FixedDir {
        path: path.to_path_buf(),
    };
    lay_down(repo, tree, path)?;
    Ok(dir)
}

/// Takes `paths` (relative to `root`, `/`-separated) out of a laid-down snapshot: the
/// project configuration a reviewer's CLI would otherwise load from its working directory.
/// A path with an empty, `.` or `..` part is skipped (the surfaces document refuses those).
pub fn omit<'p>(root: &Path, paths: impl IntoIterator<Item = &'p str>) {
    for path in paths {
        let plain = path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
        if plain {
            // The tree holds no symbolic links (lay_down leaves them out), so nothing on the
            // way can lead outside `root`.
            remove(&root.join(path));
        }
    }
}

/// Removes whatever is at `path`: a directory with everything in it, or the file or symbolic
/// link itself (never what a link points at). Nothing there is fine.
pub fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => {
            // `remove_dir_all` does not follow symbolic links inside the tree either.
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Writes `tree` into the existing empty directory `root`.
fn lay_down(repo: &Repo, tree: ObjectId, root: &Path) -> Result<(), Error> {
    let mut pending: Vec<(ObjectId, PathBuf)> = vec![(tree, root.to_path_buf())];
    while let Some((id, at)) = pending.pop() {
        let tree = repo
            .gix()
            .find_tree(id)
            .map_err(Error::git("read a tree of the snapshot"))?;
        let decoded = tree
            .decode()
            .map_err(Error::git("decode a tree of the snapshot"))?;
        for entry in &decoded.entries {
            let name = entry.filename.to_vec();
            if !safe_name(&name) {
                return Err(Error::Io {
                    action: "lay down the snapshot at",
                    path: at.display().to_string(),
                    source: std::io::Error::other(format!(
                        "the tree holds an unsafe entry name {:?}",
                        String::from_utf8_lossy(&name)
                    )),
                });
            }
            let Ok(name) = std::str::from_utf8(&name) else {
                // A name that is not UTF-8 is left out rather than mangled.
                continue;
            };
            let path = at.join(name);
            let mode = match entry.mode.kind() {
                EntryKind::Tree => {
                    std::fs::create_dir(&path).map_err(|e| io("create", &path, e))?;
                    pending.push((entry.oid.to_owned(), path));
                    continue;
                }
                EntryKind::Blob => 0o644,
                EntryKind::BlobExecutable => 0o755,
                EntryKind::Link | EntryKind::Commit => continue,
            };
            let mut blob = repo
                .gix()
                .find_blob(entry.oid)
                .map_err(Error::git("read a blob of the snapshot"))?;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|e| io("create", &path, e))?;
            file.write_all(&blob.take_data())
                .map_err(|e| io("write", &path, e))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                .map_err(|e| io("set the mode of", &path, e))?;
        }
    }
    Ok(())
}

/// Whether a tree entry's name stays inside its directory and is not git's own.
fn safe_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name != b"."
        && name != b".."
        && !name.eq_ignore_ascii_case(b".git")
        && !name.contains(&b'/')
        && !name.contains(&0)
}

fn io(action: &'static str, path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::{remove, safe_name};

    #[test]
    fn removing_a_link_never_touches_what_it_points_at() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target");
        std::fs::create_dir(&target).expect("mkdir");
        std::fs::write(target.join("keep"), "x").expect("write");
        let link = dir.path().join("reviewers-run");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        remove(&link);
        assert!(
            std::fs::symlink_metadata(&link).is_err(),
            "the link is gone"
        );
        assert!(target.join("keep").exists(), "its target is untouched");
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("a/b")).expect("mkdir");
        std::os::unix::fs::symlink(&target, tree.join("a/out")).expect("symlink");
        remove(&tree);
        assert!(!tree.exists() && target.join("keep").exists());
        remove(&dir.path().join("absent"));
    }

    #[test]
    fn names_that_could_leave_the_directory_are_unsafe() {
        for name in [&b""[..], b".", b"..", b".git", b".GIT", b"a/b", b"a\0b"] {
            assert!(!safe_name(name), "{name:?}");
        }
        for name in [&b"a"[..], b".env", b"..a", b".gitignore"] {
            assert!(safe_name(name), "{name:?}");
        }
    }
}
