//! Token counts by billing kind, shared by both log readers and the pricing table. Plain
//! arithmetic on counts; no prices, no parsing.

use serde::{Deserialize, Serialize};

/// Tokens by the kind they are billed as. The buckets are disjoint except `reasoning_output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenCounts {
    /// Uncached input (Claude `input_tokens`; Codex `input_tokens - cached_input_tokens`).
    pub input: u64,
    /// Output, reasoning included.
    pub output: u64,
    /// Claude prompt-cache writes with the 5-minute lifetime.
    pub cache_write_5m: u64,
    /// Claude prompt-cache writes with the 1-hour lifetime.
    pub cache_write_1h: u64,
    /// Claude prompt-cache reads (`cache_read_input_tokens`).
    pub cache_read: u64,
    /// Codex cached input (`cached_input_tokens`, a subset of Codex `input_tokens`).
    pub cached_input: u64,
    /// Codex reasoning tokens: informational, already inside `output`, never priced twice.
    pub reasoning_output: u64,
}

impl TokenCounts {
    /// Adds `other` into `self`, saturating (corrupt logs must not overflow-panic).
    pub fn add(&mut self, other: &TokenCounts) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_write_5m = self.cache_write_5m.saturating_add(other.cache_write_5m);
        self.cache_write_1h = self.cache_write_1h.saturating_add(other.cache_write_1h);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cached_input = self.cached_input.saturating_add(other.cached_input);
        self.reasoning_output = self.reasoning_output.saturating_add(other.reasoning_output);
    }

    /// The prompt size of one request: every input kind, cached or not.
    pub fn prompt(&self) -> u64 {
        self.input
            .saturating_add(self.cache_write_5m)
            .saturating_add(self.cache_write_1h)
            .saturating_add(self.cache_read)
            .saturating_add(self.cached_input)
    }

    /// All billed tokens (reasoning is inside output, so it is not added again).
    pub fn total(&self) -> u64 {
        self.prompt().saturating_add(self.output)
    }
}
