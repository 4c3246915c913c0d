//! Every lock the store takes, in one place: git's `<file>.lock` (through `gix::lock`, so
//! `packed-refs.lock` and `config.lock` are created, committed and rolled back exactly as git's
//! own), this tool's kernel writer locks under `.git/pair/locks/`, and clearing the lock files
//! a killed process left behind. Nothing else in the store creates a lock file.

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use super::Error;

/// Why [`acquire`] took no lock.
pub(super) enum NotLocked {
    /// Another process holds `<file>.lock` (still, after the wait asked for).
    Held(Error),
    /// Taking it failed for another reason (permissions, a missing directory).
    Failed(Error),
}

impl NotLocked {
    /// The error, whichever the reason.
    pub(super) fn into_error(self) -> Error {
        match self {
            NotLocked::Held(e) | NotLocked::Failed(e) => e,
        }
    }
}

/// Takes `<resource>.lock`, git's lock for replacing `resource` (created `0666` less the
/// umask, as git creates it), retrying with backoff for up to `wait` while another process
/// holds it. Dropping the lock removes it; [`commit`] renames it over `resource`.
pub(super) fn acquire(resource: &Path, wait: Duration) -> Result<gix::lock::File, NotLocked> {
    gix::lock::File::acquire_to_update_resource(resource, wait.into(), None, 0).map_err(|e| {
        let held = e
            .downcast_any_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::AlreadyExists);
        let error = Error::Io {
            action: "lock",
            path: resource.display().to_string(),
            source: std::io::Error::other(e),
        };
        if held {
            NotLocked::Held(error)
        } else {
            NotLocked::Failed(error)
        }
    })
}

/// Writes `content` into the lock, gives it `mode` (when the replaced file's mode is kept),
/// and renames it over the resource it locks: readers see the old file or the new one.
pub(super) fn commit(
    mut lock: gix::lock::File,
    content: &[u8],
    mode: Option<u32>,
) -> Result<(), Error> {
    lock.write_all(content)
        .and_then(|()| lock.flush())
        .map_err(Error::io("write", lock.lock_path()))?;
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(lock.lock_path(), std::fs::Permissions::from_mode(mode))
            .map_err(Error::io("set the permissions of", lock.lock_path()))?;
    }
    let target = lock.resource_path();
    lock.commit()
        .map_err(|e| Error::io("replace", &target)(e.error))?;
    Ok(())
}

/// Opens the lock file `path` (its directory created) and waits for its exclusive kernel
/// lock, released when the file is closed — also by a killed process, so it never goes stale.
pub(super) fn hold(path: &Path) -> Result<std::fs::File, Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(Error::io("create directory", dir))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(Error::io("open lock file", path))?;
    file.lock().map_err(Error::io("lock", path))?;
    Ok(file)
}

/// Removes every `*.lock` file under `dir` (a namespace whose writers are all gone).
pub(super) fn remove_lock_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => remove_lock_files(&path),
            Ok(_) if path.extension().is_some_and(|e| e == "lock") => {
                let _ = std::fs::remove_file(&path);
            }
            _ => {}
        }
    }
}

/// Removes the lock file `lock` when it is older than `age` (its writer was killed).
pub(super) fn remove_if_older(lock: &Path, age: Duration) {
    let stale = std::fs::metadata(lock)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|elapsed| elapsed > age);
    if stale {
        let _ = std::fs::remove_file(lock);
    }
}
