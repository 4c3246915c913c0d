//! What a probe command printed, remembered per binary (its resolved path, size, modification
//! and change times, inode) and probe argv, so a review does not run `--help` again for a
//! binary that has not changed (SPEC §6.1). Kept in one JSON file under the repository's git
//! dir (`.git/pair/probe-cache.json`), replaced whole through the one atomic writer; a cache
//! that cannot be read or written only means probing again. Capabilities are always checked
//! against the remembered output with the data in force, never stored.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The file's schema version: anything else is ignored (and replaced on the next write).
const VERSION: u32 = 1;
/// At most this many entries are kept (the newest written win).
const MAX_ENTRIES: usize = 64;

/// The identity of an installed binary: when any of it changes, its probe runs again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The path with every symlink resolved (`node_modules/.bin/claude` → the real file).
    pub path: PathBuf,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub inode: u64,
}

impl Fingerprint {
    /// The fingerprint of the file `program` names, following symlinks; `None` when it cannot
    /// be read (then nothing is cached for it).
    pub fn of(program: &Path) -> Option<Fingerprint> {
        let path = std::fs::canonicalize(program).ok()?;
        let meta = std::fs::metadata(&path).ok()?;
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Some(Fingerprint {
            size: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
            path,
        })
    }
}

/// One remembered probe: the binary as it was, the probe argv, and what it printed (stdout,
/// a newline, the stderr tail: exactly what capabilities are checked against).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    binary: Fingerprint,
    argv: Vec<String>,
    output: String,
    /// How the probe ended (`exit status 0`), shown as the probe result.
    result: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    v: u32,
    entries: Vec<Entry>,
}

/// The probe cache of one repository (or an in-memory one, for a single command).
#[derive(Debug)]
pub struct ProbeCache {
    /// Where it is kept; `None`: in memory only.
    path: Option<PathBuf>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: Vec<Entry>,
    changed: bool,
}

impl ProbeCache {
    /// The cache kept at `path` (read now; a missing, unreadable or foreign file is empty).
    pub fn at(path: PathBuf) -> ProbeCache {
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<File>(&bytes).ok())
            .filter(|f| f.v == VERSION)
            .map(|f| f.entries)
            .unwrap_or_default();
        ProbeCache {
            path: Some(path),
            state: Mutex::new(State {
                entries,
                changed: false,
            }),
        }
    }

    /// A cache that lives as long as this value: one command probes each binary once.
    pub fn in_memory() -> ProbeCache {
        ProbeCache {
            path: None,
            state: Mutex::new(State::default()),
        }
    }

    /// What `argv` printed for this very binary, and how it ended, when remembered.
    pub fn get(&self, binary: &Fingerprint, argv: &[String]) -> Option<(String, String)> {
        let state = self.state.lock().ok()?;
        state
            .entries
            .iter()
            .find(|e| e.binary == *binary && e.argv == argv)
            .map(|e| (e.output.clone(), e.result.clone()))
    }

    /// Remembers a probe that finished with success (anything else is probed again).
    pub fn put(&self, binary: Fingerprint, argv: &[String], output: String, result: String) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        // One entry per resolved path and argv: a changed binary replaces its old entry.
        state
            .entries
            .retain(|e| !(e.binary.path == binary.path && e.argv == argv));
        state.entries.push(Entry {
            binary,
            argv: argv.to_vec(),
            output,
            result,
        });
        let excess = state.entries.len().saturating_sub(MAX_ENTRIES);
        state.entries.drain(..excess);
        state.changed = true;
    }

    /// Writes the cache when it changed (atomically, under the git dir). A failure is
    /// returned for the caller to ignore or report: the next review probes again.
    pub fn save(&self) -> Result<(), crate::util::fs::Failure> {
        let (Some(path), Ok(mut state)) = (&self.path, self.state.lock()) else {
            return Ok(());
        };
        if !state.changed {
            return Ok(());
        }
        let file = File {
            v: VERSION,
            entries: std::mem::take(&mut state.entries),
        };
        let bytes = serde_json::to_vec_pretty(&file).unwrap_or_default();
        state.entries = file.entries;
        let scratch = path.parent().unwrap_or_else(|| Path::new(".")).join("tmp");
        crate::util::fs::write_atomically_via(&scratch, path, &bytes)?;
        state.changed = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_probe_is_found_until_the_binary_changes() {
        let dir = tempfile::tempdir().expect("tmp");
        let bin = dir.path().join("claude");
        std::fs::write(&bin, "#!/bin/sh\n").expect("write");
        let argv = vec!["--help".to_owned()];
        let cache_file = dir.path().join("pair/probe-cache.json");
        let cache = ProbeCache::at(cache_file.clone());
        let print = Fingerprint::of(&bin).expect("fingerprint");
        assert_eq!(cache.get(&print, &argv), None);
        cache.put(
            print.clone(),
            &argv,
            "--print".into(),
            "exit status 0".into(),
        );
        cache.save().expect("save");
        let again = ProbeCache::at(cache_file.clone());
        assert_eq!(
            again.get(&print, &argv),
            Some(("--print".into(), "exit status 0".into()))
        );
        assert_eq!(again.get(&print, &["exec".to_owned()]), None);
        // Through a symlink it is the same binary.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&bin, &link).expect("link");
        assert_eq!(Fingerprint::of(&link), Some(print.clone()));
        // Touched: probed again, and the new entry replaces the old one.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&bin)
            .expect("open")
            .set_modified(later)
            .expect("touch");
        let touched = Fingerprint::of(&bin).expect("fingerprint");
        assert_ne!(touched, print);
        assert_eq!(again.get(&touched, &argv), None);
        again.put(touched.clone(), &argv, "new".into(), "exit status 0".into());
        again.save().expect("save");
        let text = std::fs::read_to_string(&cache_file).expect("read");
        assert_eq!(text.matches("\"argv\"").count(), 1, "{text}");
        // A foreign or torn file is an empty cache.
        std::fs::write(&cache_file, "{\"v\": 9, \"entries\": []}").expect("write");
        assert_eq!(
            ProbeCache::at(cache_file.clone()).get(&touched, &argv),
            None
        );
        std::fs::write(&cache_file, "{").expect("write");
        assert_eq!(ProbeCache::at(cache_file).get(&touched, &argv), None);
    }
}
