//! Checkpoint receipts in `.git/pair/checkpoints/<id>.json`: which checkpoints this clone made,
//! in which work tree, with which check command. `.git/pair/` is never shared (push and pull
//! move refs only), so no record pulled from elsewhere can forge a receipt: it is what lets
//! `checkpoint verify` run a check that this very work tree recorded without asking again.
//! Also `.git/pair/restored-from-elsewhere.json`: the work tree was last laid down by
//! restoring a checkpoint this clone did not make, so a `pair.trustedChecks` command would run
//! files that came from elsewhere (cleared when the local user confirms a check by hand, or
//! restores a checkpoint this clone made).

use serde::{Deserialize, Serialize};

use super::{Error, Repo};
use crate::model::CheckpointId;
use crate::util::fs::{AtomicWrite, Mode};

/// What `checkpoint create` remembers locally.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    pub v: u32,
    /// The work tree the checkpoint was made in (absolute).
    pub path: String,
    /// The check command it recorded, exactly.
    pub check: Option<String>,
}

/// The file saying the work tree holds a checkpoint restored from elsewhere.
const FOREIGN_RESTORE: &str = "restored-from-elsewhere.json";

/// What `checkpoint restore` remembers after laying down a checkpoint made elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct ForeignRestore {
    v: u32,
    checkpoint: String,
}

impl Repo {
    /// Remembers that the work tree now holds checkpoint `id`, made elsewhere.
    pub fn write_foreign_restore(&self, id: &CheckpointId) -> Result<(), Error> {
        let record = ForeignRestore {
            v: crate::model::SCHEMA_VERSION,
            checkpoint: id.to_string(),
        };
        let mut bytes = serde_json::to_vec(&record).expect("a restore mark serializes");
        bytes.push(b'\n');
        AtomicWrite::new(Mode::Umasked(0o666))
            .write(&self.pair_dir().join(FOREIGN_RESTORE), &bytes)
            .map_err(|(action, at, source)| Error::io(action, &at)(source))
    }

    /// The checkpoint restored from elsewhere that laid down the work tree, if the local user
    /// has not confirmed a check by hand since. A mark that cannot be read still counts (as `?`).
    pub fn foreign_restore(&self) -> Option<String> {
        let bytes = std::fs::read(self.pair_dir().join(FOREIGN_RESTORE)).ok()?;
        Some(
            serde_json::from_slice::<ForeignRestore>(&bytes)
                .map(|r| r.checkpoint)
                .unwrap_or_else(|_| "?".to_owned()),
        )
    }

    /// The local user vouched for the work tree: trusted checks may run on it again.
    pub fn clear_foreign_restore(&self) -> Result<(), Error> {
        let path = self.pair_dir().join(FOREIGN_RESTORE);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("remove", &path)(e))
            }
            _ => Ok(()),
        }
    }

    fn receipt_path(&self, id: &CheckpointId) -> std::path::PathBuf {
        self.pair_dir()
            .join("checkpoints")
            .join(format!("{id}.json"))
    }

    /// Remembers that this work tree made checkpoint `id` with `check`.
    pub fn write_checkpoint_receipt(
        &self,
        id: &CheckpointId,
        path: &str,
        check: Option<&str>,
    ) -> Result<(), Error> {
        let file = self.receipt_path(id);
        let receipt = Receipt {
            v: crate::model::SCHEMA_VERSION,
            path: path.to_owned(),
            check: check.map(str::to_owned),
        };
        let mut bytes = serde_json::to_vec(&receipt).expect("a receipt serializes");
        bytes.push(b'\n');
        // Whole or not at all: a torn receipt would read as none.
        AtomicWrite::new(Mode::Umasked(0o666))
            .write(&file, &bytes)
            .map_err(|(action, at, source)| Error::io(action, &at)(source))
    }

    /// The receipt of checkpoint `id`, when this clone made it (an unreadable one counts as
    /// none: the check is then confirmed by hand).
    pub fn checkpoint_receipt(&self, id: &CheckpointId) -> Option<Receipt> {
        let bytes = std::fs::read(self.receipt_path(id)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}
