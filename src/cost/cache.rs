//! Reading a log file into its scan, through an incremental on-disk cache keyed by path,
//! size and modification time. An unchanged file is not parsed again; a file that only grew
//! (agents append) is parsed from where the cached scan stopped. The cache is an
//! optimisation only: unreadable or corrupt cache files are ignored, write failures too.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::claude::ClaudeScan;
use super::codex::CodexScan;
use super::scan::{Markers, complete_len};

/// Bump when a scan's meaning changes, so old cache files are ignored.
const CACHE_VERSION: u32 = 1;
/// How many bytes before the cached end must be unchanged for an append-only resume.
const RESUME_CHECK_BYTES: u64 = 4096;

/// A per-file scan the cache can store and extend.
pub(crate) trait LogScan: Default + Serialize + DeserializeOwned {
    /// Distinguishes the two readers' cache files for the same path.
    const FORMAT: &'static str;
    /// Appends what the complete lines of `buf` (at file offset `base`) contribute.
    fn scan_bytes(&mut self, markers: &Markers, buf: &[u8], base: u64);
}

impl LogScan for ClaudeScan {
    const FORMAT: &'static str = "claude";
    fn scan_bytes(&mut self, markers: &Markers, buf: &[u8], base: u64) {
        self.scan(markers, buf, base);
    }
}

impl LogScan for CodexScan {
    const FORMAT: &'static str = "codex";
    fn scan_bytes(&mut self, markers: &Markers, buf: &[u8], _base: u64) {
        self.scan(markers, buf);
    }
}

/// How a file's scan was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CacheUse {
    /// No cache dir, or nothing usable in it: the whole file was parsed.
    Parsed,
    /// The file was unchanged: nothing was parsed.
    Hit,
    /// The file had grown: only the appended bytes were parsed.
    Resumed,
}

/// A file's scan: its newline-terminated part, and the unterminated last line (a line still
/// being written, or a truncated one), kept apart so a later resume can drop it.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct FileScan<S> {
    pub complete: S,
    pub tail: S,
}

#[derive(Serialize, Deserialize)]
struct Record<S> {
    v: u32,
    format: String,
    path: PathBuf,
    size: u64,
    mtime: (i64, u32),
    complete_len: u64,
    /// SHA-1 of the `RESUME_CHECK_BYTES` before `complete_len`.
    check: String,
    scan: FileScan<S>,
}

fn mtime_of(meta: &std::fs::Metadata) -> (i64, u32) {
    match meta.modified().ok().map(|t| t.duration_since(UNIX_EPOCH)) {
        Some(Ok(d)) => (
            i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            d.subsec_nanos(),
        ),
        Some(Err(e)) => (
            -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
            e.duration().subsec_nanos(),
        ),
        None => (0, 0),
    }
}

fn check_of(bytes_before_end: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes_before_end).digest().to_string()
}

fn cache_file(cache_dir: &Path, format: &str, path: &Path) -> PathBuf {
    let mut h = sha1_smol::Sha1::new();
    h.update(format.as_bytes());
    h.update(b"\0");
    h.update(path.as_os_str().as_encoded_bytes());
    cache_dir.join("cost").join(format!("{}.json", h.digest()))
}

fn read_record<S: LogScan>(file: &Path, log: &Path) -> Option<Record<S>> {
    let bytes = std::fs::read(file).ok()?;
    let record: Record<S> = serde_json::from_slice(&bytes).ok()?;
    (record.v == CACHE_VERSION && record.format == S::FORMAT && record.path == log)
        .then_some(record)
}

fn write_record<S: LogScan>(file: &Path, record: &Record<S>) {
    // Best effort: a cache that cannot be written only costs a re-parse next time.
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) else {
        return;
    };
    let Ok(json) = serde_json::to_vec(record) else {
        return;
    };
    if tmp.write_all(&json).is_ok() {
        let _ = tmp.persist(file);
    }
}

/// Scans the log at `path`, using and refreshing the cache under `cache_dir` when given.
pub(crate) fn load<S: LogScan>(
    path: &Path,
    markers: &Markers,
    cache_dir: Option<&Path>,
) -> std::io::Result<(FileScan<S>, CacheUse)> {
    // Taken before reading: if the file grows meanwhile, the next call sees a new mtime.
    let meta = std::fs::metadata(path)?;
    let mtime = mtime_of(&meta);
    let cache = cache_dir.map(|dir| cache_file(dir, S::FORMAT, path));
    let cached = cache
        .as_deref()
        .and_then(|file| read_record::<S>(file, path));
    if let Some(record) = &cached
        && record.size == meta.len()
        && record.mtime == mtime
    {
        let record = cached.expect("checked just above");
        return Ok((record.scan, CacheUse::Hit));
    }
    let (record, how) = match cached {
        Some(record) if meta.len() > record.complete_len => {
            match resume(path, markers, record, mtime)? {
                Ok(resumed) => (resumed, CacheUse::Resumed),
                Err(()) => (parse_whole(path, markers, mtime)?, CacheUse::Parsed),
            }
        }
        _ => (parse_whole(path, markers, mtime)?, CacheUse::Parsed),
    };
    if let Some(file) = &cache {
        write_record(file, &record);
    }
    Ok((record.scan, how))
}

fn parse_whole<S: LogScan>(
    path: &Path,
    markers: &Markers,
    mtime: (i64, u32),
) -> std::io::Result<Record<S>> {
    let bytes = std::fs::read(path)?;
    let done = complete_len(&bytes);
    let mut scan = FileScan::<S>::default();
    scan.complete.scan_bytes(markers, &bytes[..done], 0);
    scan.tail.scan_bytes(markers, &bytes[done..], done as u64);
    let check_from = done.saturating_sub(RESUME_CHECK_BYTES as usize);
    Ok(Record {
        v: CACHE_VERSION,
        format: S::FORMAT.to_owned(),
        path: path.to_owned(),
        size: bytes.len() as u64,
        mtime,
        complete_len: done as u64,
        check: check_of(&bytes[check_from..done]),
        scan,
    })
}

/// Extends a cached scan with the bytes appended since; `Err(())` when the bytes before the
/// cached end changed (the file was rewritten, not appended to).
fn resume<S: LogScan>(
    path: &Path,
    markers: &Markers,
    mut record: Record<S>,
    mtime: (i64, u32),
) -> std::io::Result<Result<Record<S>, ()>> {
    let check_from = record.complete_len.saturating_sub(RESUME_CHECK_BYTES);
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(check_from))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let check_len = (record.complete_len - check_from) as usize;
    if bytes.len() < check_len || check_of(&bytes[..check_len]) != record.check {
        return Ok(Err(()));
    }
    let new = &bytes[check_len..];
    let done = complete_len(new);
    let base = record.complete_len;
    record.scan.complete.scan_bytes(markers, &new[..done], base);
    record.scan.tail = S::default();
    record
        .scan
        .tail
        .scan_bytes(markers, &new[done..], base + done as u64);
    let end = base + done as u64;
    let total = &bytes[..check_len + done];
    let from = total.len().saturating_sub(RESUME_CHECK_BYTES as usize);
    record.check = check_of(&total[from..]);
    record.complete_len = end;
    record.size = check_from + bytes.len() as u64;
    record.mtime = mtime;
    Ok(Ok(record))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::claude;

    fn line(id: &str, output: u64) -> String {
        format!(
            r#"{{"timestamp":"2026-09-01T10:00:00Z","message":{{"id":"{id}","model":"m","usage":{{"output_tokens":{output}}}}}}}"#
        ) + "\n"
    }

    fn outputs(scan: &FileScan<ClaudeScan>) -> Vec<u64> {
        scan.complete
            .entries
            .iter()
            .chain(&scan.tail.entries)
            .map(|e| e.tokens.output)
            .collect()
    }

    fn append(path: &Path, text: &str) {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }

    #[test]
    fn unchanged_files_hit_grown_files_resume_rewritten_files_reparse() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let log = dir.path().join("s.jsonl");
        let m = claude::markers();
        std::fs::write(&log, line("a", 1) + &line("b", 2)).unwrap();

        let (scan, how) = load::<ClaudeScan>(&log, &m, Some(&cache)).unwrap();
        assert_eq!((outputs(&scan), how), (vec![1, 2], CacheUse::Parsed));
        let (scan, how) = load::<ClaudeScan>(&log, &m, Some(&cache)).unwrap();
        assert_eq!((outputs(&scan), how), (vec![1, 2], CacheUse::Hit));

        // An unterminated line is read but not kept for resuming; once finished it counts once.
        let third = line("c", 3);
        let cut = third.len() - 5;
        append(&log, &third[..cut]);
        let (scan, how) = load::<ClaudeScan>(&log, &m, Some(&cache)).unwrap();
        assert_eq!(
            (outputs(&scan), how, scan.tail.skipped_lines),
            (vec![1, 2], CacheUse::Resumed, 1)
        );
        append(&log, &third[cut..]);
        append(&log, &line("d", 4)[..]);
        let (scan, how) = load::<ClaudeScan>(&log, &m, Some(&cache)).unwrap();
        assert_eq!(
            (outputs(&scan), how, scan.tail.skipped_lines),
            (vec![1, 2, 3, 4], CacheUse::Resumed, 0)
        );
        let offsets: Vec<u64> = scan.complete.entries.iter().map(|e| e.offset).collect();
        let fresh = load::<ClaudeScan>(&log, &m, None).unwrap().0;
        assert_eq!(
            offsets,
            fresh
                .complete
                .entries
                .iter()
                .map(|e| e.offset)
                .collect::<Vec<_>>()
        );

        // Rewritten (same length prefix changed, longer file): parsed from scratch.
        std::fs::write(
            &log,
            line("x", 9) + &line("y", 8) + &line("z", 7) + &line("w", 6) + &line("v", 5),
        )
        .unwrap();
        let (scan, how) = load::<ClaudeScan>(&log, &m, Some(&cache)).unwrap();
        assert_eq!(
            (outputs(&scan), how),
            (vec![9, 8, 7, 6, 5], CacheUse::Parsed)
        );

        // Shrunk: parsed from scratch.
        std::fs::write(&log, line("q", 1)).unwrap();
        let (scan, how) = load::<ClaudeScan>(&log, &m, Some(&cache)).unwrap();
        assert_eq!((outputs(&scan), how), (vec![1], CacheUse::Parsed));
    }

    #[test]
    fn corrupt_or_foreign_cache_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let log = dir.path().join("s.jsonl");
        let m = claude::markers();
        std::fs::write(&log, line("a", 1)).unwrap();
        load::<ClaudeScan>(&log, &m, Some(&cache)).unwrap();
        let file = cache_file(&cache, "claude", &log);
        for junk in ["", "{", "null", r#"{"v":1}"#, "\u{0}\u{ff}"] {
            std::fs::write(&file, junk).unwrap();
            let (scan, how) = load::<ClaudeScan>(&log, &m, Some(&cache)).unwrap();
            assert_eq!(
                (outputs(&scan), how),
                (vec![1], CacheUse::Parsed),
                "{junk:?}"
            );
        }
        // A valid record for another path is not used for this one.
        let other = dir.path().join("o.jsonl");
        std::fs::write(&other, line("o", 5)).unwrap();
        load::<ClaudeScan>(&other, &m, Some(&cache)).unwrap();
        std::fs::copy(cache_file(&cache, "claude", &other), &file).unwrap();
        let (scan, how) = load::<ClaudeScan>(&log, &m, Some(&cache)).unwrap();
        assert_eq!((outputs(&scan), how), (vec![1], CacheUse::Parsed));
        // Leaves no temporary files behind.
        let names: Vec<_> = std::fs::read_dir(cache.join("cost"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            names.iter().all(|n| n.to_string_lossy().ends_with(".json")),
            "{names:?}"
        );
    }

    #[test]
    fn unwritable_cache_dir_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("s.jsonl");
        std::fs::write(&log, line("a", 1)).unwrap();
        let blocker = dir.path().join("file-not-dir");
        std::fs::write(&blocker, "").unwrap();
        let (scan, how) = load::<ClaudeScan>(&log, &claude::markers(), Some(&blocker)).unwrap();
        assert_eq!((outputs(&scan), how), (vec![1], CacheUse::Parsed));
    }
}
