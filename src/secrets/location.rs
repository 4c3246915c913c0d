//! Where a finding sits: the kind of line, and line counting over a text without rescanning.

use serde::Serialize;

/// Where a finding's line sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// A plain text scanned with [`Scanner::scan`]: `line` is its line.
    Text,
    /// A diff's `+` line: new path, new line number.
    Added,
    /// A diff's context line: new path, new line number.
    Context,
    /// A diff's `-` line (the secret is being removed, yet the diff still carries it): old
    /// path, old line number.
    Removed,
    /// A diff line outside any hunk (file headers, binary metadata, text before the first
    /// file): the file section's path, and `line` counts lines of the diff text itself.
    Header,
}

/// Counts lines up to increasing offsets without rescanning.
#[derive(Default)]
pub(super) struct LineCounter {
    offset: usize,
    line: usize,
}

impl LineCounter {
    /// The 1-based line holding byte `offset` (offsets must not decrease between calls).
    pub(super) fn line_of(&mut self, text: &[u8], offset: usize) -> usize {
        let offset = offset.min(text.len());
        if offset >= self.offset {
            self.line += text[self.offset..offset]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            self.offset = offset;
        }
        self.line + 1
    }
}
