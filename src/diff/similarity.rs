//! How similar two blobs are, measured the way git's rename detection measures it
//! (`diffcore-delta.c`): content is cut into chunks ending at a newline or after 64 bytes,
//! chunks are hashed, and the score is the number of bytes of the new blob whose chunk also
//! occurs in the old one. Pure: bytes in, numbers out.

use std::collections::HashMap;

/// git's scale for similarity scores: 100% is 60000.
pub const MAX_SCORE: u64 = 60_000;

/// Chunk fingerprint of one blob: chunk hash → total bytes of chunks with that hash.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprint {
    spans: HashMap<u32, u64>,
}

/// The modulus git reduces chunk hashes by (`HASHBASE`), which also decides which different
/// chunks collide; it must match git for scores to match.
const HASHBASE: u32 = 107_927;
/// The longest chunk.
const MAX_CHUNK: u32 = 64;

impl Fingerprint {
    /// Fingerprints `data`. For text (`is_text`), a CR directly before an LF is skipped so that
    /// line-ending conversions do not change the score.
    pub fn new(data: &[u8], is_text: bool) -> Fingerprint {
        let mut spans: HashMap<u32, u64> = HashMap::new();
        let (mut accum1, mut accum2): (u32, u32) = (0, 0);
        let mut n = 0u32;
        for (i, &c) in data.iter().enumerate() {
            if is_text && c == b'\r' && data.get(i + 1) == Some(&b'\n') {
                continue;
            }
            let old1 = accum1;
            accum1 = (accum1 << 7) ^ (accum2 >> 25);
            accum2 = (accum2 << 7) ^ (old1 >> 25);
            accum1 = accum1.wrapping_add(u32::from(c));
            n += 1;
            if n < MAX_CHUNK && c != b'\n' {
                continue;
            }
            *spans.entry(chunk_hash(accum1, accum2)).or_default() += u64::from(n);
            n = 0;
            accum1 = 0;
            accum2 = 0;
        }
        if n > 0 {
            *spans.entry(chunk_hash(accum1, accum2)).or_default() += u64::from(n);
        }
        Fingerprint { spans }
    }

    /// Bytes of `other` (the newer blob) whose chunks also occur here, counted up to the number
    /// of bytes this side has for each chunk (git's `src_copied`).
    pub fn copied_into(&self, other: &Fingerprint) -> u64 {
        let (small, large) = if self.spans.len() <= other.spans.len() {
            (self, other)
        } else {
            (other, self)
        };
        small
            .spans
            .iter()
            .filter_map(|(hash, &count)| large.spans.get(hash).map(|&theirs| count.min(theirs)))
            .sum()
    }
}

fn chunk_hash(accum1: u32, accum2: u32) -> u32 {
    accum1.wrapping_add(accum2.wrapping_mul(0x61)) % HASHBASE
}

/// Returns true when two blobs of these sizes differ in size too much to reach `minimum_score`,
/// so their content need not be read (git checks this before loading either blob).
pub fn sizes_rule_out(old_size: u64, new_size: u64, minimum_score: u64) -> bool {
    let max = old_size.max(new_size);
    let delta = max - old_size.min(new_size);
    max * (MAX_SCORE - minimum_score) < delta * MAX_SCORE
}

/// git's similarity score (0..=60000) of two blobs with these fingerprints and sizes.
pub fn score(old: &Fingerprint, new: &Fingerprint, old_size: u64, new_size: u64) -> u64 {
    let max = old_size.max(new_size);
    if new_size == 0 || max == 0 {
        return 0;
    }
    old.copied_into(new) * MAX_SCORE / max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_text_scores_full() {
        let a = b"one\ntwo\nthree\n";
        let fa = Fingerprint::new(a, true);
        assert_eq!(score(&fa, &fa, a.len() as u64, a.len() as u64), MAX_SCORE);
    }

    #[test]
    fn crlf_is_ignored_for_text_only() {
        let lf = b"one\ntwo\n";
        let crlf = b"one\r\ntwo\r\n";
        let (l, c) = (Fingerprint::new(lf, true), Fingerprint::new(crlf, true));
        assert_eq!(l.copied_into(&c), 8);
        let c_binary = Fingerprint::new(crlf, false);
        assert_eq!(l.copied_into(&c_binary), 0);
    }

    #[test]
    fn final_line_without_newline_counts() {
        // git >= 2.44 counts the unterminated last chunk (t4001 "last line matters too").
        let a = b"a\nno newline here";
        let b = b"b\nno newline here";
        let (fa, fb) = (Fingerprint::new(a, true), Fingerprint::new(b, true));
        assert_eq!(fa.copied_into(&fb), 15);
    }

    #[test]
    fn long_lines_are_cut_into_64_byte_chunks() {
        let line = [b'x'; 130];
        let f = Fingerprint::new(&line, true);
        // Two full chunks of 64 identical bytes share one hash; the 2-byte tail has another.
        assert_eq!(f.spans.values().sum::<u64>(), 130);
        assert_eq!(f.spans.len(), 2);
    }

    #[test]
    fn size_prefilter_matches_git_formula() {
        // 50%: a blob may at most double in size.
        assert!(!sizes_rule_out(100, 200, 30_000));
        assert!(sizes_rule_out(100, 201, 30_000));
        assert!(sizes_rule_out(0, 1, 30_000));
        assert!(!sizes_rule_out(0, 0, 30_000));
    }
}
