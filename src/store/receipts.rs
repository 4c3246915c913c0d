//! Checkpoint receipts in `.git/pair/checkpoints/<id>.json`: which checkpoints this clone made,
//! in which work tree, with which check command. `.git/pair/` is never shared (push and pull
//! move refs only), so no record pulled from elsewhere can forge a receipt: it is what lets
//! `checkpoint verify` run a check that this very work tree recorded without asking again.

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

impl Repo {
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
