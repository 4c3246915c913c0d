//! Writing files safely, the one way this tool does it: through a temporary file and a rename,
//! so a reader sees the old content or the new, never a torn one, and a killed writer leaves
//! no litter where people look. Every caller states where the temporary file goes, the mode
//! the file ends with and whether the bytes must be durable before they become visible.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// What failed: the action, the path, and the operating system's error.
pub type Failure = (&'static str, PathBuf, std::io::Error);

fn fail(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Failure + use<> {
    let path = path.to_path_buf();
    move |e| (action, path, e)
}

/// The mode a file written by [`AtomicWrite`] ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Created with these bits, less the process umask, as `open(2)` would create the file
    /// (`0o666`: an ordinary file; `0o600`: private to its owner).
    Umasked(u32),
    /// Exactly these bits, whatever the umask (a hook's `0o755`, a mode kept from the file
    /// being replaced).
    Exactly(u32),
}

/// One atomic write: where the temporary file is made, the mode the file ends with, whether
/// the bytes reach the disk before the rename, and how temporary files are named.
#[derive(Debug, Clone, Copy)]
pub struct AtomicWrite<'a> {
    mode: Mode,
    scratch: Option<&'a Path>,
    durable: bool,
    prefix: &'a str,
    suffix: &'a str,
}

impl<'a> AtomicWrite<'a> {
    /// A write whose temporary file sits beside the target (same directory, so the rename
    /// is atomic), named `.git-pair-*.tmp`, ending with `mode`.
    pub fn new(mode: Mode) -> Self {
        AtomicWrite {
            mode,
            scratch: None,
            durable: false,
            prefix: ".git-pair-",
            suffix: ".tmp",
        }
    }

    /// Makes the temporary file in `scratch` (under `.git`, so a killed writer never leaves
    /// litter in the work tree), or beside the target when the two are on different file
    /// systems or `scratch` cannot be used.
    pub fn via(self, scratch: &'a Path) -> Self {
        AtomicWrite {
            scratch: Some(scratch),
            ..self
        }
    }

    /// Flushes the bytes to the disk before the rename makes them visible (for a file that
    /// something durable, such as a ref, may point into right after).
    pub fn durable(self) -> Self {
        AtomicWrite {
            durable: true,
            ..self
        }
    }

    /// Names temporary files `<prefix>XXXXXX<suffix>` (git's `tmp_pack_` for packs, which
    /// `git gc` knows how to clean).
    pub fn named(self, prefix: &'a str, suffix: &'a str) -> Self {
        AtomicWrite {
            prefix,
            suffix,
            ..self
        }
    }

    /// Replaces `path` with `bytes` (its directory created when missing).
    pub fn write(&self, path: &Path, bytes: &[u8]) -> Result<(), Failure> {
        self.write_with(path, &|out| out.write_all(bytes))
    }

    /// Replaces `path` with what `fill` writes (buffered; called again if the first
    /// temporary file cannot be renamed into place), so a large file need not be built in
    /// memory first.
    pub fn write_with(
        &self,
        path: &Path,
        fill: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<(), Failure> {
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(dir).map_err(fail("create directory", dir))?;
        let Some(scratch) = self.scratch.filter(|s| *s != dir) else {
            return self
                .temp_in(dir, fill)?
                .persist(path)
                .map(|_| ())
                .map_err(|e| fail("replace", path)(e.error));
        };
        let _ = std::fs::create_dir_all(scratch);
        let file = self
            .temp_in(scratch, fill)
            .or_else(|_| self.temp_in(dir, fill))?;
        match file.persist(path) {
            Ok(_) => Ok(()),
            Err(e) if e.error.raw_os_error() == Some(EXDEV) => {
                // Scratch is on another file system: write beside the target instead.
                self.temp_in(dir, fill)?
                    .persist(path)
                    .map(|_| ())
                    .map_err(|e| fail("replace", path)(e.error))
            }
            Err(e) => Err(fail("replace", path)(e.error)),
        }
    }

    /// A temporary file in `dir` holding what `fill` writes, with the final mode already set.
    fn temp_in(
        &self,
        dir: &Path,
        fill: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<tempfile::NamedTempFile, Failure> {
        use std::os::unix::fs::PermissionsExt as _;
        let mut builder = tempfile::Builder::new();
        builder.prefix(self.prefix).suffix(self.suffix);
        if let Mode::Umasked(bits) = self.mode {
            builder.permissions(std::fs::Permissions::from_mode(bits));
        }
        let file = builder
            .tempfile_in(dir)
            .map_err(fail("create a temporary file in", dir))?;
        let mut out = std::io::BufWriter::with_capacity(64 << 10, file.as_file());
        fill(&mut out)
            .and_then(|()| out.flush())
            .map_err(fail("write", file.path()))?;
        drop(out);
        if let Mode::Exactly(bits) = self.mode {
            // Temporary files are created private (0600); the file keeps the mode it needs.
            file.as_file()
                .set_permissions(std::fs::Permissions::from_mode(bits))
                .map_err(fail("set the mode of", file.path()))?;
        }
        if self.durable {
            file.as_file()
                .sync_all()
                .map_err(fail("write", file.path()))?;
        }
        Ok(file)
    }
}

/// `EXDEV`: a rename across file systems.
const EXDEV: i32 = 18;

/// Writes `bytes` to `path` (mode 0644) through a temporary file in `scratch` and a rename:
/// the files git pair renders (views, caches under `.git/pair`).
pub fn write_atomically_via(scratch: &Path, path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    write_atomically_with(scratch, path, &|out| out.write_all(bytes))
}

/// As [`write_atomically_via`], with the bytes written by `fill` (see [`AtomicWrite::write_with`]).
pub fn write_atomically_with(
    scratch: &Path,
    path: &Path,
    fill: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    AtomicWrite::new(Mode::Exactly(0o644))
        .via(scratch)
        .write_with(path, fill)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).expect("stat").permissions().mode() & 0o7777
    }

    #[test]
    fn writes_replace_whole_files_with_the_mode_asked_and_leave_no_temporary_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch = dir.path().join("scratch");
        let path = dir.path().join("sub/file");
        AtomicWrite::new(Mode::Exactly(0o755))
            .write(&path, b"one")
            .expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), b"one");
        assert_eq!(mode_of(&path), 0o755);
        write_atomically_via(&scratch, &path, b"two").expect("write via scratch");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
        assert_eq!(mode_of(&path), 0o644);
        AtomicWrite::new(Mode::Umasked(0o600))
            .durable()
            .named("tmp_x_", "")
            .write(&path, b"three")
            .expect("durable write");
        assert_eq!(std::fs::read(&path).expect("read"), b"three");
        assert_eq!(mode_of(&path) & 0o077, 0, "private stays private");
        let litter = |d: &Path| {
            std::fs::read_dir(d)
                .expect("list")
                .filter_map(Result::ok)
                .filter(|e| e.file_name() != "file")
                .count()
        };
        assert_eq!(litter(&dir.path().join("sub")), 0);
        assert_eq!(litter(&scratch), 0);
    }
}
