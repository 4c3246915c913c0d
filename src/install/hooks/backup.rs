//! What was at a hook's path before the first install, and putting it back: the backup
//! (metadata and original bytes, private files in one subdirectory per hooks directory)
//! written before the hook is touched, read and checked at uninstall.

use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::block::{find_block, splice};
use super::common::{Context, Error, Hook};
use crate::install::file::InstalledFile;

/// Schema version of the backup's metadata file.
const BACKUP_VERSION: u32 = 1;

/// How the install wrote the hook file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Strategy {
    /// No hook was there.
    Fresh,
    /// The block went into the user's shell script.
    InPlace,
    /// The user's hook was moved to `<name>.git-pair-chained`.
    MovedAside,
}

/// What was at the hook's path before the first install.
pub(super) enum Original {
    Absent,
    File { mode: u32, bytes: Vec<u8> },
    Symlink { target: PathBuf },
}

/// [`Original`] as the backup's metadata records it (the bytes live beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(super) enum OriginalMeta {
    Absent,
    File { mode: u32, sha1: String },
    Symlink { target: PathBuf },
}

/// The backup's metadata file, `<backup_dir>/<key>/<hook>.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct BackupMeta {
    pub(super) v: u32,
    pub(super) hook: Hook,
    /// The hooks directory, for people reading the backup (the key is its hash).
    pub(super) hooks_dir: PathBuf,
    pub(super) original: OriginalMeta,
    pub(super) strategy: Strategy,
    /// SHA-1 of the hook file as installed with the block removed: a different value at
    /// uninstall means the user changed the file outside the block.
    pub(super) installed_outside_sha1: String,
}

/// One hook's backup: the metadata file and, for a regular file, its original bytes.
pub(super) struct Backup {
    pub(super) meta: BackupMeta,
    pub(super) meta_path: PathBuf,
    pub(super) bytes_path: PathBuf,
}

/// This hooks directory's backups: `<backup_dir>/<first 16 hex of the SHA-1 of its path>`.
pub(super) fn backup_subdir(ctx: &Context) -> PathBuf {
    // Components drop a trailing slash and `.` parts, so one directory has one key.
    let normalized: PathBuf = ctx.hooks_dir.components().collect();
    let mut key = sha1_hex(normalized.as_os_str().as_encoded_bytes());
    key.truncate(16);
    ctx.backup_dir.join(key)
}

pub(super) fn backup_paths(ctx: &Context, hook: Hook) -> (PathBuf, PathBuf) {
    let dir = backup_subdir(ctx);
    (
        dir.join(format!("{}.json", hook.name())),
        dir.join(format!("{}.orig", hook.name())),
    )
}

/// Records what was at the hook's path before this install changes it. The bytes are
/// written before the metadata, so a metadata file always has its bytes.
pub(super) fn save_backup(
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
            InstalledFile::new(&bytes_path, 0o600).write(&bytes)?;
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
    Ok(InstalledFile::new(&meta_path, 0o600).write(&json)?)
}

impl Backup {
    pub(super) fn load(ctx: &Context, hook: Hook) -> Result<Option<Backup>, Error> {
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
    pub(super) fn original_bytes(&self) -> Result<Vec<u8>, Error> {
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
    pub(super) fn remove(&self) -> Result<(), Error> {
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

pub(super) fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}
