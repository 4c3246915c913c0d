//! The priced result of a whole session, remembered beside the per-file scan cache: when
//! none of the session's files changed (same list, sizes and modification times) and the
//! window and price table are the same, a session is priced again by reading one small file,
//! without loading any scan. `budget-check` runs before every round on sessions that mostly
//! did not change; this is what keeps it cheap. An optimisation only: unreadable or stale
//! memos are ignored, write failures too.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::cache::mtime_of;
use super::discover::Agent;
use super::pricing::Pricing;
use crate::util::fs::{AtomicWrite, Mode};
use crate::util::time::TimeWindow;

/// Bump when a memo's meaning changes, so old memo files are ignored.
const MEMO_VERSION: u32 = 1;

/// The identity of one pricing call and of the files it read.
pub(crate) struct Memo {
    file: PathBuf,
    key: String,
    files: Vec<FileState>,
}

/// A log file as it was priced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileState {
    path: PathBuf,
    size: u64,
    mtime: (i64, u32),
}

#[derive(Serialize, Deserialize)]
struct Stored<T> {
    v: u32,
    key: String,
    files: Vec<FileState>,
    cost: T,
}

impl Memo {
    /// The memo of pricing `files` of `session_id` inside `window` with `pricing`, under
    /// `cache_dir`; None when a file cannot be looked at (it is then priced as usual).
    pub(crate) fn new(
        cache_dir: &Path,
        agent: Agent,
        session_id: &str,
        files: &[PathBuf],
        pricing: &Pricing,
        window: Option<TimeWindow>,
    ) -> Option<Memo> {
        let files = files
            .iter()
            .map(|path| {
                let meta = std::fs::metadata(path).ok()?;
                Some(FileState {
                    path: path.clone(),
                    size: meta.len(),
                    mtime: mtime_of(&meta),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let key = format!(
            "v{MEMO_VERSION} {agent:?} {session_id} {window:?} pricing {}",
            pricing.fingerprint()
        );
        let name = sha1_smol::Sha1::from(key.as_bytes()).digest().to_string();
        Some(Memo {
            file: cache_dir.join("cost").join(format!("session-{name}.json")),
            key,
            files,
        })
    }

    /// How many files the priced session has.
    pub(crate) fn file_count(&self) -> usize {
        self.files.len()
    }

    /// The remembered cost, when every file is as it was when it was priced.
    pub(crate) fn lookup<T: DeserializeOwned>(&self) -> Option<T> {
        let bytes = std::fs::read(&self.file).ok()?;
        let stored: Stored<T> = serde_json::from_slice(&bytes).ok()?;
        (stored.v == MEMO_VERSION && stored.key == self.key && stored.files == self.files)
            .then_some(stored.cost)
    }

    /// Remembers `cost` (best effort).
    pub(crate) fn store<T: Serialize>(&self, cost: &T) {
        let Some(dir) = self.file.parent() else {
            return;
        };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let stored = Stored {
            v: MEMO_VERSION,
            key: self.key.clone(),
            files: self.files.clone(),
            cost,
        };
        let Ok(json) = serde_json::to_vec(&stored) else {
            return;
        };
        let _ = AtomicWrite::new(Mode::Umasked(0o600))
            .named(".tmp", "")
            .write(&self.file, &json);
    }
}
