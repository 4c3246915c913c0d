//! The one directory an ACP agent may read through git pair (`fs/read_text_file`): the
//! reviewed snapshot. A path is resolved (symbolic links followed) and must still lie inside
//! the snapshot; only regular UTF-8 files up to a size are read, and writing is never allowed.
//! Pure over the file system: no protocol here.

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Why a read was refused; its words go back to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The path (as resolved) is not inside the reviewed snapshot.
    Outside { path: String },
    /// Nothing readable is there.
    NotFound { path: String },
    /// It is not a regular file (a directory, a device, a socket).
    NotAFile { path: String },
    /// Larger than the bound.
    TooLarge {
        path: String,
        bytes: u64,
        limit: u64,
    },
    /// Not UTF-8 text.
    NotText { path: String },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Outside { path } => write!(
                f,
                "refused: {path} is outside the reviewed snapshot (this client reads nothing else)"
            ),
            Refusal::NotFound { path } => {
                write!(f, "no such file in the reviewed snapshot: {path}")
            }
            Refusal::NotAFile { path } => write!(f, "not a regular file: {path}"),
            Refusal::TooLarge { path, bytes, limit } => {
                write!(
                    f,
                    "refused: {path} is {bytes} bytes, over the {limit}-byte limit"
                )
            }
            Refusal::NotText { path } => write!(f, "refused: {path} is not UTF-8 text"),
        }
    }
}

/// The reviewed snapshot, as the agent may read it.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// The snapshot directory, resolved.
    root: PathBuf,
    /// The largest file read whole.
    max_file_bytes: u64,
}

impl Sandbox {
    /// The sandbox of directory `root` (resolved now); `None` when it cannot be resolved.
    pub fn new(root: &Path, max_file_bytes: u64) -> Option<Sandbox> {
        Some(Sandbox {
            root: std::fs::canonicalize(root).ok()?,
            max_file_bytes,
        })
    }

    /// The snapshot directory, resolved: the agent's working directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The text of `path` (absolute, or relative to the snapshot), from line `line` (1-based)
    /// for at most `limit` lines when given, or why not.
    pub fn read(
        &self,
        path: &Path,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, Refusal> {
        let shown = path.display().to_string();
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        // Resolving follows every symbolic link; what it names must still be inside. A path
        // that does not resolve is refused as outside when its lexical form already leaves.
        let resolved = match std::fs::canonicalize(&joined) {
            Ok(resolved) => resolved,
            Err(_) if !lexically_inside(&joined, &self.root) => {
                return Err(Refusal::Outside { path: shown });
            }
            Err(_) => return Err(Refusal::NotFound { path: shown }),
        };
        if !resolved.starts_with(&self.root) {
            return Err(Refusal::Outside { path: shown });
        }
        let file = open_no_follow(&resolved).map_err(|_| Refusal::NotFound {
            path: shown.clone(),
        })?;
        // The file opened must be the one checked: a link swapped in meanwhile is refused.
        if let Some(opened) = opened_path(&file)
            && !opened.starts_with(&self.root)
        {
            return Err(Refusal::Outside { path: shown });
        }
        let meta = file.metadata().map_err(|_| Refusal::NotFound {
            path: shown.clone(),
        })?;
        if !meta.is_file() {
            return Err(Refusal::NotAFile { path: shown });
        }
        if meta.len() > self.max_file_bytes {
            return Err(Refusal::TooLarge {
                path: shown,
                bytes: meta.len(),
                limit: self.max_file_bytes,
            });
        }
        let mut bytes = Vec::new();
        // Bounded even if the file grows after the check.
        file.take(self.max_file_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| Refusal::NotFound {
                path: shown.clone(),
            })?;
        if bytes.len() as u64 > self.max_file_bytes {
            return Err(Refusal::TooLarge {
                path: shown,
                bytes: bytes.len() as u64,
                limit: self.max_file_bytes,
            });
        }
        let text = String::from_utf8(bytes).map_err(|_| Refusal::NotText { path: shown })?;
        Ok(slice_lines(&text, line, limit))
    }
}

/// Whether `path`, read without touching the file system, stays under `root` (`..` taken
/// as leaving a component).
fn lexically_inside(path: &Path, root: &Path) -> bool {
    use std::path::Component;
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => parts.clear(),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(p) => parts.push(p),
        }
    }
    let normal: PathBuf = std::iter::once(std::ffi::OsStr::new("/"))
        .chain(parts)
        .collect();
    normal.starts_with(root)
}

fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Where an open file lies, as the kernel says (Linux); `None` elsewhere.
fn opened_path(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd as _;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

/// Lines `line..line+limit` of `text` (1-based; the whole text without either).
fn slice_lines(text: &str, line: Option<u32>, limit: Option<u32>) -> String {
    if line.is_none() && limit.is_none() {
        return text.to_owned();
    }
    let skip = line.map_or(0, |l| l.saturating_sub(1) as usize);
    let take = limit.map_or(usize::MAX, |l| l as usize);
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn snapshot() -> (tempfile::TempDir, tempfile::TempDir, Sandbox) {
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret.env"), "TOKEN=x\n").expect("write");
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir(root.join("src")).expect("mkdir");
        std::fs::write(root.join("src/lib.rs"), "one\ntwo\nthree\n").expect("write");
        std::fs::write(root.join("big.txt"), vec![b'a'; 2000]).expect("write");
        std::fs::write(root.join("bin.dat"), [0xff, 0xfe, 0]).expect("write");
        symlink(outside.path().join("secret.env"), root.join("escape")).expect("symlink");
        symlink(outside.path(), root.join("out")).expect("symlink");
        symlink(root.join("src/lib.rs"), root.join("inner")).expect("symlink");
        let sandbox = Sandbox::new(root, 1000).expect("sandbox");
        (dir, outside, sandbox)
    }

    #[test]
    fn files_inside_are_read_and_sliced() {
        let (dir, _outside, sandbox) = snapshot();
        let abs = dir.path().join("src/lib.rs");
        assert_eq!(
            sandbox.read(&abs, None, None).as_deref(),
            Ok("one\ntwo\nthree\n")
        );
        assert_eq!(
            sandbox
                .read(Path::new("src/lib.rs"), Some(2), Some(1))
                .as_deref(),
            Ok("two\n")
        );
        assert_eq!(sandbox.read(&abs, Some(3), None).as_deref(), Ok("three\n"));
        assert_eq!(sandbox.read(&abs, Some(9), None).as_deref(), Ok(""));
        assert_eq!(sandbox.read(&abs, None, Some(0)).as_deref(), Ok(""));
        // A link that stays inside is fine.
        assert_eq!(
            sandbox
                .read(&dir.path().join("inner"), None, Some(1))
                .as_deref(),
            Ok("one\n")
        );
    }

    #[test]
    fn escapes_are_refused() {
        let (dir, outside, sandbox) = snapshot();
        let root = dir.path();
        let refused = |p: PathBuf| {
            assert!(
                matches!(sandbox.read(&p, None, None), Err(Refusal::Outside { .. })),
                "{} must be refused as outside: {:?}",
                p.display(),
                sandbox.read(&p, None, None)
            );
        };
        refused(outside.path().join("secret.env"));
        refused(root.join("escape"));
        refused(root.join("out/secret.env"));
        refused(
            root.join("../")
                .join(outside.path().file_name().expect("name"))
                .join("secret.env"),
        );
        refused(PathBuf::from("../../../../etc/passwd"));
        refused(PathBuf::from("/etc/passwd"));
        refused(root.join("src/../../x"));
    }

    #[test]
    fn sizes_kinds_and_text_are_checked() {
        let (dir, _outside, sandbox) = snapshot();
        let root = dir.path();
        assert!(matches!(
            sandbox.read(&root.join("big.txt"), None, None),
            Err(Refusal::TooLarge {
                bytes: 2000,
                limit: 1000,
                ..
            })
        ));
        assert!(matches!(
            sandbox.read(&root.join("bin.dat"), None, None),
            Err(Refusal::NotText { .. })
        ));
        assert!(matches!(
            sandbox.read(&root.join("src"), None, None),
            Err(Refusal::NotAFile { .. })
        ));
        assert!(matches!(
            sandbox.read(&root.join("missing.rs"), None, None),
            Err(Refusal::NotFound { .. })
        ));
        let words = Refusal::Outside {
            path: "/etc/passwd".into(),
        }
        .to_string();
        assert!(words.contains("outside the reviewed snapshot"), "{words}");
    }
}
