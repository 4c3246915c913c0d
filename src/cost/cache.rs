//! Reading a log file into its scan, through an incremental on-disk cache keyed by path,
//! size and modification time. An unchanged file is not parsed again; a file that only grew
//! (agents append) is parsed from where the cached scan stopped. Cache files are in the
//! compact binary format of `codec.rs`. The cache is an optimisation only: unreadable or
//! corrupt cache files are ignored, write failures too.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::claude::ClaudeScan;
use super::codec::{Codec, Reader, Writer};
use super::codex::CodexScan;
use super::copilot::CopilotScan;
use super::gemini::GeminiScan;
use super::qwen::QwenScan;
use super::scan::{Markers, complete_len};
use crate::util::fs::{AtomicWrite, Mode};

/// Bump when a scan's meaning or encoding changes, so old cache files are ignored.
const CACHE_VERSION: u32 = 2;
/// How many bytes before the cached end must be unchanged for an append-only resume.
const RESUME_CHECK_BYTES: u64 = 4096;

/// A per-file scan the cache can store and extend.
pub(crate) trait LogScan: Default + Codec {
    /// Distinguishes the two readers' cache files for the same path.
    const FORMAT: &'static str;
    /// Appends what the complete lines of `buf` (at file offset `base`) contribute.
    fn scan_bytes(&mut self, markers: &Markers, buf: &[u8], base: u64);
    /// Drops what can never count, among the items from `start` on (before caching).
    fn compact_from(&mut self, _start: usize) {}
    /// How many items (entries, events) the scan holds.
    fn len(&self) -> usize;
}

impl LogScan for ClaudeScan {
    const FORMAT: &'static str = "claude";
    fn scan_bytes(&mut self, markers: &Markers, buf: &[u8], base: u64) {
        self.scan(markers, buf, base);
    }
    fn compact_from(&mut self, start: usize) {
        ClaudeScan::compact_from(self, start);
    }
    fn len(&self) -> usize {
        self.entries.len()
    }
}

impl LogScan for GeminiScan {
    const FORMAT: &'static str = "gemini";
    fn scan_bytes(&mut self, markers: &Markers, buf: &[u8], base: u64) {
        self.scan(markers, buf, base);
    }
    fn compact_from(&mut self, start: usize) {
        self.0.compact_from(start);
    }
    fn len(&self) -> usize {
        self.0.entries.len()
    }
}

impl LogScan for CopilotScan {
    const FORMAT: &'static str = "copilot";
    fn scan_bytes(&mut self, markers: &Markers, buf: &[u8], base: u64) {
        self.scan(markers, buf, base);
    }
    fn compact_from(&mut self, start: usize) {
        self.0.compact_from(start);
    }
    fn len(&self) -> usize {
        self.0.entries.len()
    }
}

impl LogScan for QwenScan {
    const FORMAT: &'static str = "qwen";
    fn scan_bytes(&mut self, markers: &Markers, buf: &[u8], base: u64) {
        self.scan(markers, buf, base);
    }
    fn compact_from(&mut self, start: usize) {
        self.0.compact_from(start);
    }
    fn len(&self) -> usize {
        self.0.entries.len()
    }
}

impl LogScan for CodexScan {
    const FORMAT: &'static str = "codex";
    fn scan_bytes(&mut self, markers: &Markers, buf: &[u8], _base: u64) {
        self.scan(markers, buf);
    }
    fn len(&self) -> usize {
        self.events.len()
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
#[derive(Debug, Default)]
pub(crate) struct FileScan<S> {
    pub complete: S,
    pub tail: S,
}

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

pub(crate) fn mtime_of(meta: &std::fs::Metadata) -> (i64, u32) {
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

impl<S: LogScan> Record<S> {
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(self.v);
        w.str(&self.format);
        w.bytes(self.path.as_os_str().as_encoded_bytes());
        w.u64(self.size);
        w.i64(self.mtime.0);
        w.u32(self.mtime.1);
        w.u64(self.complete_len);
        w.str(&self.check);
        self.scan.complete.encode(&mut w);
        self.scan.tail.encode(&mut w);
        w.0
    }

    /// The record in `bytes` when it is this version's record of `log` as read by `S`.
    fn decode(bytes: &[u8], log: &Path) -> Option<Record<S>> {
        let mut r = Reader::new(bytes);
        let v = r.u32()?;
        let format = r.str()?;
        let path = r.bytes()?;
        if v != CACHE_VERSION || format != S::FORMAT || path != log.as_os_str().as_encoded_bytes() {
            return None;
        }
        let record = Record {
            v,
            format: format.to_owned(),
            path: log.to_owned(),
            size: r.u64()?,
            mtime: (r.i64()?, r.u32()?),
            complete_len: r.u64()?,
            check: r.str()?.to_owned(),
            scan: FileScan {
                complete: S::decode(&mut r)?,
                tail: S::decode(&mut r)?,
            },
        };
        r.is_empty().then_some(record)
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
    cache_dir.join("cost").join(format!("{}.scan", h.digest()))
}

fn read_record<S: LogScan>(file: &Path, log: &Path) -> Option<Record<S>> {
    Record::decode(&std::fs::read(file).ok()?, log)
}

fn write_record<S: LogScan>(file: &Path, record: &Record<S>) {
    // Best effort: a cache that cannot be written only costs a re-parse next time.
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let _ = AtomicWrite::new(Mode::Umasked(0o600))
        .named(".tmp", "")
        .write(file, &record.encode());
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

/// Scans a whole log held in memory, as [`load`] scans a file it parses whole (no cache).
pub(crate) fn scan_bytes<S: LogScan>(bytes: &[u8], markers: &Markers) -> FileScan<S> {
    let mut scan = FileScan::<S>::default();
    scan_stream(bytes, 0, markers, &mut scan, Vec::new(), CHUNK)
        .expect("reading from a byte slice cannot fail");
    scan.complete.compact_from(0);
    scan
}

fn parse_whole<S: LogScan>(
    path: &Path,
    markers: &Markers,
    mtime: (i64, u32),
) -> std::io::Result<Record<S>> {
    let file = std::fs::File::open(path)?;
    let mut scan = FileScan::<S>::default();
    let streamed = scan_stream(file, 0, markers, &mut scan, Vec::new(), CHUNK)?;
    scan.complete.compact_from(0);
    Ok(Record {
        v: CACHE_VERSION,
        format: S::FORMAT.to_owned(),
        path: path.to_owned(),
        size: streamed.end,
        mtime,
        complete_len: streamed.complete_end,
        check: check_of(&streamed.check),
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
    let mut before = Vec::new();
    (&mut file)
        .take(record.complete_len - check_from)
        .read_to_end(&mut before)?;
    if before.len() as u64 != record.complete_len - check_from || check_of(&before) != record.check
    {
        return Ok(Err(()));
    }
    record.scan.tail = S::default();
    let resumed_from = record.scan.complete.len();
    let streamed = scan_stream(
        file,
        record.complete_len,
        markers,
        &mut record.scan,
        before,
        CHUNK,
    )?;
    record.scan.complete.compact_from(resumed_from);
    record.check = check_of(&streamed.check);
    record.complete_len = streamed.complete_end;
    record.size = streamed.end;
    record.mtime = mtime;
    Ok(Ok(record))
}

/// Read size for streaming scans: big enough to amortise syscalls, small enough to stay in
/// cache and to avoid faulting in a buffer the size of a 100 MB log.
const CHUNK: usize = 1 << 21;

/// Where a streaming scan ended.
struct Streamed {
    /// File offset after the last `\n`.
    complete_end: u64,
    /// File offset of the end of what was read.
    end: u64,
    /// The last `RESUME_CHECK_BYTES` before `complete_end`.
    check: Vec<u8>,
}

/// Scans `reader` (positioned at file offset `base`) chunk by chunk: complete lines go into
/// `scan.complete`, the unterminated rest into `scan.tail`. `check` holds the bytes before
/// `base` that the resume check covers.
fn scan_stream<S: LogScan>(
    mut reader: impl Read,
    base: u64,
    markers: &Markers,
    scan: &mut FileScan<S>,
    mut check: Vec<u8>,
    chunk: usize,
) -> std::io::Result<Streamed> {
    let mut buf = vec![0u8; chunk.max(1)];
    let mut filled = 0;
    let mut buf_base = base;
    loop {
        if filled == buf.len() {
            // A line longer than the buffer: grow until it fits.
            buf.resize(buf.len() * 2, 0);
        }
        let n = match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        filled += n;
        let done = complete_len(&buf[..filled]);
        if done == 0 {
            continue;
        }
        scan.complete.scan_bytes(markers, &buf[..done], buf_base);
        keep_last(&mut check, &buf[..done]);
        buf.copy_within(done..filled, 0);
        filled -= done;
        buf_base += done as u64;
    }
    scan.tail.scan_bytes(markers, &buf[..filled], buf_base);
    Ok(Streamed {
        complete_end: buf_base,
        end: buf_base + filled as u64,
        check,
    })
}

/// Appends `more` to `window`, keeping only its last `RESUME_CHECK_BYTES`.
fn keep_last(window: &mut Vec<u8>, more: &[u8]) {
    let limit = RESUME_CHECK_BYTES as usize;
    if more.len() >= limit {
        window.clear();
        window.extend_from_slice(&more[more.len() - limit..]);
    } else {
        window.extend_from_slice(more);
        let excess = window.len().saturating_sub(limit);
        window.drain(..excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::claude;
    use std::io::Write as _;

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
    fn streaming_in_any_chunk_size_equals_scanning_the_whole_buffer() {
        let mut text = String::new();
        for i in 0..40 {
            text += &line(&format!("id{i}"), i);
            if i % 7 == 0 {
                text += &format!(
                    "{{\"type\":\"user\",\"content\":\"{}\"}}\n",
                    "x".repeat(i as usize * 13)
                );
            }
            if i % 11 == 0 {
                text += "{\"usage\": broken\n";
            }
        }
        let last = line("last", 99);
        text += &last[..last.len() - 5];
        let m = claude::markers();
        let bytes = text.as_bytes();
        let done = complete_len(bytes);
        let mut whole = FileScan::<ClaudeScan>::default();
        whole.complete.scan(&m, &bytes[..done], 0);
        whole.tail.scan(&m, &bytes[done..], done as u64);
        for chunk in [1, 7, 64, 1000, 1 << 20] {
            let mut streamed = FileScan::<ClaudeScan>::default();
            let end = scan_stream(bytes, 0, &m, &mut streamed, Vec::new(), chunk).unwrap();
            assert_eq!(streamed.complete, whole.complete, "chunk {chunk}");
            assert_eq!(streamed.tail, whole.tail, "chunk {chunk}");
            assert_eq!(
                (end.complete_end, end.end),
                (done as u64, bytes.len() as u64)
            );
            let from = done.saturating_sub(RESUME_CHECK_BYTES as usize);
            assert_eq!(end.check, &bytes[from..done], "chunk {chunk}");
        }
        assert_eq!(whole.complete.skipped_lines, 4);
        assert_eq!(whole.tail.skipped_lines, 1);
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
        for junk in [
            "",
            "{",
            "null",
            r#"{"v":1}"#,
            "\u{0}\u{ff}",
            "\u{2}\u{0}\u{0}\u{0}",
        ] {
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
            names.iter().all(|n| n.to_string_lossy().ends_with(".scan")),
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
