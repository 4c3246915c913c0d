//! The scan cache's file format: a compact little-endian binary encoding of per-file scans
//! (lengths before contents, timestamps as milliseconds, tokens as integers). A 100 MB log's
//! scan is tens of thousands of entries: as JSON it took longer to read and write back than
//! the bytes an agent appends between two rounds take to parse. Pure over bytes; a truncated
//! or foreign buffer decodes to None, never to a wrong scan.

use super::claude::{ClaudeEntry, ClaudeScan};
use super::codex::{CodexEvent, CodexScan, Counters};
use super::tokens::TokenCounts;
use crate::util::time::Timestamp;

/// Appends values to a buffer.
#[derive(Default)]
pub(crate) struct Writer(pub Vec<u8>);

impl Writer {
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn bytes(&mut self, v: &[u8]) {
        self.len(v.len());
        self.0.extend_from_slice(v);
    }
    pub(crate) fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn strings(&mut self, v: &[String]) {
        self.len(v.len());
        for s in v {
            self.str(s);
        }
    }
    fn timestamp(&mut self, v: Option<Timestamp>) {
        match v {
            None => self.u8(0),
            Some(t) => {
                self.u8(1);
                self.i64(t.0);
            }
        }
    }
    fn tokens(&mut self, t: &TokenCounts) {
        for v in [
            t.input,
            t.output,
            t.cache_write_5m,
            t.cache_write_1h,
            t.cache_read,
            t.cached_input,
            t.reasoning_output,
        ] {
            self.u64(v);
        }
    }
    fn counters(&mut self, v: Option<&Counters>) {
        match v {
            None => self.u8(0),
            Some(c) => {
                self.u8(1);
                for n in c {
                    self.u64(*n);
                }
            }
        }
    }
}

/// Reads values back, in the order they were written; None once the buffer does not hold
/// what is asked for.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.buf.split_first_chunk::<N>()?;
        self.buf = rest;
        Some(*head)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|[b]| b)
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
    pub(crate) fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }
    fn len(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        // A length can never exceed what is left: a corrupt one must not allocate wildly.
        (n <= self.buf.len()).then_some(n)
    }
    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(head)
    }
    pub(crate) fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }
    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn strings(&mut self) -> Option<Vec<String>> {
        let n = self.len()?;
        (0..n).map(|_| self.str().map(str::to_owned)).collect()
    }
    fn timestamp(&mut self) -> Option<Option<Timestamp>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(Timestamp(self.i64()?))),
            _ => None,
        }
    }
    fn tokens(&mut self) -> Option<TokenCounts> {
        Some(TokenCounts {
            input: self.u64()?,
            output: self.u64()?,
            cache_write_5m: self.u64()?,
            cache_write_1h: self.u64()?,
            cache_read: self.u64()?,
            cached_input: self.u64()?,
            reasoning_output: self.u64()?,
        })
    }
    fn counters(&mut self) -> Option<Option<Counters>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some([self.u64()?, self.u64()?, self.u64()?, self.u64()?])),
            _ => None,
        }
    }
}

/// A scan the cache can store.
pub(crate) trait Codec: Sized {
    fn encode(&self, w: &mut Writer);
    fn decode(r: &mut Reader<'_>) -> Option<Self>;
}

impl Codec for ClaudeScan {
    fn encode(&self, w: &mut Writer) {
        w.strings(&self.models);
        w.len(self.entries.len());
        for e in &self.entries {
            match &e.key {
                None => w.u8(0),
                Some(key) => {
                    w.u8(1);
                    w.str(key);
                }
            }
            w.timestamp(e.at);
            w.u32(e.model);
            w.u8(u8::from(e.fast));
            w.u64(e.offset);
            w.tokens(&e.tokens);
        }
        w.u64(self.skipped_lines);
    }

    fn decode(r: &mut Reader<'_>) -> Option<Self> {
        let models = r.strings()?;
        let n = r.len()?;
        let mut entries = Vec::with_capacity(n.min(r.buf.len() / 8));
        for _ in 0..n {
            let key = match r.u8()? {
                0 => None,
                1 => Some(r.str()?.to_owned()),
                _ => return None,
            };
            let at = r.timestamp()?;
            let model = r.u32()?;
            if model as usize >= models.len() {
                return None;
            }
            entries.push(ClaudeEntry {
                key,
                at,
                model,
                fast: r.bool()?,
                offset: r.u64()?,
                tokens: r.tokens()?,
            });
        }
        Some(ClaudeScan {
            models,
            entries,
            skipped_lines: r.u64()?,
        })
    }
}

/// A Gemini scan is Claude-shaped: the same encoding.
impl Codec for super::gemini::GeminiScan {
    fn encode(&self, w: &mut Writer) {
        self.0.encode(w);
    }

    fn decode(r: &mut Reader<'_>) -> Option<Self> {
        ClaudeScan::decode(r).map(Self)
    }
}

/// A Copilot scan is Claude-shaped: the same encoding.
impl Codec for super::copilot::CopilotScan {
    fn encode(&self, w: &mut Writer) {
        self.0.encode(w);
    }

    fn decode(r: &mut Reader<'_>) -> Option<Self> {
        ClaudeScan::decode(r).map(Self)
    }
}

/// A Qwen scan is Claude-shaped: the same encoding.
impl Codec for super::qwen::QwenScan {
    fn encode(&self, w: &mut Writer) {
        self.0.encode(w);
    }

    fn decode(r: &mut Reader<'_>) -> Option<Self> {
        ClaudeScan::decode(r).map(Self)
    }
}

impl Codec for CodexScan {
    fn encode(&self, w: &mut Writer) {
        w.strings(&self.models);
        w.len(self.events.len());
        for event in &self.events {
            match event {
                CodexEvent::Context { model, fast } => {
                    w.u8(0);
                    match model {
                        None => w.u8(0),
                        Some(m) => {
                            w.u8(1);
                            w.u32(*m);
                        }
                    }
                    w.u8(u8::from(*fast));
                }
                CodexEvent::Usage { at, total, last } => {
                    w.u8(1);
                    w.timestamp(*at);
                    w.counters(total.as_ref());
                    w.counters(last.as_ref());
                }
            }
        }
        w.u64(self.skipped_lines);
    }

    fn decode(r: &mut Reader<'_>) -> Option<Self> {
        let models = r.strings()?;
        let n = r.len()?;
        let mut events = Vec::with_capacity(n.min(r.buf.len()));
        for _ in 0..n {
            events.push(match r.u8()? {
                0 => {
                    let model = match r.u8()? {
                        0 => None,
                        1 => {
                            let m = r.u32()?;
                            if m as usize >= models.len() {
                                return None;
                            }
                            Some(m)
                        }
                        _ => return None,
                    };
                    CodexEvent::Context {
                        model,
                        fast: r.bool()?,
                    }
                }
                1 => CodexEvent::Usage {
                    at: r.timestamp()?,
                    total: r.counters()?,
                    last: r.counters()?,
                },
                _ => return None,
            });
        }
        Some(CodexScan {
            models,
            events,
            skipped_lines: r.u64()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<S: Codec + PartialEq + std::fmt::Debug>(scan: &S) {
        let mut w = Writer::default();
        scan.encode(&mut w);
        let mut r = Reader::new(&w.0);
        assert_eq!(S::decode(&mut r).as_ref(), Some(scan));
        assert!(r.is_empty());
        // Every truncation is refused, never read as a shorter scan.
        for cut in 0..w.0.len() {
            assert_eq!(
                S::decode(&mut Reader::new(&w.0[..cut])),
                None,
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn scans_round_trip_and_truncations_are_refused() {
        round_trip(&ClaudeScan {
            models: vec!["claude-opus-4-7".into(), "m".into()],
            entries: vec![
                ClaudeEntry {
                    key: Some("m:msg_01".into()),
                    at: Timestamp::parse("2026-09-01T10:00:02.123Z"),
                    model: 1,
                    fast: true,
                    offset: 12_345,
                    tokens: TokenCounts {
                        input: 1,
                        output: 2,
                        cache_write_5m: 3,
                        cache_write_1h: 4,
                        cache_read: 5,
                        cached_input: 6,
                        reasoning_output: 7,
                    },
                },
                ClaudeEntry {
                    key: None,
                    at: None,
                    model: 0,
                    fast: false,
                    offset: 0,
                    tokens: TokenCounts::default(),
                },
            ],
            skipped_lines: 3,
        });
        round_trip(&ClaudeScan::default());
        round_trip(&CodexScan {
            models: vec!["gpt-5.3-codex".into()],
            events: vec![
                CodexEvent::Context {
                    model: Some(0),
                    fast: true,
                },
                CodexEvent::Context {
                    model: None,
                    fast: false,
                },
                CodexEvent::Usage {
                    at: Timestamp::parse("2026-09-01T10:00:00Z"),
                    total: Some([1, 2, 3, 4]),
                    last: None,
                },
                CodexEvent::Usage {
                    at: None,
                    total: None,
                    last: Some([5, 6, 7, 8]),
                },
            ],
            skipped_lines: 0,
        });
    }

    #[test]
    fn out_of_range_model_indices_are_refused() {
        let scan = ClaudeScan {
            models: vec!["m".into()],
            entries: vec![ClaudeEntry {
                key: None,
                at: None,
                model: 0,
                fast: false,
                offset: 0,
                tokens: TokenCounts::default(),
            }],
            skipped_lines: 0,
        };
        let mut w = Writer::default();
        scan.encode(&mut w);
        let mut bytes = w.0;
        // models: count (8) + len (8) + "m" (1); entries: count (8), key tag (1), at tag (1).
        let model_at = 8 + 8 + 1 + 8 + 1 + 1;
        bytes[model_at] = 1;
        assert_eq!(ClaudeScan::decode(&mut Reader::new(&bytes)), None);
    }
}
