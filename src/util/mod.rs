//! Small pure helpers shared by every module: UTC time stamps, unique ids, the hunk-line
//! reader, an error's causes as one line.
//!
//! Nothing here touches a repository, the terminal or the network.

pub mod chain;
pub mod fs;
pub mod git_value;
pub mod hunk;
pub mod time;

use std::sync::atomic::{AtomicU64, Ordering};

/// Returns `len` lowercase hex characters that are unique with overwhelming probability.
///
/// The bytes come from SHA-1 over the clock's nanoseconds, the process id, a per-process
/// counter and a stack address; no randomness crate is needed for ids that only have to be
/// unique, not unpredictable.
pub fn unique_hex(len: usize) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let marker = 0u8;
    let mut hasher = sha1_smol::Sha1::new();
    hasher.update(&nanos.to_le_bytes());
    hasher.update(&std::process::id().to_le_bytes());
    hasher.update(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    hasher.update(&(&marker as *const u8 as usize).to_le_bytes());
    let mut hex = hasher.digest().to_string();
    hex.truncate(len.min(40));
    hex
}

/// Returns whether `value` fits on one line (no CR or LF), as commit trailers require.
pub fn is_single_line(value: &str) -> bool {
    !value.contains(['\n', '\r'])
}

/// Returns the first line of `text`, cut to at most `max_chars` characters with `…` appended
/// when anything was cut.
pub fn first_line_clipped(text: &str, max_chars: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    let clipped: String = line.chars().take(max_chars).collect();
    if clipped.len() < line.len() || text.trim().lines().nth(1).is_some() {
        format!("{clipped}…")
    } else {
        clipped
    }
}

/// A test-only environment switch (`GIT_PAIR_TEST_*`): its value in debug builds, which the
/// test suite drives; release builds never read it, so no setting in a user's environment can
/// disable a safety mechanism.
pub fn test_switch(name: &str) -> Option<String> {
    debug_assert!(name.starts_with("GIT_PAIR_TEST_"));
    if cfg!(debug_assertions) {
        std::env::var(name).ok()
    } else {
        None
    }
}

/// Rounds dollars to 1/100 of a cent for compact JSON; a negative zero becomes zero.
pub fn round_usd(usd: f64) -> f64 {
    (usd * 10_000.0).round() / 10_000.0 + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_hex_differs_between_calls_and_has_the_asked_length() {
        let a = unique_hex(12);
        let b = unique_hex(12);
        assert_eq!(a.len(), 12);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }

    #[test]
    fn first_line_clipped_marks_cuts() {
        assert_eq!(first_line_clipped("short", 10), "short");
        assert_eq!(first_line_clipped("abcdefghijkl", 4), "abcd…");
        assert_eq!(first_line_clipped("one\ntwo", 10), "one…");
    }
}
