//! Writing files safely: through a temporary file and a rename, so a reader sees the old
//! content or the new, never a torn one, and a killed writer leaves no litter in the work tree.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// What failed: the action, the path, and the operating system's error.
pub type Failure = (&'static str, PathBuf, std::io::Error);

fn fail(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Failure + use<> {
    let path = path.to_path_buf();
    move |e| (action, path, e)
}

/// Writes `bytes` to `path` through a temporary file and a rename, so readers see the old or
/// the new content, never a torn one. The temporary file is made in `scratch` (under `.git`,
/// so a killed writer never leaves litter in the work tree), or beside `path` when the two
/// are on different file systems.
pub fn write_atomically_via(scratch: &Path, path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(fail("create directory", dir))?;
    let _ = std::fs::create_dir_all(scratch);
    let temp_in = |at: &Path| -> Result<tempfile::NamedTempFile, Failure> {
        let mut file = tempfile::Builder::new()
            .prefix(".git-pair-")
            .suffix(".tmp")
            .tempfile_in(at)
            .map_err(fail("create a temporary file in", at))?;
        file.write_all(bytes).map_err(fail("write", file.path()))?;
        Ok(file)
    };
    let file = temp_in(scratch).or_else(|_| temp_in(dir))?;
    // Temporary files are private (0600); what git pair renders is an ordinary file.
    set_mode_0644(file.path());
    match file.persist(path) {
        Ok(_) => Ok(()),
        Err(e) if e.error.raw_os_error() == Some(18) => {
            // EXDEV: scratch is on another file system; write beside the target instead.
            let file = temp_in(dir)?;
            set_mode_0644(file.path());
            file.persist(path)
                .map(|_| ())
                .map_err(|e| fail("replace", path)(e.error))
        }
        Err(e) => Err(fail("replace", path)(e.error)),
    }
}

fn set_mode_0644(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644));
}
