//! Installs the `pre-commit`, `commit-msg` and `post-commit` shims into the hooks directory git
//! really uses, chaining any hook that was there, and uninstalls them by putting back exactly
//! what was there (bytes and mode, or no file), from a backup kept in a state directory.
//!
//! Pure filesystem: the caller resolves the hooks directory (`core.hooksPath` honoured, so
//! Husky's `.husky` or `.husky/_` work, editing tracked files in place as Husky users expect)
//! and names the backup directory. Nothing here runs git or prints.
//!
//! A shim is a marked block around one line that runs `git-pair hook <name> "$@"` (what
//! `git pair hook …` runs, minus the `git` process in between: a hook's cost is added to every
//! commit) when `git-pair` is on `PATH`. An existing POSIX shell hook gets the block right
//! after its shebang line (ours runs first and ends the script on failure, the user's script
//! goes on after it); any other hook (another interpreter, a binary, a symbolic link, a hook that is
//! not executable and so never ran) is moved aside to `<name>.git-pair-chained` and run by a
//! shell shim after ours, with the same arguments and stdin.

use std::fs;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The first line of the managed block.
pub const BEGIN_MARKER: &str = "# >>> git-pair hook (managed by git pair hooks install) >>>";
/// The last line of the managed block.
pub const END_MARKER: &str = "# <<< git-pair hook <<<";
/// Appended to a hook's file name when it is moved aside to be chained.
pub const CHAINED_SUFFIX: &str = ".git-pair-chained";
/// How to get `git-pair` onto `PATH`, as the shims say when it is missing.
pub const INSTALL_HINT: &str = "cargo install --locked --git <git-pair repository URL> git-pair, or cargo install --locked --path <a git-pair checkout>";

/// The shebang of a hook file this module creates.
const SHEBANG: &str = "#!/bin/sh\n";
/// The mode of a hook file this module creates.
const NEW_FILE_MODE: u32 = 0o755;
/// Interpreters whose scripts take the block in place (the block's line is valid in each).
const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "ksh", "ash"];
/// Schema version of the backup's metadata file.
const BACKUP_VERSION: u32 = 1;

/// What went wrong installing or uninstalling a hook.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} holds a git-pair begin marker without its end marker; remove the partial block by hand"
    )]
    BrokenBlock { path: String },
    #[error("cannot chain the existing {hook} hook: {chained} already exists; move it away first")]
    ChainedExists { hook: &'static str, chained: String },
    #[error(
        "{path} is a symbolic link to a file holding a different git-pair block; change that file instead"
    )]
    SymlinkedBlock { path: String },
    #[error("the hook backup {path} is unusable: {detail}")]
    BadBackup { path: String, detail: String },
}

impl Error {
    fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.display().to_string();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }
}

pub use crate::model::report::hooks::{Chain, Hook, HookReport, Installed, Kept, Uninstalled};

/// Whether a hook's failure fails the git command (post hooks cannot).
fn can_refuse(hook: Hook) -> bool {
    !matches!(hook, Hook::PostCommit)
}

/// Where hooks live and where their backups go.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The directory git runs hooks from (`core.hooksPath`, resolved, or `.git/hooks`).
    pub hooks_dir: &'a Path,
    /// A directory owned by git pair, outside the work tree (e.g. `.git/pair/hooks-backup`),
    /// holding what each hook file was before the first install, in one subdirectory per
    /// hooks directory (so a `core.hooksPath` that changed between installs keeps both).
    pub backup_dir: &'a Path,
}

/// How to install.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// `pre-commit` gates the commit on the review (`--gate`), and fails the commit when
    /// `git-pair` is missing instead of letting it through.
    pub gate: bool,
}

/// What `install` did, hook by hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InstallReport {
    pub hooks: Vec<HookReport<Installed>>,
}

/// What `uninstall` did, hook by hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UninstallReport {
    pub hooks: Vec<HookReport<Uninstalled>>,
}

/// Installs the shims for `hooks` into `ctx.hooks_dir`, chaining what is there.
///
/// Idempotent: a second install with the same options writes nothing. With other options
/// only the block is replaced. The first install of a hook saves what was there (bytes and
/// mode, or that nothing was) under `ctx.backup_dir` before touching it.
pub fn install(ctx: &Context, hooks: &[Hook], options: Options) -> Result<InstallReport, Error> {
    fs::create_dir_all(ctx.hooks_dir).map_err(Error::io("create directory", ctx.hooks_dir))?;
    let mut report = Vec::new();
    for &hook in hooks {
        let path = ctx.hooks_dir.join(hook.name());
        let outcome = install_one(ctx, hook, &path, options)?;
        report.push(HookReport {
            hook,
            path,
            outcome,
        });
    }
    Ok(InstallReport { hooks: report })
}

/// Removes the shims for `hooks` from `ctx.hooks_dir` and puts back what was there.
///
/// Exact when the file was not changed outside the block since the install: the original
/// bytes and mode come back (a moved-aside hook is moved back), or the file is deleted when
/// there was none. Otherwise only the block is removed and the change is reported.
pub fn uninstall(ctx: &Context, hooks: &[Hook]) -> Result<UninstallReport, Error> {
    let mut report = Vec::new();
    for &hook in hooks {
        let path = ctx.hooks_dir.join(hook.name());
        let outcome = uninstall_one(ctx, hook, &path)?;
        report.push(HookReport {
            hook,
            path,
            outcome,
        });
    }
    // Best effort: an empty backup directory is litter, a non-empty one is kept.
    let _ = fs::remove_dir(backup_subdir(ctx));
    let _ = fs::remove_dir(ctx.backup_dir);
    Ok(UninstallReport { hooks: report })
}

/// The marked block for `hook`: the begin marker, one line of shell, the end marker.
pub fn block(hook: Hook, options: Options) -> String {
    let name = hook.name();
    let gate = options.gate && hook == Hook::PreCommit;
    let call = if gate {
        format!("git-pair hook {name} --gate \"$@\"")
    } else {
        format!("git-pair hook {name} \"$@\"")
    };
    let on_failure = if can_refuse(hook) { "exit $?" } else { ":" };
    let missing = if gate {
        format!(
            "echo \"git-pair is not on PATH and commits here are gated on review, so this commit is refused. Install it: {INSTALL_HINT}; or bypass deliberately: git commit --no-verify\" >&2; exit 1"
        )
    } else {
        format!(
            "echo \"git-pair is not on PATH, so the git pair {name} hook did nothing. Install it: {INSTALL_HINT}\" >&2"
        )
    };
    format!(
        "{BEGIN_MARKER}\nif command -v git-pair >/dev/null 2>&1; then {call} || {on_failure}; else {missing}; fi\n{END_MARKER}\n"
    )
}

/// The content of a new hook file: a shebang and the block. The vendored `hooks/<name>` files
/// are exactly this, without `--gate`.
pub fn shim(hook: Hook, options: Options) -> String {
    format!("{SHEBANG}{}", block(hook, options))
}

/// The shim that runs ours, then the moved-aside hook with the same arguments and stdin.
fn chaining_shim(hook: Hook, options: Options) -> String {
    format!("{}{}", shim(hook, options), chain_tail(hook))
}

/// The lines after the block in a chaining shim. The `-x` test keeps a hook that was not
/// executable (git skipped it) skipped.
fn chain_tail(hook: Hook) -> String {
    let name = hook.name();
    format!(
        "# The {name} hook that was here before, moved aside by git pair hooks install (git pair hooks uninstall puts it back):\nchained=\"$(dirname \"$0\")/{name}{CHAINED_SUFFIX}\"\nif [ -x \"$chained\" ]; then exec \"$chained\" \"$@\"; fi\n"
    )
}

fn install_one(
    ctx: &Context,
    hook: Hook,
    path: &Path,
    options: Options,
) -> Result<Installed, Error> {
    let wanted = block(hook, options);
    let Some(current) = Current::read(path)? else {
        let content = shim(hook, options);
        save_backup(
            ctx,
            hook,
            Original::Absent,
            Strategy::Fresh,
            content.as_bytes(),
        )?;
        write_atomically(path, content.as_bytes(), NEW_FILE_MODE)?;
        return Ok(Installed::Created);
    };

    if let Some(bytes) = &current.content
        && let Some(span) = find_block(bytes, path)?
    {
        let updated = splice(bytes, span, wanted.as_bytes());
        if updated == *bytes {
            return Ok(Installed::AlreadyInstalled);
        }
        if current.symlink.is_some() {
            return Err(Error::SymlinkedBlock {
                path: path.display().to_string(),
            });
        }
        write_atomically(path, &updated, current.mode)?;
        return Ok(Installed::Updated);
    }

    match &current.content {
        Some(bytes)
            if current.symlink.is_none()
                && is_executable(current.mode)
                && is_posix_shell_script(bytes) =>
        {
            let updated = insert_after_shebang(bytes, wanted.as_bytes());
            let original = Original::File {
                mode: current.mode,
                bytes: bytes.clone(),
            };
            save_backup(ctx, hook, original, Strategy::InPlace, &updated)?;
            write_atomically(path, &updated, current.mode)?;
            Ok(Installed::Chained {
                how: Chain::InPlace,
            })
        }
        _ => {
            let chained = chained_path(path);
            if fs::symlink_metadata(&chained).is_ok() {
                return Err(Error::ChainedExists {
                    hook: hook.name(),
                    chained: chained.display().to_string(),
                });
            }
            let original = match (&current.symlink, &current.content) {
                (Some(target), _) => Original::Symlink {
                    target: target.clone(),
                },
                (None, Some(bytes)) => Original::File {
                    mode: current.mode,
                    bytes: bytes.clone(),
                },
                (None, None) => {
                    return Err(Error::Io {
                        action: "read",
                        path: path.display().to_string(),
                        source: std::io::Error::other("unreadable hook file"),
                    });
                }
            };
            let content = chaining_shim(hook, options);
            save_backup(
                ctx,
                hook,
                original,
                Strategy::MovedAside,
                content.as_bytes(),
            )?;
            fs::rename(path, &chained).map_err(Error::io("move aside", path))?;
            if let Err(e) = write_atomically(path, content.as_bytes(), NEW_FILE_MODE) {
                // Put the user's hook back rather than leave the hook slot empty.
                let _ = fs::rename(&chained, path);
                return Err(e);
            }
            Ok(Installed::Chained {
                how: Chain::MovedAside { chained },
            })
        }
    }
}

fn uninstall_one(ctx: &Context, hook: Hook, path: &Path) -> Result<Uninstalled, Error> {
    let backup = Backup::load(ctx, hook)?;
    let current = Current::read(path)?;
    let chained = chained_path(path);

    let Some(current) = current else {
        let Some(backup) = backup else {
            return Ok(Uninstalled::NotInstalled);
        };
        // Our hook file is gone. A moved-aside hook is still the user's: move it back.
        if backup.meta.strategy == Strategy::MovedAside && fs::symlink_metadata(&chained).is_ok() {
            fs::rename(&chained, path).map_err(Error::io("move back", &chained))?;
            backup.remove()?;
            return Ok(Uninstalled::Restored);
        }
        if backup.meta.original == OriginalMeta::Absent {
            backup.remove()?;
            return Ok(Uninstalled::Removed);
        }
        return Ok(Uninstalled::Missing {
            backup: backup.meta_path,
        });
    };

    let span = match (&current.content, &current.symlink) {
        (Some(bytes), None) => find_block(bytes, path)?,
        // A symbolic link is never ours to edit.
        _ => None,
    };
    let (Some(bytes), Some(span)) = (&current.content, span) else {
        // No block of ours (somebody took it out): the file as it is now is the user's. A
        // backup left behind is stale; the next install replaces it.
        return Ok(Uninstalled::NotInstalled);
    };
    let rest = splice(bytes, span, b"");

    let Some(backup) = backup else {
        return uninstall_without_backup(hook, path, &chained, &rest, current.mode);
    };
    if sha1_hex(&rest) != backup.meta.installed_outside_sha1 {
        write_atomically(path, &rest, current.mode)?;
        return Ok(Uninstalled::BlockRemoved {
            why: Kept::EditedSinceInstall,
            backup: Some(backup.meta_path),
        });
    }

    match &backup.meta.original {
        OriginalMeta::Absent => {
            fs::remove_file(path).map_err(Error::io("remove", path))?;
            backup.remove()?;
            Ok(Uninstalled::Removed)
        }
        OriginalMeta::Symlink { target } => {
            if fs::symlink_metadata(&chained).is_ok() {
                fs::rename(&chained, path).map_err(Error::io("move back", &chained))?;
            } else {
                fs::remove_file(path).map_err(Error::io("remove", path))?;
                std::os::unix::fs::symlink(target, path).map_err(Error::io("link", path))?;
            }
            backup.remove()?;
            Ok(Uninstalled::Restored)
        }
        OriginalMeta::File { mode, .. } => {
            if backup.meta.strategy == Strategy::MovedAside
                && fs::symlink_metadata(&chained).is_ok()
            {
                // The user's own file, with any change they made to it since.
                fs::rename(&chained, path).map_err(Error::io("move back", &chained))?;
            } else {
                let original = backup.original_bytes()?;
                write_atomically(path, &original, *mode)?;
            }
            backup.remove()?;
            Ok(Uninstalled::Restored)
        }
    }
}

/// Uninstall of a block that has no backup (a vendored shim, or the backup is gone): remove
/// what is recognisably ours, keep the rest.
fn uninstall_without_backup(
    hook: Hook,
    path: &Path,
    chained: &Path,
    rest: &[u8],
    mode: u32,
) -> Result<Uninstalled, Error> {
    if rest == SHEBANG.as_bytes() {
        fs::remove_file(path).map_err(Error::io("remove", path))?;
        return Ok(Uninstalled::Removed);
    }
    let chaining_rest = format!("{SHEBANG}{}", chain_tail(hook));
    if rest == chaining_rest.as_bytes() && fs::symlink_metadata(chained).is_ok() {
        fs::rename(chained, path).map_err(Error::io("move back", chained))?;
        return Ok(Uninstalled::Restored);
    }
    write_atomically(path, rest, mode)?;
    Ok(Uninstalled::BlockRemoved {
        why: Kept::NoBackup,
        backup: None,
    })
}

/// A hook file as found: its mode, its bytes (through a symbolic link; `None` when a link
/// dangles), and the link's target when it is one.
struct Current {
    mode: u32,
    content: Option<Vec<u8>>,
    symlink: Option<PathBuf>,
}

impl Current {
    fn read(path: &Path) -> Result<Option<Current>, Error> {
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("inspect", path)(e)),
        };
        if meta.file_type().is_symlink() {
            let target = fs::read_link(path).map_err(Error::io("read link", path))?;
            let mode = fs::metadata(path)
                .map(|m| m.permissions().mode() & 0o7777)
                .unwrap_or(0);
            return Ok(Some(Current {
                mode,
                content: fs::read(path).ok(),
                symlink: Some(target),
            }));
        }
        let content = fs::read(path).map_err(Error::io("read", path))?;
        Ok(Some(Current {
            mode: meta.permissions().mode() & 0o7777,
            content: Some(content),
            symlink: None,
        }))
    }
}

/// Where the block is in `bytes`: from the start of the begin marker's line to the end of the
/// end marker's line (its newline included).
fn find_block(bytes: &[u8], path: &Path) -> Result<Option<(usize, usize)>, Error> {
    let mut begin = None;
    let mut offset = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let text = trim_line_end(line);
        match begin {
            None if text == BEGIN_MARKER.as_bytes() => begin = Some(offset),
            Some(start) if text == END_MARKER.as_bytes() => {
                return Ok(Some((start, offset + line.len())));
            }
            _ => {}
        }
        offset += line.len();
    }
    match begin {
        Some(_) => Err(Error::BrokenBlock {
            path: path.display().to_string(),
        }),
        None => Ok(None),
    }
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

/// `bytes` with `span` replaced by `with`.
fn splice(bytes: &[u8], (start, end): (usize, usize), with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() - (end - start) + with.len());
    out.extend_from_slice(&bytes[..start]);
    out.extend_from_slice(with);
    out.extend_from_slice(&bytes[end..]);
    out
}

/// `script` with `block` after its shebang line (or first, when it has none, as git then runs
/// it with `sh`).
fn insert_after_shebang(script: &[u8], block: &[u8]) -> Vec<u8> {
    if !script.starts_with(b"#!") {
        return splice(script, (0, 0), block);
    }
    match script.iter().position(|&b| b == b'\n') {
        Some(nl) => splice(script, (nl + 1, nl + 1), block),
        None => {
            let mut out = script.to_vec();
            out.push(b'\n');
            out.extend_from_slice(block);
            out
        }
    }
}

/// Whether `bytes` is a script a POSIX shell runs: a `sh`/`bash`/`dash`/`zsh`/… shebang
/// (directly or through `env`), or text with no shebang at all (git runs those with `sh`).
fn is_posix_shell_script(bytes: &[u8]) -> bool {
    if bytes.contains(&0) {
        return false;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    let Some(interpreter) = text.lines().next().unwrap_or("").strip_prefix("#!") else {
        return true;
    };
    let mut words = interpreter.split_whitespace();
    let Some(mut program) = words.next().map(basename) else {
        return false;
    };
    if program == "env" {
        // `#!/usr/bin/env sh`, `#!/usr/bin/env -S bash -e`: the first non-option word.
        match words.find(|word| !word.starts_with('-')) {
            Some(word) => program = basename(word),
            None => return false,
        }
    }
    SHELLS.contains(&program)
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn is_executable(mode: u32) -> bool {
    mode & 0o111 != 0
}

fn chained_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(CHAINED_SUFFIX);
    path.with_file_name(name)
}

fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

/// Writes `bytes` to `path` with `mode` through a temporary file in the same directory and a
/// rename, so git never runs a half-written hook.
fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir).map_err(Error::io("create directory", dir))?;
    let mut file = tempfile::Builder::new()
        .prefix(".git-pair-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(Error::io("create a temporary file in", dir))?;
    file.write_all(bytes)
        .map_err(Error::io("write", file.path()))?;
    file.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))
        .map_err(Error::io("set the mode of", file.path()))?;
    file.persist(path)
        .map_err(|e| Error::io("replace", path)(e.error))?;
    Ok(())
}

/// How the install wrote the hook file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Strategy {
    /// No hook was there.
    Fresh,
    /// The block went into the user's shell script.
    InPlace,
    /// The user's hook was moved to `<name>.git-pair-chained`.
    MovedAside,
}

/// What was at the hook's path before the first install.
enum Original {
    Absent,
    File { mode: u32, bytes: Vec<u8> },
    Symlink { target: PathBuf },
}

/// [`Original`] as the backup's metadata records it (the bytes live beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum OriginalMeta {
    Absent,
    File { mode: u32, sha1: String },
    Symlink { target: PathBuf },
}

/// The backup's metadata file, `<backup_dir>/<key>/<hook>.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct BackupMeta {
    v: u32,
    hook: Hook,
    /// The hooks directory, for people reading the backup (the key is its hash).
    hooks_dir: PathBuf,
    original: OriginalMeta,
    strategy: Strategy,
    /// SHA-1 of the hook file as installed with the block removed: a different value at
    /// uninstall means the user changed the file outside the block.
    installed_outside_sha1: String,
}

/// One hook's backup: the metadata file and, for a regular file, its original bytes.
struct Backup {
    meta: BackupMeta,
    meta_path: PathBuf,
    bytes_path: PathBuf,
}

/// This hooks directory's backups: `<backup_dir>/<first 16 hex of the SHA-1 of its path>`.
fn backup_subdir(ctx: &Context) -> PathBuf {
    // Components drop a trailing slash and `.` parts, so one directory has one key.
    let normalized: PathBuf = ctx.hooks_dir.components().collect();
    let mut key = sha1_hex(normalized.as_os_str().as_encoded_bytes());
    key.truncate(16);
    ctx.backup_dir.join(key)
}

fn backup_paths(ctx: &Context, hook: Hook) -> (PathBuf, PathBuf) {
    let dir = backup_subdir(ctx);
    (
        dir.join(format!("{}.json", hook.name())),
        dir.join(format!("{}.orig", hook.name())),
    )
}

/// Records what was at the hook's path before this install changes it. The bytes are
/// written before the metadata, so a metadata file always has its bytes.
fn save_backup(
    ctx: &Context,
    hook: Hook,
    original: Original,
    strategy: Strategy,
    installed: &[u8],
) -> Result<(), Error> {
    let (meta_path, bytes_path) = backup_paths(ctx, hook);
    let original = match original {
        Original::Absent => OriginalMeta::Absent,
        Original::Symlink { target } => OriginalMeta::Symlink { target },
        Original::File { mode, bytes } => {
            write_atomically(&bytes_path, &bytes, 0o600)?;
            OriginalMeta::File {
                mode,
                sha1: sha1_hex(&bytes),
            }
        }
    };
    let outside = match find_block(installed, &meta_path)? {
        Some(span) => splice(installed, span, b""),
        None => installed.to_vec(),
    };
    let meta = BackupMeta {
        v: BACKUP_VERSION,
        hook,
        hooks_dir: ctx.hooks_dir.to_path_buf(),
        original,
        strategy,
        installed_outside_sha1: sha1_hex(&outside),
    };
    let mut json = serde_json::to_vec_pretty(&meta).map_err(|e| Error::BadBackup {
        path: meta_path.display().to_string(),
        detail: e.to_string(),
    })?;
    json.push(b'\n');
    write_atomically(&meta_path, &json, 0o600)
}

impl Backup {
    fn load(ctx: &Context, hook: Hook) -> Result<Option<Backup>, Error> {
        let (meta_path, bytes_path) = backup_paths(ctx, hook);
        let json = match fs::read(&meta_path) {
            Ok(json) => json,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("read", &meta_path)(e)),
        };
        let meta: BackupMeta = serde_json::from_slice(&json).map_err(|e| Error::BadBackup {
            path: meta_path.display().to_string(),
            detail: e.to_string(),
        })?;
        if meta.v != BACKUP_VERSION || meta.hook != hook {
            return Err(Error::BadBackup {
                path: meta_path.display().to_string(),
                detail: format!("expected version {BACKUP_VERSION} for {}", hook.name()),
            });
        }
        Ok(Some(Backup {
            meta,
            meta_path,
            bytes_path,
        }))
    }

    /// The original bytes, checked against the recorded hash.
    fn original_bytes(&self) -> Result<Vec<u8>, Error> {
        let bytes = fs::read(&self.bytes_path).map_err(Error::io("read", &self.bytes_path))?;
        match &self.meta.original {
            OriginalMeta::File { sha1, .. } if *sha1 == sha1_hex(&bytes) => Ok(bytes),
            _ => Err(Error::BadBackup {
                path: self.bytes_path.display().to_string(),
                detail: "its content does not match the recorded hash".to_owned(),
            }),
        }
    }

    /// Deletes the backup once the original is back.
    fn remove(&self) -> Result<(), Error> {
        for path in [&self.meta_path, &self.bytes_path] {
            match fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io("remove", path)(e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::process::{Command, Output, Stdio};

    /// A repository-like layout: a hooks directory and a backup directory.
    struct Dirs {
        _root: tempfile::TempDir,
        hooks: PathBuf,
        backup: PathBuf,
    }

    impl Dirs {
        fn new() -> Dirs {
            Dirs::with_hooks_dir(".git/hooks")
        }

        fn with_hooks_dir(rel: &str) -> Dirs {
            let root = tempfile::tempdir().expect("temp dir");
            let hooks = root.path().join(rel);
            let backup = root.path().join(".git/pair/hooks-backup");
            fs::create_dir_all(&hooks).expect("hooks dir");
            Dirs {
                _root: root,
                hooks,
                backup,
            }
        }

        fn ctx(&self) -> Context<'_> {
            Context {
                hooks_dir: &self.hooks,
                backup_dir: &self.backup,
            }
        }

        fn path(&self, hook: Hook) -> PathBuf {
            self.hooks.join(hook.name())
        }

        fn backup_file(&self, name: impl AsRef<Path>) -> PathBuf {
            backup_subdir(&self.ctx()).join(name)
        }

        fn write(&self, hook: Hook, content: &str, mode: u32) {
            let path = self.path(hook);
            fs::write(&path, content).expect("write hook");
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod");
        }

        fn read(&self, hook: Hook) -> String {
            fs::read_to_string(self.path(hook)).expect("read hook")
        }

        fn mode(&self, hook: Hook) -> u32 {
            mode_of(&self.path(hook))
        }

        fn install(&self, hooks: &[Hook], gate: bool) -> Vec<Installed> {
            install(&self.ctx(), hooks, Options { gate })
                .expect("install")
                .hooks
                .into_iter()
                .map(|r| r.outcome)
                .collect()
        }

        fn uninstall(&self, hooks: &[Hook]) -> Vec<Uninstalled> {
            uninstall(&self.ctx(), hooks)
                .expect("uninstall")
                .hooks
                .into_iter()
                .map(|r| r.outcome)
                .collect()
        }

        /// Every file in the hooks directory with its bytes and mode, for before/after
        /// comparisons.
        fn snapshot(&self) -> Vec<(String, Vec<u8>, u32, Option<PathBuf>)> {
            let mut entries: Vec<_> = fs::read_dir(&self.hooks)
                .expect("list hooks")
                .map(|e| {
                    let path = e.expect("entry").path();
                    let name = path
                        .file_name()
                        .expect("name")
                        .to_string_lossy()
                        .into_owned();
                    let link = fs::read_link(&path).ok();
                    let bytes = if link.is_some() {
                        Vec::new()
                    } else {
                        fs::read(&path).expect("read")
                    };
                    let mode = if link.is_some() { 0 } else { mode_of(&path) };
                    (name, bytes, mode, link)
                })
                .collect();
            entries.sort();
            entries
        }
    }

    fn mode_of(path: &Path) -> u32 {
        fs::symlink_metadata(path)
            .expect("stat")
            .permissions()
            .mode()
            & 0o7777
    }

    /// A PATH holding a stub `git-pair` (logs its arguments to `log`, exits with
    /// `$PAIR_EXIT`) or none at all, then the test's own PATH without any real `git-pair`.
    struct Tools {
        dir: tempfile::TempDir,
        log: PathBuf,
    }

    impl Tools {
        fn new(with_git_pair: bool) -> Tools {
            let dir = tempfile::tempdir().expect("tools dir");
            let log = dir.path().join("calls.log");
            if with_git_pair {
                let stub = dir.path().join("git-pair");
                fs::write(
                    &stub,
                    "#!/bin/sh\necho \"git-pair $*\" >> \"$PAIR_LOG\"\nexit \"${PAIR_EXIT:-0}\"\n",
                )
                .expect("stub");
                fs::set_permissions(&stub, fs::Permissions::from_mode(0o755)).expect("chmod");
            }
            Tools { dir, log }
        }

        fn path_env(&self) -> OsString {
            let inherited = std::env::var_os("PATH").unwrap_or_default();
            let dirs = std::iter::once(self.dir.path().to_path_buf()).chain(
                std::env::split_paths(&inherited).filter(|dir| !dir.join("git-pair").exists()),
            );
            std::env::join_paths(dirs).expect("PATH")
        }

        /// `git` in `dir` with this PATH, no user or system config, and a fixed identity.
        fn git_in(&self, dir: &Path) -> Command {
            let mut cmd = Command::new("git");
            cmd.current_dir(dir)
                .env("PATH", self.path_env())
                .env("PAIR_LOG", &self.log)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.com")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.com");
            cmd
        }

        fn calls(&self) -> String {
            fs::read_to_string(&self.log).unwrap_or_default()
        }

        /// Runs a hook file as git would: its path as argv[0], the arguments, `stdin`.
        fn run(&self, hook: &Path, args: &[&str], stdin: &str, pair_exit: i32) -> Output {
            use std::io::Write as _;
            let mut child = Command::new(hook)
                .args(args)
                .env("PATH", self.path_env())
                .env("PAIR_LOG", &self.log)
                .env("PAIR_EXIT", pair_exit.to_string())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .current_dir(self.dir.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn hook");
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(stdin.as_bytes())
                .expect("feed stdin");
            child.wait_with_output().expect("wait hook")
        }
    }

    fn find_on_path(tool: &str) -> Option<PathBuf> {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join(tool))
            .find(|p| p.is_file())
    }

    const FAILING_SH: &str = "#!/bin/sh\necho user-hook-ran \"$@\"\nexit 1\n";
    const PYTHON_HOOK: &str = "#!/usr/bin/env python3\nimport sys\nprint('py-hook', sys.argv[1:], sys.stdin.read().strip())\nsys.exit(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0)\n";

    #[test]
    fn vendored_hook_files_are_exactly_what_install_writes() {
        let vendored = [
            (Hook::PreCommit, include_str!("../../hooks/pre-commit")),
            (Hook::CommitMsg, include_str!("../../hooks/commit-msg")),
            (Hook::PostCommit, include_str!("../../hooks/post-commit")),
        ];
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks");
        for (hook, text) in vendored {
            assert_eq!(
                text,
                shim(hook, Options::default()),
                "hooks/{}",
                hook.name()
            );
            assert!(
                is_executable(mode_of(&root.join(hook.name()))),
                "hooks/{} must be executable",
                hook.name()
            );
        }
    }

    #[test]
    fn the_block_is_one_guarded_line_between_markers() {
        for hook in Hook::ALL {
            for gate in [false, true] {
                let block = block(hook, Options { gate });
                let lines: Vec<&str> = block.lines().collect();
                assert_eq!(lines.len(), 3, "{block}");
                assert_eq!(lines[0], BEGIN_MARKER);
                assert_eq!(lines[2], END_MARKER);
                assert!(
                    lines[1]
                        .starts_with("if command -v git-pair >/dev/null 2>&1; then git-pair hook ")
                );
                let gated = gate && hook == Hook::PreCommit;
                let call = if gated {
                    format!("git-pair hook {} --gate \"$@\"", hook.name())
                } else {
                    format!("git-pair hook {} \"$@\"", hook.name())
                };
                assert!(lines[1].contains(&call), "{}", lines[1]);
                assert_eq!(lines[1].ends_with("exit 1; fi"), gated, "{}", lines[1]);
            }
        }
    }

    #[test]
    fn fresh_directory_gets_new_shims_and_uninstall_leaves_no_file() {
        let dirs = Dirs::new();
        assert_eq!(dirs.install(&Hook::ALL, false), vec![Installed::Created; 3]);
        for hook in Hook::ALL {
            assert_eq!(dirs.read(hook), shim(hook, Options::default()));
            assert_eq!(dirs.mode(hook), 0o755);
        }
        assert_eq!(dirs.uninstall(&Hook::ALL), vec![Uninstalled::Removed; 3]);
        assert!(dirs.snapshot().is_empty(), "{:?}", dirs.snapshot());
        assert!(
            !dirs.backup.exists(),
            "the emptied backup directory is removed"
        );
    }

    #[test]
    fn missing_hooks_directory_is_created() {
        let dirs = Dirs::new();
        fs::remove_dir_all(&dirs.hooks).expect("remove");
        assert_eq!(
            dirs.install(&[Hook::PreCommit], false),
            vec![Installed::Created]
        );
        assert!(dirs.path(Hook::PreCommit).is_file());
    }

    #[test]
    fn installing_twice_changes_nothing() {
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
        dirs.write(Hook::CommitMsg, PYTHON_HOOK, 0o750);
        dirs.install(&Hook::ALL, false);
        let after_first = dirs.snapshot();
        let backup_first = fs::read(dirs.backup_file("pre-commit.json")).expect("backup");
        assert_eq!(
            dirs.install(&Hook::ALL, false),
            vec![Installed::AlreadyInstalled; 3]
        );
        assert_eq!(dirs.snapshot(), after_first);
        assert_eq!(
            fs::read(dirs.backup_file("pre-commit.json")).expect("backup"),
            backup_first
        );
    }

    #[test]
    fn existing_shell_hook_gets_the_block_after_its_shebang_and_still_fails_the_commit() {
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
        assert_eq!(
            dirs.install(&[Hook::PreCommit], false),
            vec![Installed::Chained {
                how: Chain::InPlace
            }]
        );
        let content = dirs.read(Hook::PreCommit);
        assert_eq!(
            content,
            format!(
                "#!/bin/sh\n{}echo user-hook-ran \"$@\"\nexit 1\n",
                block(Hook::PreCommit, Options::default())
            )
        );

        let tools = Tools::new(true);
        // Ours passes: the user's hook runs and its failure fails the commit.
        let out = tools.run(&dirs.path(Hook::PreCommit), &["a b"], "", 0);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "user-hook-ran a b\n");
        assert_eq!(tools.calls(), "git-pair hook pre-commit a b\n");
        // Ours fails: its status is the hook's, and the user's script does not run.
        let out = tools.run(&dirs.path(Hook::PreCommit), &[], "", 3);
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");

        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit]),
            vec![Uninstalled::Restored]
        );
        assert_eq!(dirs.read(Hook::PreCommit), FAILING_SH);
        assert_eq!(dirs.mode(Hook::PreCommit), 0o755);
    }

    #[test]
    fn post_commit_failure_of_ours_never_stops_the_users_post_commit() {
        let dirs = Dirs::new();
        dirs.write(
            Hook::PostCommit,
            "#!/bin/bash\necho user-post-commit\n",
            0o700,
        );
        dirs.install(&[Hook::PostCommit], false);
        let tools = Tools::new(true);
        let out = tools.run(&dirs.path(Hook::PostCommit), &[], "", 5);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "user-post-commit\n");
        assert_eq!(
            dirs.uninstall(&[Hook::PostCommit]),
            vec![Uninstalled::Restored]
        );
        assert_eq!(
            dirs.read(Hook::PostCommit),
            "#!/bin/bash\necho user-post-commit\n"
        );
        assert_eq!(dirs.mode(Hook::PostCommit), 0o700);
    }

    #[test]
    fn existing_python_hook_is_moved_aside_and_run_after_ours_with_args_and_stdin() {
        let dirs = Dirs::new();
        dirs.write(Hook::CommitMsg, PYTHON_HOOK, 0o750);
        let before = dirs.snapshot();
        let chained = dirs.hooks.join("commit-msg.git-pair-chained");
        assert_eq!(
            dirs.install(&[Hook::CommitMsg], false),
            vec![Installed::Chained {
                how: Chain::MovedAside {
                    chained: chained.clone()
                }
            }]
        );
        assert_eq!(fs::read_to_string(&chained).expect("chained"), PYTHON_HOOK);
        assert_eq!(mode_of(&chained), 0o750, "the moved hook keeps its mode");
        assert_eq!(dirs.mode(Hook::CommitMsg), 0o755);
        assert!(
            dirs.read(Hook::CommitMsg)
                .starts_with(&shim(Hook::CommitMsg, Options::default()))
        );

        let tools = Tools::new(true);
        if find_on_path("python3").is_some() {
            let out = tools.run(&dirs.path(Hook::CommitMsg), &["7"], "from stdin\n", 0);
            assert_eq!(
                out.status.code(),
                Some(7),
                "the chained hook's failure fails: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                "py-hook ['7'] from stdin\n"
            );
            assert_eq!(tools.calls(), "git-pair hook commit-msg 7\n");
            let out = tools.run(&dirs.path(Hook::CommitMsg), &["x"], "", 4);
            assert_eq!(
                out.status.code(),
                Some(4),
                "ours failing stops before theirs"
            );
            assert_eq!(String::from_utf8_lossy(&out.stdout), "");
        } else {
            eprintln!("python3 is not on PATH: not running the chained python hook");
        }

        assert_eq!(
            dirs.uninstall(&[Hook::CommitMsg]),
            vec![Uninstalled::Restored]
        );
        assert_eq!(dirs.snapshot(), before);
    }

    #[test]
    fn binary_and_non_executable_hooks_are_moved_aside_and_a_disabled_hook_stays_disabled() {
        let dirs = Dirs::new();
        let binary = "\u{7f}ELF\0\0\0binary";
        dirs.write(Hook::PreCommit, binary, 0o755);
        dirs.write(
            Hook::PostCommit,
            "#!/bin/sh\necho disabled-hook-ran\n",
            0o644,
        );
        let before = dirs.snapshot();
        let outcomes = dirs.install(&[Hook::PreCommit, Hook::PostCommit], false);
        assert!(
            outcomes.iter().all(|o| matches!(
                o,
                Installed::Chained {
                    how: Chain::MovedAside { .. }
                }
            )),
            "{outcomes:?}"
        );
        let tools = Tools::new(true);
        let out = tools.run(&dirs.path(Hook::PostCommit), &[], "", 0);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "",
            "git skipped the non-executable hook before; it still does not run"
        );
        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit, Hook::PostCommit]),
            vec![Uninstalled::Restored; 2]
        );
        assert_eq!(dirs.snapshot(), before);
    }

    #[test]
    fn a_hook_without_shebang_is_a_shell_script_and_takes_the_block_first() {
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, "echo no-shebang\nexit 2\n", 0o755);
        dirs.install(&[Hook::PreCommit], false);
        assert_eq!(
            dirs.read(Hook::PreCommit),
            format!(
                "{}echo no-shebang\nexit 2\n",
                block(Hook::PreCommit, Options::default())
            )
        );
        let tools = Tools::new(true);
        // git runs a hook without a shebang with sh.
        let out = Command::new("/bin/sh")
            .arg(dirs.path(Hook::PreCommit))
            .env("PATH", tools.path_env())
            .env("PAIR_LOG", &tools.log)
            .output()
            .expect("sh");
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "no-shebang\n");
        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit]),
            vec![Uninstalled::Restored]
        );
        assert_eq!(dirs.read(Hook::PreCommit), "echo no-shebang\nexit 2\n");
    }

    #[test]
    fn a_symlinked_hook_is_moved_aside_as_a_link_and_comes_back_as_one() {
        let dirs = Dirs::new();
        let script = dirs
            .hooks
            .parent()
            .expect("parent")
            .join("shared-pre-commit");
        fs::write(&script, FAILING_SH).expect("script");
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
        std::os::unix::fs::symlink("../shared-pre-commit", dirs.path(Hook::PreCommit))
            .expect("link");
        let before = dirs.snapshot();
        let outcome = dirs.install(&[Hook::PreCommit], false);
        assert!(
            matches!(
                outcome[0],
                Installed::Chained {
                    how: Chain::MovedAside { .. }
                }
            ),
            "{outcome:?}"
        );
        let tools = Tools::new(true);
        let out = tools.run(&dirs.path(Hook::PreCommit), &["arg"], "", 0);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "user-hook-ran arg\n");
        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit]),
            vec![Uninstalled::Restored]
        );
        assert_eq!(dirs.snapshot(), before);
        assert_eq!(fs::read_to_string(&script).expect("script"), FAILING_SH);
    }

    #[test]
    fn gate_on_then_off_replaces_only_the_pre_commit_block() {
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
        let before = dirs.snapshot();
        dirs.install(&Hook::ALL, true);
        assert!(
            dirs.read(Hook::PreCommit)
                .contains("git-pair hook pre-commit --gate \"$@\"")
        );
        assert!(
            dirs.read(Hook::PreCommit)
                .ends_with("echo user-hook-ran \"$@\"\nexit 1\n")
        );
        assert_eq!(
            dirs.read(Hook::CommitMsg),
            shim(Hook::CommitMsg, Options::default())
        );

        assert_eq!(
            dirs.install(&Hook::ALL, false),
            vec![
                Installed::Updated,
                Installed::AlreadyInstalled,
                Installed::AlreadyInstalled
            ]
        );
        assert!(!dirs.read(Hook::PreCommit).contains("--gate"));
        assert_eq!(
            dirs.install(&Hook::ALL, true)[0],
            Installed::Updated,
            "and back on"
        );
        assert_eq!(
            dirs.uninstall(&Hook::ALL),
            vec![
                Uninstalled::Restored,
                Uninstalled::Removed,
                Uninstalled::Removed
            ]
        );
        assert_eq!(dirs.snapshot(), before);
    }

    #[test]
    fn a_missing_git_pair_lets_the_commit_through_unless_gating_was_asked() {
        let dirs = Dirs::new();
        dirs.install(&Hook::ALL, false);
        let tools = Tools::new(false);
        for hook in Hook::ALL {
            let out = tools.run(&dirs.path(hook), &["msg-file"], "", 0);
            assert_eq!(out.status.code(), Some(0), "{}", hook.name());
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("git-pair is not on PATH"), "{stderr}");
            assert!(stderr.contains("cargo install --locked"), "{stderr}");
        }
        dirs.install(&[Hook::PreCommit], true);
        let out = tools.run(&dirs.path(Hook::PreCommit), &[], "", 0);
        assert_eq!(out.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("gated on review"), "{stderr}");
        assert!(stderr.contains("--no-verify"), "{stderr}");
    }

    #[test]
    fn uninstall_keeps_changes_made_outside_the_block_and_says_so() {
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
        dirs.install(&Hook::ALL, false);
        let edited = format!("{}echo added-later\n", dirs.read(Hook::PreCommit));
        fs::write(dirs.path(Hook::PreCommit), &edited).expect("edit");
        let fresh_edit = format!("{}echo mine-now\n", dirs.read(Hook::CommitMsg));
        fs::write(dirs.path(Hook::CommitMsg), &fresh_edit).expect("edit");

        let outcomes = dirs.uninstall(&Hook::ALL);
        let backup = |hook: Hook| Some(dirs.backup_file(format!("{}.json", hook.name())));
        assert_eq!(
            outcomes,
            vec![
                Uninstalled::BlockRemoved {
                    why: Kept::EditedSinceInstall,
                    backup: backup(Hook::PreCommit)
                },
                Uninstalled::BlockRemoved {
                    why: Kept::EditedSinceInstall,
                    backup: backup(Hook::CommitMsg)
                },
                Uninstalled::Removed,
            ]
        );
        assert_eq!(
            dirs.read(Hook::PreCommit),
            format!("{FAILING_SH}echo added-later\n")
        );
        assert_eq!(dirs.read(Hook::CommitMsg), "#!/bin/sh\necho mine-now\n");
        assert!(!dirs.path(Hook::PostCommit).exists());
        // The original stays available.
        assert_eq!(
            fs::read_to_string(dirs.backup_file("pre-commit.orig")).expect("orig"),
            FAILING_SH
        );
    }

    #[test]
    fn a_newer_block_is_not_an_edit() {
        // An older git pair wrote a different line inside the markers: uninstall still
        // restores exactly, because only what is outside the block counts.
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
        dirs.install(&[Hook::PreCommit], false);
        let old_style = dirs.read(Hook::PreCommit).replace(
            &block(Hook::PreCommit, Options::default()),
            &format!("{BEGIN_MARKER}\ngit pair hook pre-commit \"$@\" || exit $?\n{END_MARKER}\n"),
        );
        fs::write(dirs.path(Hook::PreCommit), old_style).expect("write");
        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit]),
            vec![Uninstalled::Restored]
        );
        assert_eq!(dirs.read(Hook::PreCommit), FAILING_SH);
    }

    #[test]
    fn a_hook_deleted_after_install_is_not_resurrected() {
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
        dirs.install(&[Hook::PreCommit, Hook::CommitMsg], false);
        fs::remove_file(dirs.path(Hook::PreCommit)).expect("rm");
        fs::remove_file(dirs.path(Hook::CommitMsg)).expect("rm");
        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit, Hook::CommitMsg]),
            vec![
                Uninstalled::Missing {
                    backup: dirs.backup_file("pre-commit.json")
                },
                Uninstalled::Removed
            ]
        );
        assert!(!dirs.path(Hook::PreCommit).exists());
    }

    #[test]
    fn without_a_backup_uninstall_removes_what_is_recognisably_ours() {
        let dirs = Dirs::new();
        // A vendored copy of hooks/pre-commit, and a user script that pasted the block.
        dirs.write(
            Hook::PreCommit,
            &shim(Hook::PreCommit, Options::default()),
            0o755,
        );
        dirs.write(
            Hook::CommitMsg,
            &format!(
                "#!/bin/sh\n{}echo theirs\n",
                block(Hook::CommitMsg, Options::default())
            ),
            0o755,
        );
        assert_eq!(
            dirs.install(&[Hook::PreCommit, Hook::CommitMsg], false),
            vec![Installed::AlreadyInstalled; 2]
        );
        assert_eq!(
            dirs.uninstall(&Hook::ALL),
            vec![
                Uninstalled::Removed,
                Uninstalled::BlockRemoved {
                    why: Kept::NoBackup,
                    backup: None
                },
                Uninstalled::NotInstalled
            ]
        );
        assert!(!dirs.path(Hook::PreCommit).exists());
        assert_eq!(dirs.read(Hook::CommitMsg), "#!/bin/sh\necho theirs\n");
    }

    #[test]
    fn a_chaining_shim_without_backup_still_moves_the_hook_back() {
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, PYTHON_HOOK, 0o755);
        dirs.install(&[Hook::PreCommit], false);
        fs::remove_dir_all(&dirs.backup).expect("lose the backup");
        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit]),
            vec![Uninstalled::Restored]
        );
        assert_eq!(dirs.read(Hook::PreCommit), PYTHON_HOOK);
    }

    #[test]
    fn a_half_block_is_refused_and_nothing_is_touched() {
        let dirs = Dirs::new();
        let broken = format!("#!/bin/sh\n{BEGIN_MARKER}\necho half\n");
        dirs.write(Hook::PreCommit, &broken, 0o755);
        let err =
            install(&dirs.ctx(), &[Hook::PreCommit], Options::default()).expect_err("refused");
        assert!(matches!(err, Error::BrokenBlock { .. }), "{err}");
        assert_eq!(dirs.read(Hook::PreCommit), broken);
        assert!(uninstall(&dirs.ctx(), &[Hook::PreCommit]).is_err());
        assert_eq!(dirs.read(Hook::PreCommit), broken);
    }

    #[test]
    fn an_existing_chained_file_is_never_clobbered() {
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, PYTHON_HOOK, 0o755);
        fs::write(dirs.hooks.join("pre-commit.git-pair-chained"), "older").expect("write");
        let before = dirs.snapshot();
        let err =
            install(&dirs.ctx(), &[Hook::PreCommit], Options::default()).expect_err("refused");
        assert!(matches!(err, Error::ChainedExists { .. }), "{err}");
        assert_eq!(dirs.snapshot(), before);
    }

    #[test]
    fn a_changed_hooks_path_keeps_each_directorys_backup() {
        let dirs = Dirs::new();
        let husky = dirs.hooks.parent().expect("parent").join("husky-hooks");
        fs::create_dir_all(&husky).expect("husky");
        fs::write(husky.join("pre-commit"), FAILING_SH).expect("write");
        fs::set_permissions(husky.join("pre-commit"), fs::Permissions::from_mode(0o755))
            .expect("chmod");
        let husky_ctx = Context {
            hooks_dir: &husky,
            backup_dir: &dirs.backup,
        };
        dirs.install(&[Hook::PreCommit], false);
        install(&husky_ctx, &[Hook::PreCommit], Options::default()).expect("install");
        assert_ne!(backup_subdir(&husky_ctx), backup_subdir(&dirs.ctx()));

        let restored = uninstall(&husky_ctx, &[Hook::PreCommit]).expect("uninstall");
        assert_eq!(restored.hooks[0].outcome, Uninstalled::Restored);
        assert_eq!(
            fs::read_to_string(husky.join("pre-commit")).expect("read"),
            FAILING_SH
        );
        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit]),
            vec![Uninstalled::Removed]
        );
        assert!(!dirs.backup.exists());

        let slash = dirs.hooks.join("");
        let with_slash = Context {
            hooks_dir: &slash,
            backup_dir: &dirs.backup,
        };
        assert_eq!(backup_subdir(&with_slash), backup_subdir(&dirs.ctx()));
    }

    #[test]
    fn husky_hook_directories_are_edited_in_place() {
        // husky 9: core.hooksPath=.husky/_ holding generated sh files; husky 4-8:
        // core.hooksPath=.husky holding the user's tracked scripts.
        for (dir, script) in [
            (".husky/_", "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n"),
            (
                ".husky",
                "#!/usr/bin/env sh\n. \"$(dirname -- \"$0\")/_/husky.sh\"\n\nnpx lint-staged\n",
            ),
        ] {
            let dirs = Dirs::with_hooks_dir(dir);
            dirs.write(Hook::PreCommit, script, 0o755);
            assert_eq!(
                dirs.install(&[Hook::PreCommit], false),
                vec![Installed::Chained {
                    how: Chain::InPlace
                }],
                "{dir}"
            );
            assert_eq!(
                dirs.snapshot().len(),
                1,
                "no file beside the user's in {dir}"
            );
            assert_eq!(
                dirs.uninstall(&[Hook::PreCommit]),
                vec![Uninstalled::Restored]
            );
            assert_eq!(dirs.read(Hook::PreCommit), script);
        }
    }

    #[test]
    fn shell_detection_reads_the_shebang() {
        let cases: &[(&[u8], bool)] = &[
            (b"#!/bin/sh\n", true),
            (b"#!/bin/bash -e\n", true),
            (b"#!/usr/bin/dash\n", true),
            (b"#!/bin/zsh\n", true),
            (b"#! /bin/sh\n", true),
            (b"#!/usr/bin/env sh\n", true),
            (b"#!/usr/bin/env bash\n", true),
            (b"#!/usr/bin/env -S bash -e\n", true),
            (b"echo no shebang\n", true),
            (b"", true),
            (b"#!/usr/bin/env python3\n", false),
            (b"#!/usr/bin/python\n", false),
            (b"#!/usr/bin/env node\n", false),
            (b"#!/usr/bin/env\n", false),
            (b"#!/usr/bin/perl -w\n", false),
            (b"#!/bin/fish\n", false),
            (b"#!\n", false),
            (b"\x7fELF\x02\x01\x01\0\0", false),
            (b"echo \xff\xfe\n", false),
        ];
        for (script, expected) in cases {
            assert_eq!(
                is_posix_shell_script(script),
                *expected,
                "{}",
                String::from_utf8_lossy(script)
            );
        }
    }

    #[test]
    fn a_shebang_without_newline_still_gets_a_working_block() {
        let dirs = Dirs::new();
        dirs.write(Hook::PreCommit, "#!/bin/sh", 0o755);
        dirs.install(&[Hook::PreCommit], false);
        assert_eq!(
            dirs.read(Hook::PreCommit),
            format!("#!/bin/sh\n{}", block(Hook::PreCommit, Options::default()))
        );
        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit]),
            vec![Uninstalled::Restored]
        );
        assert_eq!(dirs.read(Hook::PreCommit), "#!/bin/sh");
    }

    #[test]
    fn git_runs_the_installed_shims_and_the_chained_hooks_in_a_real_commit() {
        let repo = tempfile::tempdir().expect("repo");
        let tools = Tools::new(true);
        let git = |args: &[&str]| tools.git_in(repo.path()).args(args).output().expect("git");
        assert!(git(&["init", "-q"]).status.success());
        let hooks_dir = repo.path().join(".git/hooks");
        let backup_dir = repo.path().join(".git/pair/hooks-backup");
        fs::create_dir_all(&hooks_dir).expect("hooks dir");
        let write = |name: &str, text: &str| {
            let path = hooks_dir.join(name);
            fs::write(&path, text).expect("hook");
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
        };
        let seen = repo.path().join(".git/seen");
        let seen_s = seen.display().to_string();
        write(
            "pre-commit",
            &format!("#!/usr/bin/env python3\nopen('{seen_s}', 'a').write('user pre-commit\\n')\n"),
        );
        write(
            "commit-msg",
            &format!("echo \"user commit-msg $1\" >> {seen_s}\nexit $USER_MSG_EXIT\n"),
        );
        write(
            "post-commit",
            &format!("#!/bin/sh\necho 'user post-commit' >> {seen_s}\n"),
        );
        let ctx = Context {
            hooks_dir: &hooks_dir,
            backup_dir: &backup_dir,
        };
        install(&ctx, &Hook::ALL, Options::default()).expect("install");

        fs::write(repo.path().join("a.txt"), "a\n").expect("file");
        assert!(git(&["add", "a.txt"]).status.success());
        let commit = |msg_exit: &str| {
            tools
                .git_in(repo.path())
                .args(["commit", "-q", "-m", "first"])
                .env("USER_MSG_EXIT", msg_exit)
                .output()
                .expect("git commit")
        };
        let out = commit("1");
        assert!(
            !out.status.success(),
            "the user's commit-msg hook still refuses"
        );
        let out = commit("0");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let calls = tools.calls();
        let calls: Vec<&str> = calls.lines().collect();
        assert_eq!(
            calls,
            [
                "git-pair hook pre-commit",
                "git-pair hook commit-msg .git/COMMIT_EDITMSG",
                "git-pair hook pre-commit",
                "git-pair hook commit-msg .git/COMMIT_EDITMSG",
                "git-pair hook post-commit",
            ]
        );
        let seen = fs::read_to_string(&seen).expect("seen");
        if find_on_path("python3").is_some() {
            assert_eq!(
                seen,
                "user pre-commit\nuser commit-msg .git/COMMIT_EDITMSG\nuser pre-commit\nuser commit-msg .git/COMMIT_EDITMSG\nuser post-commit\n"
            );
        }
    }

    #[test]
    fn reports_serialize_with_the_outcome_and_how() {
        let report = HookReport {
            hook: Hook::PreCommit,
            path: PathBuf::from("/r/.git/hooks/pre-commit"),
            outcome: Installed::Chained {
                how: Chain::MovedAside {
                    chained: PathBuf::from("/r/.git/hooks/pre-commit.git-pair-chained"),
                },
            },
        };
        assert_eq!(
            serde_json::to_string(&report).expect("json"),
            r#"{"hook":"pre-commit","path":"/r/.git/hooks/pre-commit","outcome":"chained","how":"moved-aside","chained":"/r/.git/hooks/pre-commit.git-pair-chained"}"#
        );
    }
}
