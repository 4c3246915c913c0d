//! Claude Code session logs (`projects/<dir>/<session>.jsonl` and `<session>/subagents/*.jsonl`):
//! the per-file scan (usage lines → entries) and the session merge (dedup by message id,
//! keeping the line with the highest `output_tokens`). Pure over bytes; no file access.

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use serde::{Deserialize, Serialize};

use super::scan::Markers;
use super::tokens::TokenCounts;
use crate::util::time::{TimeWindow, Timestamp};

/// One usage-bearing line of a Claude log, reduced to what pricing needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ClaudeEntry {
    /// `m:<message.id>`, else `r:<requestId>`, else `None` (cannot be deduplicated).
    pub key: Option<String>,
    pub at: Option<Timestamp>,
    /// Index into [`ClaudeScan::models`].
    pub model: u32,
    pub fast: bool,
    /// Byte offset of the line in its file: the tie-break that keeps merges deterministic.
    pub offset: u64,
    pub tokens: TokenCounts,
}

/// What one Claude log file contributes: entries in file order, the model names they
/// reference, and the candidate lines that could not be read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ClaudeScan {
    pub models: Vec<String>,
    pub entries: Vec<ClaudeEntry>,
    pub skipped_lines: u64,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "requestId")]
    request_id: Option<Cow<'a, str>>,
    #[serde(default, rename = "isApiErrorMessage")]
    is_api_error: Option<bool>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    usage: Option<Usage<'a>>,
}

#[derive(Deserialize)]
struct Usage<'a> {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_creation: Option<CacheCreation>,
    #[serde(borrow, default)]
    speed: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct CacheCreation {
    #[serde(default)]
    ephemeral_5m_input_tokens: u64,
    #[serde(default)]
    ephemeral_1h_input_tokens: u64,
}

/// The marker every usage-bearing line contains (as a key).
pub(crate) fn markers() -> Markers {
    Markers::new(&[r#""usage""#])
}

/// One request another agent's log records, read into a Claude-shaped entry.
pub(crate) struct LoggedRequest<'a> {
    /// What a replay of the same request repeats (`m:<message id>`).
    pub key: Option<String>,
    pub at: Option<Timestamp>,
    pub model: &'a str,
    pub tokens: TokenCounts,
}

impl ClaudeScan {
    /// Appends the requests `requests` finds in each complete JSON line of `buf` (`base` is
    /// `buf`'s offset): the walk the Gemini and Qwen readers share. A line that is not JSON is
    /// counted as skipped.
    pub(crate) fn scan_json_lines(
        &mut self,
        markers: &Markers,
        buf: &[u8],
        base: u64,
        requests: impl for<'v> Fn(&'v serde_json::Value) -> Vec<LoggedRequest<'v>>,
    ) {
        let mut model_index: HashMap<String, u32> = self
            .models
            .iter()
            .enumerate()
            .map(|(i, m)| (m.clone(), i as u32))
            .collect();
        markers.for_each_line(buf, |line, offset| {
            if line.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
                self.skipped_lines += 1;
                return;
            };
            for request in requests(&value) {
                let model = *model_index
                    .entry(request.model.to_owned())
                    .or_insert_with(|| {
                        self.models.push(request.model.to_owned());
                        (self.models.len() - 1) as u32
                    });
                self.entries.push(ClaudeEntry {
                    key: request.key,
                    at: request.at,
                    model,
                    fast: false,
                    offset: base + offset as u64,
                    tokens: request.tokens,
                });
            }
        });
    }
}

impl ClaudeScan {
    /// Appends the entries of the complete lines in `buf`; `base` is `buf`'s offset in the file.
    pub(crate) fn scan(&mut self, markers: &Markers, buf: &[u8], base: u64) {
        let mut model_index: HashMap<String, u32> = self
            .models
            .iter()
            .enumerate()
            .map(|(i, m)| (m.clone(), i as u32))
            .collect();
        markers.for_each_line(buf, |line, offset| {
            if line.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            match parse_line(line) {
                Ok(Some(parsed)) => {
                    let model = match model_index.entry(parsed.model.into_owned()) {
                        Entry::Occupied(e) => *e.get(),
                        Entry::Vacant(e) => {
                            self.models.push(e.key().clone());
                            *e.insert((self.models.len() - 1) as u32)
                        }
                    };
                    self.entries.push(ClaudeEntry {
                        key: parsed.key,
                        at: parsed.at,
                        model,
                        fast: parsed.fast,
                        offset: base + offset as u64,
                        tokens: parsed.tokens,
                    });
                }
                Ok(None) => {}
                Err(()) => self.skipped_lines += 1,
            }
        });
    }
}

impl ClaudeScan {
    /// Drops, among the entries from `start` on, those another of them outranks (same key,
    /// per [`merge`]'s order): they can never win the session merge, and the cache stores a
    /// third as much. An entry outranked by another of the same file never wins, whichever
    /// subset the two are found in, so a resume compacts only what it appended (its cost is
    /// the append's, not the file's); the few outranked entries left (a message streamed
    /// across two resumes) cost only space.
    pub(crate) fn compact_from(&mut self, start: usize) {
        let start = start.min(self.entries.len());
        let mut best: HashMap<&str, usize, FastHash> = HashMap::default();
        for (i, e) in self.entries.iter().enumerate().skip(start) {
            let Some(key) = e.key.as_deref() else {
                continue;
            };
            match best.entry(key) {
                Entry::Occupied(mut slot) => {
                    let held = &self.entries[*slot.get()];
                    if rank(0, e) < rank(0, held) {
                        slot.insert(i);
                    }
                }
                Entry::Vacant(slot) => {
                    slot.insert(i);
                }
            }
        }
        let keep: Vec<bool> = self.entries[start..]
            .iter()
            .enumerate()
            .map(|(i, e)| {
                e.key
                    .as_deref()
                    .is_none_or(|k| best.get(k) == Some(&(start + i)))
            })
            .collect();
        let mut flags = std::iter::repeat_n(true, start).chain(keep);
        self.entries.retain(|_| flags.next().unwrap_or(true));
    }
}

/// A fast, non-cryptographic hasher for message ids (the Fx hash of rustc: a rotate, an xor
/// and a multiply per word). The keys are ids an agent logged; a collision only slows a map.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHash;

impl std::hash::BuildHasher for FastHash {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

pub(crate) struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(
                chunk.try_into().expect("chunks are exactly 8 bytes"),
            ));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Rank = (std::cmp::Reverse<u64>, Option<Timestamp>, usize, u64);

/// Lower is better: highest output, then earliest timestamp, file, offset.
fn rank(file: usize, e: &ClaudeEntry) -> Rank {
    (std::cmp::Reverse(e.tokens.output), e.at, file, e.offset)
}

struct Parsed<'a> {
    key: Option<String>,
    at: Option<Timestamp>,
    model: Cow<'a, str>,
    fast: bool,
    tokens: TokenCounts,
}

/// `Ok(None)` for a well-formed line that carries no billable usage (user lines, `<synthetic>`
/// and API-error lines); `Err` for a line that is not valid UTF-8 JSON of the expected shape.
fn parse_line(line: &[u8]) -> Result<Option<Parsed<'_>>, ()> {
    let text = std::str::from_utf8(line).map_err(|_| ())?;
    let parsed: Line<'_> = serde_json::from_str(text).map_err(|_| ())?;
    let Some(message) = parsed.message else {
        return Ok(None);
    };
    let Some(usage) = message.usage else {
        return Ok(None);
    };
    let model = message.model.unwrap_or(Cow::Borrowed(""));
    if parsed.is_api_error == Some(true) || model == "<synthetic>" {
        return Ok(None);
    }
    let key = match (
        message.id.filter(|id| !id.is_empty()),
        parsed.request_id.filter(|r| !r.is_empty()),
    ) {
        (Some(id), _) => Some(format!("m:{id}")),
        (None, Some(request)) => Some(format!("r:{request}")),
        (None, None) => None,
    };
    // The 5m/1h split is authoritative when logged; tokens it does not account for are
    // priced as 5m writes, the cheaper tier Claude Code uses by default.
    let (w5, w1) = match usage.cache_creation {
        Some(split) => {
            let accounted = split
                .ephemeral_5m_input_tokens
                .saturating_add(split.ephemeral_1h_input_tokens);
            let rest = usage.cache_creation_input_tokens.saturating_sub(accounted);
            (
                split.ephemeral_5m_input_tokens.saturating_add(rest),
                split.ephemeral_1h_input_tokens,
            )
        }
        None => (usage.cache_creation_input_tokens, 0),
    };
    Ok(Some(Parsed {
        key,
        at: parsed.timestamp.as_deref().and_then(Timestamp::parse),
        model,
        fast: usage.speed.as_deref() == Some("fast"),
        tokens: TokenCounts {
            input: usage.input_tokens,
            output: usage.output_tokens,
            cache_write_5m: w5,
            cache_write_1h: w1,
            cache_read: usage.cache_read_input_tokens,
            ..TokenCounts::default()
        },
    }))
}

/// One priced request after the session merge.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request<'a> {
    pub model: &'a str,
    pub fast: bool,
    pub tokens: TokenCounts,
}

/// Merges the scans of one session's files (main file first, then subagents) into its
/// billable requests inside `window`.
///
/// Lines sharing a key are one API response (streamed over several lines, or replayed by a
/// sidechain or a resumed session): the line with the highest `output_tokens` is kept
/// whole; ties go to the earliest line (timestamp, then file order, then position), so the
/// window sees the response when it was first written.
pub(crate) fn merge<'a>(scans: &'a [&'a ClaudeScan], window: &TimeWindow) -> Vec<Request<'a>> {
    let mut best: HashMap<&str, (Rank, usize, usize), FastHash> = HashMap::default();
    let mut unkeyed = Vec::new();
    for (file, scan) in scans.iter().enumerate() {
        for (i, entry) in scan.entries.iter().enumerate() {
            let Some(key) = entry.key.as_deref() else {
                unkeyed.push((file, i));
                continue;
            };
            let candidate: Rank = rank(file, entry);
            match best.entry(key) {
                Entry::Occupied(mut e) => {
                    if candidate < e.get().0 {
                        e.insert((candidate, file, i));
                    }
                }
                Entry::Vacant(e) => {
                    e.insert((candidate, file, i));
                }
            }
        }
    }
    let mut kept: Vec<(usize, usize)> = best
        .into_values()
        .map(|(_, f, i)| (f, i))
        .chain(unkeyed)
        .collect();
    kept.sort_unstable();
    kept.into_iter()
        .map(|(f, i)| (scans[f], &scans[f].entries[i]))
        .filter(|(_, e)| window.contains(e.at))
        .map(|(scan, e)| Request {
            model: scan.models.get(e.model as usize).map_or("", String::as_str),
            fast: e.fast,
            tokens: e.tokens,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> ClaudeScan {
        let mut s = ClaudeScan::default();
        s.scan(&markers(), text.as_bytes(), 0);
        s
    }

    fn line(id: &str, req: &str, ts: &str, model: &str, output: u64) -> String {
        format!(
            r#"{{"type":"assistant","timestamp":"{ts}","requestId":"{req}","message":{{"id":"{id}","model":"{model}","content":[{{"type":"text","text":"x"}}],"usage":{{"input_tokens":1,"output_tokens":{output},"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}}}}"#
        )
    }

    #[test]
    fn parses_usage_kinds() {
        type Row = (u64, u64, u64, u64, u64, bool);
        let cases: &[(&str, Option<Row>)] = &[
            // split present: 1h and 5m as logged
            (
                r#"{"message":{"id":"a","model":"m","usage":{"input_tokens":3,"output_tokens":8,"cache_creation_input_tokens":2000,"cache_read_input_tokens":18000,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":2000}}}}"#,
                Some((3, 8, 0, 2000, 18000, false)),
            ),
            // split absent: all 5m
            (
                r#"{"message":{"id":"a","model":"m","usage":{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":500}}}"#,
                Some((1, 2, 500, 0, 0, false)),
            ),
            // split under-reports: remainder as 5m
            (
                r#"{"message":{"id":"a","model":"m","usage":{"cache_creation_input_tokens":500,"cache_creation":{"ephemeral_1h_input_tokens":100}}}}"#,
                Some((0, 0, 400, 100, 0, false)),
            ),
            (
                r#"{"message":{"id":"a","model":"m","usage":{"output_tokens":5,"speed":"fast"}}}"#,
                Some((0, 5, 0, 0, 0, true)),
            ),
            // synthetic and API-error lines are not usage
            (
                r#"{"message":{"id":"a","model":"<synthetic>","usage":{"output_tokens":5}}}"#,
                None,
            ),
            (
                r#"{"isApiErrorMessage":true,"message":{"id":"a","model":"m","usage":{"output_tokens":5}}}"#,
                None,
            ),
            // a user line whose tool result mentions usage: no message usage
            (
                r#"{"type":"user","message":{"role":"user","content":"x"},"toolUseResult":{"usage":{"output_tokens":9}}}"#,
                None,
            ),
        ];
        for (text, want) in cases {
            let s = scan(text);
            assert_eq!(s.skipped_lines, 0, "{text}");
            let got = s.entries.first().map(|e| {
                let t = e.tokens;
                (
                    t.input,
                    t.output,
                    t.cache_write_5m,
                    t.cache_write_1h,
                    t.cache_read,
                    e.fast,
                )
            });
            assert_eq!(got, *want, "{text}");
        }
    }

    #[test]
    fn bad_lines_are_counted_not_fatal() {
        let good = line("m1", "r1", "2026-09-01T10:00:00Z", "m", 5);
        let cases: &[(Vec<u8>, usize, u64)] = &[
            (
                format!("{good}\n{{\"usage\": oops\n{good}").into_bytes(),
                2,
                1,
            ),
            // truncated in the middle of a usage line
            (
                format!("{good}\n{}", &good[..good.len() - 10]).into_bytes(),
                1,
                1,
            ),
            // invalid UTF-8 inside a usage line
            (
                [
                    good.as_bytes(),
                    b"\n",
                    &good.as_bytes()[..30],
                    &[0xff, 0xfe],
                    &good.as_bytes()[30..],
                ]
                .concat(),
                1,
                1,
            ),
            // usage is not an object
            (b"{\"message\":{\"id\":\"x\",\"usage\":7}}".to_vec(), 0, 1),
            // lines without the marker are never parsed, even when broken
            (format!("{{not json\n{good}\n\u{0}\u{1}").into_bytes(), 1, 0),
        ];
        for (bytes, entries, skipped) in cases {
            let mut s = ClaudeScan::default();
            s.scan(&markers(), bytes, 0);
            assert_eq!(
                (s.entries.len(), s.skipped_lines),
                (*entries, *skipped),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn dedup_keeps_highest_output_then_earliest() {
        let text = [
            line("A", "r1", "2026-09-01T10:00:02Z", "m", 8),
            line("A", "r1", "2026-09-01T10:00:05Z", "m", 412),
            line("B", "r2", "2026-09-01T10:00:20Z", "m", 230),
            line("B", "r9", "2026-09-01T10:00:21Z", "m", 230),
            line("", "r3", "2026-09-01T10:00:30Z", "m", 7),
            line("", "r3", "2026-09-01T10:00:31Z", "m", 9),
        ]
        .join("\n");
        let s = scan(&text);
        let scans = [&s];
        let got: Vec<u64> = merge(&scans, &TimeWindow::default())
            .iter()
            .map(|r| r.tokens.output)
            .collect();
        assert_eq!(got, vec![412, 230, 9]);
        // The tie on B goes to the earlier line: a window that ends before the replay keeps it.
        let window = TimeWindow {
            from: None,
            to: Timestamp::parse("2026-09-01T10:00:21Z"),
        };
        let got: Vec<u64> = merge(&scans, &window)
            .iter()
            .map(|r| r.tokens.output)
            .collect();
        assert_eq!(got, vec![412, 230]);
    }

    #[test]
    fn dedup_spans_files() {
        let main = scan(&line("A", "r1", "2026-09-01T10:00:02Z", "m", 10));
        let sub = scan(
            &[
                line("A", "r2", "2026-09-01T10:00:03Z", "m", 10),
                line("S", "r3", "2026-09-01T10:00:04Z", "m", 4),
            ]
            .join("\n"),
        );
        let scans = [&main, &sub];
        let got: Vec<u64> = merge(&scans, &TimeWindow::default())
            .iter()
            .map(|r| r.tokens.output)
            .collect();
        assert_eq!(got, vec![10, 4]);
    }

    #[test]
    fn compact_keeps_only_entries_that_can_win() {
        let text = [
            line("A", "r1", "2026-09-01T10:00:02Z", "m", 8),
            line("A", "r1", "2026-09-01T10:00:05Z", "m", 412),
            line("B", "r2", "2026-09-01T10:00:20Z", "m", 230),
            line("B", "r9", "2026-09-01T10:00:21Z", "m", 230),
            line("", "", "2026-09-01T10:00:30Z", "m", 7),
            line("", "", "2026-09-01T10:00:31Z", "m", 7),
        ]
        .join("\n");
        let full = scan(&text);
        let mut compacted = full.clone();
        compacted.compact_from(0);
        let kept: Vec<(Option<String>, u64)> = compacted
            .entries
            .iter()
            .map(|e| (e.key.clone(), e.tokens.output))
            .collect();
        assert_eq!(
            kept,
            vec![
                (Some("m:A".into()), 412),
                (Some("m:B".into()), 230),
                (None, 7),
                (None, 7)
            ]
        );
        assert_eq!(
            compacted.entries[1].offset, full.entries[2].offset,
            "the earlier B wins"
        );
        let window = TimeWindow::default();
        assert_eq!(merge(&[&full], &window), merge(&[&compacted], &window));

        // From the fourth entry on only: the first three stay as they were.
        let mut tail_only = full.clone();
        tail_only.compact_from(3);
        let kept: Vec<u64> = tail_only.entries.iter().map(|e| e.tokens.output).collect();
        assert_eq!(kept, vec![8, 412, 230, 230, 7, 7]);
        assert_eq!(merge(&[&full], &window), merge(&[&tail_only], &window));
        let mut past_the_end = full.clone();
        past_the_end.compact_from(99);
        assert_eq!(past_the_end, full);
    }
}
