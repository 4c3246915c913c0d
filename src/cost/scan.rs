//! Fast line selection over a log's bytes: finds the lines that can carry what a reader
//! needs (a marker such as `"usage"`) without touching the others line by line. Knows
//! nothing about JSON shapes; the readers parse the lines it hands them.
//!
//! Why a marker search is sound: inside a JSON string a quote is always escaped, so a quoted
//! marker like `"usage"` occurs in the raw bytes only as a real key or value token, never in
//! tool output or message text (`\"usage\"` there does not contain it).

use regex::bytes::Regex;

/// A compiled set of markers; a line is a candidate when it contains any of them.
#[derive(Debug, Clone)]
pub(crate) struct Markers(Regex);

impl Markers {
    /// Markers are matched literally.
    pub(crate) fn new(markers: &[&str]) -> Markers {
        let pattern = markers
            .iter()
            .map(|m| regex::escape(m))
            .collect::<Vec<_>>()
            .join("|");
        Markers(Regex::new(&pattern).expect("escaped literals always form a valid regex"))
    }

    /// Calls `each(line, offset)` once for every line of `buf` containing a marker, in order;
    /// `offset` is the line's start in `buf`. The line excludes its `\n`.
    pub(crate) fn for_each_line(&self, buf: &[u8], mut each: impl FnMut(&[u8], usize)) {
        let mut from = 0;
        while let Some(hit) = self.0.find_at(buf, from) {
            let start = memrchr(b'\n', &buf[from..hit.start()]).map_or(from, |i| from + i + 1);
            let end = memchr(b'\n', &buf[hit.end()..]).map_or(buf.len(), |i| hit.end() + i);
            each(&buf[start..end], start);
            from = end + 1;
            if from >= buf.len() {
                break;
            }
        }
    }
}

/// The length of `buf` up to and including its last `\n` (0 when there is none): the part a
/// writer has finished. What follows is a line still being written, or a truncated one.
pub(crate) fn complete_len(buf: &[u8]) -> usize {
    memrchr(b'\n', buf).map_or(0, |i| i + 1)
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `word` is zero after xor with the splatted needle (SWAR).
#[inline]
fn has_zero_byte(word: u64) -> bool {
    word.wrapping_sub(LO) & !word & HI != 0
}

fn load(chunk: &[u8]) -> u64 {
    u64::from_le_bytes(chunk.try_into().expect("chunks are exactly 8 bytes"))
}

/// Index of the first `needle` in `hay`, word-at-a-time (the allowed crates give us no memchr).
pub(crate) fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    let splat = LO * u64::from(needle);
    let mut chunks = hay.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        if has_zero_byte(load(chunk) ^ splat) {
            return chunk.iter().position(|&b| b == needle).map(|i| base + i);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == needle)
        .map(|i| base + i)
}

/// Index of the last `needle` in `hay`.
pub(crate) fn memrchr(needle: u8, hay: &[u8]) -> Option<usize> {
    let splat = LO * u64::from(needle);
    let mut chunks = hay.rchunks_exact(8);
    let mut end = hay.len();
    for chunk in &mut chunks {
        if has_zero_byte(load(chunk) ^ splat) {
            return chunk
                .iter()
                .rposition(|&b| b == needle)
                .map(|i| end - 8 + i);
        }
        end -= 8;
    }
    chunks.remainder().iter().rposition(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memchr_agrees_with_naive_search() {
        let hay: Vec<u8> = (0..300u32)
            .map(|i| {
                if i % 37 == 5 {
                    b'\n'
                } else {
                    b'a' + (i % 7) as u8
                }
            })
            .collect();
        for start in 0..40 {
            for end in (start..hay.len()).step_by(13) {
                let s = &hay[start..end];
                for needle in [b'\n', b'a', b'z', 0x80] {
                    assert_eq!(memchr(needle, s), s.iter().position(|&b| b == needle));
                    assert_eq!(memrchr(needle, s), s.iter().rposition(|&b| b == needle));
                }
            }
        }
        // Bytes >= 0x80 next to the needle must not produce false positives.
        let tricky = [0x8a, 0x0b, 0xff, 0x09, 0x0a];
        assert_eq!(memchr(b'\n', &tricky), Some(4));
        assert_eq!(memrchr(0x0b, &tricky), Some(1));
    }

    #[test]
    fn selects_marker_lines_only() {
        let m = Markers::new(&[r#""usage""#, r#""turn_context""#]);
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("{\"usage\":1}", &["{\"usage\":1}"]),
            ("a\n{\"usage\":1}\nb\n", &["{\"usage\":1}"]),
            (
                "{\"usage\":1,\"usage\":2}\n{\"usage\":3}",
                &["{\"usage\":1,\"usage\":2}", "{\"usage\":3}"],
            ),
            (
                "x\n\"turn_context\"\n\"usage\"\n",
                &["\"turn_context\"", "\"usage\""],
            ),
            // Escaped inside a string: not a key, never selected.
            ("{\"text\":\"say \\\"usage\\\" here\"}\n", &[]),
            ("\n\n{\"usage\":0}\n\n", &["{\"usage\":0}"]),
        ];
        for (text, want) in cases {
            let mut got = Vec::new();
            m.for_each_line(text.as_bytes(), |line, offset| {
                assert_eq!(&text.as_bytes()[offset..offset + line.len()], line);
                got.push(String::from_utf8(line.to_vec()).unwrap());
            });
            assert_eq!(got, *want, "{text:?}");
        }
    }

    #[test]
    fn complete_len_stops_after_last_newline() {
        for (text, want) in [("", 0), ("abc", 0), ("a\n", 2), ("a\nbc", 2), ("a\nb\n", 4)] {
            assert_eq!(complete_len(text.as_bytes()), want, "{text:?}");
        }
    }
}
