//! Installs the `pre-commit`, `commit-msg`, `post-commit` and `pre-merge-commit` shims into
//! the hooks directory git really uses, chaining any hook that was there, and uninstalls them by putting back exactly
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
//!
//! `block` owns the marked block inside a hook file; `backup` what was there before and
//! putting it back; every file is written through [`crate::install`]'s one `InstalledFile`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

mod backup;
mod block;
mod common;
#[cfg(test)]
mod tests;

use backup::{Backup, Original, OriginalMeta, Strategy, backup_subdir, save_backup, sha1_hex};
pub use block::{BEGIN_MARKER, END_MARKER, block};
use block::{find_block, insert_after_shebang, splice};
pub use common::{Context, Error, Hook, INSTALL_HINT, Options};

use super::file::InstalledFile;

/// Appended to a hook's file name when it is moved aside to be chained.
pub const CHAINED_SUFFIX: &str = ".git-pair-chained";

/// The shebang of a hook file this module creates.
const SHEBANG: &str = "#!/bin/sh\n";
/// The mode of a hook file this module creates.
const NEW_FILE_MODE: u32 = 0o755;
/// Interpreters whose scripts take the block in place (the block's line is valid in each).
const SHELLS: [&str; 6] = ["sh", "bash", "dash", "zsh", "ksh", "ash"];

pub use crate::model::report::hooks::{Chain, HookReport, Installed, Kept, Uninstalled};

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
        InstalledFile::new(path, NEW_FILE_MODE).write(content.as_bytes())?;
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
        InstalledFile::new(path, current.mode).write(&updated)?;
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
            InstalledFile::new(path, current.mode).write(&updated)?;
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
            if let Err(e) = InstalledFile::new(path, NEW_FILE_MODE).write(content.as_bytes()) {
                // Put the user's hook back rather than leave the hook slot empty.
                let _ = fs::rename(&chained, path);
                return Err(e.into());
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
        InstalledFile::new(path, current.mode).write(&rest)?;
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
                InstalledFile::new(path, *mode).write(&original)?;
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
    InstalledFile::new(path, mode).write(rest)?;
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
