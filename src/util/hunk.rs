//! Reading the lines of a unified diff's hunks: an `@@ -a,b +c,d @@` header and the lines it
//! counts, each with its kind and its old- or new-side line number. The one hunk-line reader:
//! the secret scanner places matches with it, the built-in reviewer walks added lines with it.
//! Bytes in, positions out; it knows nothing of files, paths or patterns.

use std::ops::Range;

/// What a line inside a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// ` ` (or an empty line): on both sides; numbered on the new side.
    Context,
    /// `+`: only on the new side; numbered there.
    Added,
    /// `-`: only on the old side; numbered there.
    Removed,
}

/// Counts one hunk's lines as they are read, from its header on. The default cursor is
/// closed (outside any hunk).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HunkCursor {
    old_line: u64,
    new_line: u64,
    old_left: u64,
    new_left: u64,
}

impl HunkCursor {
    /// The cursor after the header line `line` (`@@ -a[,b] +c[,d] @@…`, without its `\n`);
    /// `None` when `line` is not one.
    pub fn start(line: &[u8]) -> Option<HunkCursor> {
        let ((old_line, old_left), (new_line, new_left)) = parse_header(line)?;
        Some(HunkCursor {
            old_line,
            new_line,
            old_left,
            new_left,
        })
    }

    /// Whether the header announced lines not read yet.
    pub fn is_open(&self) -> bool {
        self.old_left > 0 || self.new_left > 0
    }

    /// Reads the hunk's next line (without its `\n`): its kind and line number (old side for
    /// a removed line, new side otherwise). `None` for a line that is not counted: the
    /// `\ No newline at end of file` marker (the cursor stays open), or a line that cannot
    /// be the hunk's (the hunk was cut short, a clipped packet say: the cursor closes).
    pub fn read(&mut self, line: &[u8]) -> Option<(LineKind, u64)> {
        if !self.is_open() {
            return None;
        }
        let kind = match line.first() {
            None | Some(b' ') if self.old_left > 0 && self.new_left > 0 => LineKind::Context,
            Some(b'+') if self.new_left > 0 => LineKind::Added,
            Some(b'-') if self.old_left > 0 => LineKind::Removed,
            Some(b'\\') => return None,
            _ => {
                *self = HunkCursor::default();
                return None;
            }
        };
        let number = match kind {
            LineKind::Removed => self.old_line,
            _ => self.new_line,
        };
        if kind != LineKind::Added {
            self.old_left -= 1;
            self.old_line += 1;
        }
        if kind != LineKind::Removed {
            self.new_left -= 1;
            self.new_line += 1;
        }
        Some((kind, number))
    }
}

/// One counted line of a hunk, as [`lines`] yields it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    /// What the line is.
    pub kind: LineKind,
    /// Its line number (old side for a removed line, new side otherwise).
    pub number: u64,
    /// Where its content is in the text (after the `+`/`-`/` ` marker, before the `\n`).
    pub content: Range<usize>,
}

/// The counted lines of the hunk at `range` of `text` (`range` starts at its `@@` header
/// line, as [`crate::diff::HunkSpan`] does). Nothing when the range holds no header.
pub fn lines(text: &[u8], range: Range<usize>) -> impl Iterator<Item = HunkLine> + '_ {
    let end = range.end.min(text.len());
    let start = range.start.min(end);
    let mut at = start;
    let mut cursor: Option<HunkCursor> = None;
    std::iter::from_fn(move || {
        while at < end {
            let line_start = at;
            let line_end = text[line_start..end]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(end, |i| line_start + i);
            at = line_end + 1;
            let line = &text[line_start..line_end];
            let Some(current) = cursor.as_mut() else {
                // The first line is the header; without one there is no hunk to read.
                cursor = HunkCursor::start(line);
                if cursor.is_none() {
                    at = end;
                }
                continue;
            };
            if !current.is_open() {
                return None;
            }
            if let Some((kind, number)) = current.read(line) {
                return Some(HunkLine {
                    kind,
                    number,
                    content: (line_start + 1).min(line_end)..line_end,
                });
            }
        }
        None
    })
}

/// A hunk's `@@ -a[,b] +c[,d] @@<tail>` line, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    /// (start, count) on the old side.
    pub old: (u64, u64),
    /// (start, count) on the new side.
    pub new: (u64, u64),
    /// What follows the closing `@@` (git's function context), line end included.
    pub tail: &'a [u8],
}

/// Reads a hunk's `@@` line; `None` when it is not one.
pub fn header(line: &[u8]) -> Option<Header<'_>> {
    let rest = line.strip_prefix(b"@@ -")?;
    let (old, rest) = split_once(rest, b' ')?;
    let rest = rest.strip_prefix(b"+")?;
    let (new, rest) = split_once(rest, b' ')?;
    let tail = rest.strip_prefix(b"@@")?;
    Some(Header {
        old: parse_range(old)?,
        new: parse_range(new)?,
        tail,
    })
}

/// `@@ -a[,b] +c[,d] @@…` → ((a, b), (c, d)).
fn parse_header(line: &[u8]) -> Option<((u64, u64), (u64, u64))> {
    header(line).map(|h| (h.old, h.new))
}

fn parse_range(text: &[u8]) -> Option<(u64, u64)> {
    let (start, count) = match split_once(text, b',') {
        Some((s, c)) => (s, Some(c)),
        None => (text, None),
    };
    let number = |t: &[u8]| std::str::from_utf8(t).ok()?.parse::<u64>().ok();
    Some((number(start)?, count.map_or(Some(1), number)?))
}

fn split_once(text: &[u8], byte: u8) -> Option<(&[u8], &[u8])> {
    let i = text.iter().position(|&b| b == byte)?;
    Some((&text[..i], &text[i + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_with_and_without_counts() {
        assert_eq!(
            parse_header(b"@@ -1,2 +3,4 @@ fn x()"),
            Some(((1, 2), (3, 4)))
        );
        assert_eq!(parse_header(b"@@ -0,0 +1 @@"), Some(((0, 0), (1, 1))));
        assert_eq!(parse_header(b"@@ -5 +5 @@"), Some(((5, 1), (5, 1))));
        assert_eq!(parse_header(b"@@ garbage @@"), None);
        assert_eq!(parse_header(b"@@@ -1,2 -1,2 +1,3 @@@"), None);
    }

    #[test]
    fn lines_are_numbered_on_their_side() {
        let text = b"header\n@@ -10,3 +20,4 @@ fn ctx\n keep\n-gone\n+one\n\n+two\n\\ No newline at end of file\n";
        let got: Vec<(LineKind, u64, &[u8])> = lines(text, 7..text.len())
            .map(|l| (l.kind, l.number, &text[l.content]))
            .collect();
        assert_eq!(
            got,
            [
                (LineKind::Context, 20, &b"keep"[..]),
                (LineKind::Removed, 11, &b"gone"[..]),
                (LineKind::Added, 21, &b"one"[..]),
                (LineKind::Context, 22, &b""[..]),
                (LineKind::Added, 23, &b"two"[..]),
            ]
        );
    }

    #[test]
    fn a_hunk_ends_at_its_count_or_at_a_line_it_cannot_hold() {
        // Counted out: what follows is not read as the hunk's.
        let text = b"@@ -1 +1 @@\n-a\n+b\n+not counted\n";
        let kinds: Vec<LineKind> = lines(text, 0..text.len()).map(|l| l.kind).collect();
        assert_eq!(kinds, [LineKind::Removed, LineKind::Added]);
        // Cut short (a clipped packet): the cursor closes on the stranger.
        let mut cursor = HunkCursor::start(b"@@ -1,3 +1,3 @@").expect("a header");
        assert_eq!(cursor.read(b" a"), Some((LineKind::Context, 1)));
        assert_eq!(cursor.read(b"[git-pair] clipped"), None);
        assert!(!cursor.is_open());
        // The no-newline marker is not counted and keeps the hunk open.
        let mut cursor = HunkCursor::start(b"@@ -1 +1,2 @@").expect("a header");
        assert_eq!(cursor.read(b"\\ No newline at end of file"), None);
        assert!(cursor.is_open());
        // No header, no hunk.
        assert_eq!(lines(b"+x\n", 0..3).count(), 0);
    }
}
