//! The shapes one file can take in a packet, each built from its git diff section: in full,
//! metadata only (binary, as git decides), names only, without its deletion-only hunks, or
//! clipped. Markers are single lines starting with `[git-pair]`. Pure: bytes in, bytes out.

use crate::diff::{FileDiff, HunkSpan};

/// The prefix of every line the packet adds to git's output.
pub const MARKER: &str = "[git-pair]";

/// One file prepared for budgeting: its shapes, largest first.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The file as git prints it, with unreadable bytes escaped.
    pub full: Vec<u8>,
    /// Whether `full` is metadata only (git shows the file as binary).
    pub metadata_only: bool,
    /// `full`'s header length; content after it may be clipped.
    pub header_len: usize,
    /// The header block and one marker line.
    pub names_only: Vec<u8>,
    /// `full` with deletion-only hunks replaced by marker lines (no larger than `full`); empty
    /// when no hunk is dropped.
    pub without_deletions: Vec<u8>,
    /// Deletion-only hunks dropped in `without_deletions`.
    pub dropped_hunks: usize,
    /// Hunks still shown in `without_deletions`.
    pub kept_hunks: usize,
    /// `+` lines of the whole file.
    pub added: u32,
    /// `-` lines of the whole file.
    pub deleted: u32,
    /// Lockfile, generated or vendored: shown as names only when over budget.
    pub generated: bool,
}

impl Prepared {
    /// Prepares `file`; `generated` says whether it is a lockfile/generated/vendored file.
    /// Takes the file by value so that its (possibly huge) text is moved, not copied.
    pub fn new(file: FileDiff, generated: bool) -> Prepared {
        let header = header_lines(&file.text, &file.hunks);
        let (added, deleted) = (file.added_lines, file.deleted_lines);
        // Text with a stray invalid byte (or a NUL past git's 8,000-byte probe) is still text:
        // shown with those bytes escaped, never called binary (SPEC §6.2). Binary is git's
        // call alone (`Binary files … differ`).
        let file = escape_unreadable(file);
        let (full, metadata_only, header_len, hunks) =
            (file.text, file.binary, file.header_len, file.hunks);

        let reason = if generated {
            "lockfile, generated or vendored"
        } else {
            "over budget"
        };
        let mut names_only = header;
        names_only.extend_from_slice(
            format!("{MARKER} names only ({reason}): +{added} -{deleted} lines not shown\n")
                .as_bytes(),
        );

        // Deletion-only hunks whose marker is shorter than the hunk itself.
        let markers: Vec<Option<String>> = hunks
            .iter()
            .map(|hunk| {
                let marker = deletion_marker(&full, hunk);
                (hunk.added == 0 && hunk.deleted > 0 && marker.len() < hunk.end - hunk.start)
                    .then_some(marker)
            })
            .collect();
        let dropped_hunks = markers.iter().filter(|m| m.is_some()).count();
        let mut without_deletions = Vec::new();
        if dropped_hunks > 0 {
            let mut cursor = 0;
            for (hunk, marker) in hunks.iter().zip(&markers) {
                without_deletions.extend_from_slice(&full[cursor..hunk.start]);
                match marker {
                    Some(marker) => without_deletions.extend_from_slice(marker.as_bytes()),
                    None => without_deletions.extend_from_slice(&full[hunk.start..hunk.end]),
                }
                cursor = hunk.end;
            }
            without_deletions.extend_from_slice(&full[cursor..]);
        }

        Prepared {
            metadata_only,
            header_len: header_len.min(full.len()),
            names_only,
            without_deletions,
            dropped_hunks,
            kept_hunks: hunks.len() - dropped_hunks,
            added,
            deleted,
            generated,
            full,
        }
    }

    /// The shape used once lockfiles go to names only and deletion-only hunks are dropped.
    pub fn reduced(&self) -> Shape<'_> {
        if self.generated && self.names_only.len() < self.full.len() {
            Shape::NamesOnly(&self.names_only)
        } else if self.dropped_hunks > 0 {
            Shape::WithoutDeletions(&self.without_deletions)
        } else {
            Shape::Full(&self.full)
        }
    }

    /// The shape after tier 1 only (lockfiles to names only).
    pub fn tier1(&self) -> &[u8] {
        if self.generated && self.names_only.len() < self.full.len() {
            &self.names_only
        } else {
            &self.full
        }
    }

    /// Size of the reduced shape clipped to `allowance` content bytes.
    pub fn clipped_len(&self, allowance: usize) -> usize {
        match self.reduced() {
            Shape::NamesOnly(text) => text.len(),
            Shape::Full(text) | Shape::WithoutDeletions(text) => {
                clip_plan(text, self.header_len, allowance, self.added, self.deleted)
                    .map_or(text.len(), |(cut, marker)| {
                        self.header_len + cut + marker.len()
                    })
            }
        }
    }

    /// The reduced shape clipped to `allowance` content bytes, and whether it was clipped.
    pub fn clipped(&self, allowance: usize) -> (Vec<u8>, bool) {
        match self.reduced() {
            Shape::NamesOnly(text) => (text.to_vec(), false),
            Shape::Full(text) | Shape::WithoutDeletions(text) => {
                match clip(text, self.header_len, allowance, self.added, self.deleted) {
                    Some(clipped) => (clipped, true),
                    None => (text.to_vec(), false),
                }
            }
        }
    }
}

/// One of the shapes a prepared file can be shown in.
#[derive(Debug, Clone, Copy)]
pub enum Shape<'a> {
    /// As git prints it (or metadata only).
    Full(&'a [u8]),
    /// Header and a marker.
    NamesOnly(&'a [u8]),
    /// Deletion-only hunks replaced by markers.
    WithoutDeletions(&'a [u8]),
}

/// Content a reviewer can read: valid UTF-8 without NUL bytes.
fn reviewable(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

/// The marker put before the first hunk of a file whose content had bytes escaped.
pub const ESCAPED_MARKER: &str =
    "[git-pair] bytes that are not UTF-8 text (and NUL) are shown as \\xNN\n";

/// `file` with every byte of its hunks that is not part of valid UTF-8 text, and every NUL,
/// written as `\xNN`, hunk spans moved to match and a marker line before the first hunk.
/// Unchanged when its content is readable already.
pub fn escape_unreadable(file: FileDiff) -> FileDiff {
    if file
        .hunks
        .iter()
        .all(|h| reviewable(&file.text[h.start..h.end]))
    {
        return file;
    }
    let mut text = Vec::with_capacity(file.text.len() + 64);
    let mut hunks = Vec::with_capacity(file.hunks.len());
    let mut cursor = 0;
    let mut header_len = file.header_len;
    for (i, hunk) in file.hunks.iter().enumerate() {
        text.extend_from_slice(&file.text[cursor..hunk.start]);
        if i == 0 {
            text.extend_from_slice(ESCAPED_MARKER.as_bytes());
            header_len = text.len();
        }
        let start = text.len();
        push_escaped(&mut text, &file.text[hunk.start..hunk.end]);
        hunks.push(HunkSpan {
            start,
            end: text.len(),
            ..*hunk
        });
        cursor = hunk.end;
    }
    text.extend_from_slice(&file.text[cursor..]);
    FileDiff {
        text,
        header_len,
        hunks,
        ..file
    }
}

fn push_escaped(out: &mut Vec<u8>, mut bytes: &[u8]) {
    let escape = |out: &mut Vec<u8>, b: u8| out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
    while !bytes.is_empty() {
        let (valid, rest) = match std::str::from_utf8(bytes) {
            Ok(_) => (bytes, &[][..]),
            Err(e) => bytes.split_at(e.valid_up_to()),
        };
        for &b in valid {
            if b == 0 {
                escape(out, b);
            } else {
                out.push(b);
            }
        }
        if rest.is_empty() {
            break;
        }
        // One invalid byte at a time: the rest may be valid again.
        escape(out, rest[0]);
        bytes = &rest[1..];
    }
}

/// Everything outside the hunks, minus the `---`/`+++` lines: `diff --git`, mode, rename,
/// `index` and `Binary files` lines.
fn header_lines(text: &[u8], hunks: &[HunkSpan]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut cursor = 0;
    let mut outside = Vec::new();
    for hunk in hunks {
        outside.push(&text[cursor..hunk.start]);
        cursor = hunk.end;
    }
    outside.push(&text[cursor..]);
    for part in outside {
        for line in part.split_inclusive(|&b| b == b'\n') {
            if !(line.starts_with(b"--- ") || line.starts_with(b"+++ ")) {
                out.extend_from_slice(line);
            }
        }
    }
    out
}

fn deletion_marker(text: &[u8], hunk: &HunkSpan) -> String {
    let first_line = text[hunk.start..hunk.end]
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or_default();
    // The `@@ -a,b +c,d @@` part only; the function name may be long or not UTF-8.
    let ranges = first_line
        .windows(2)
        .skip(2)
        .position(|w| w == b"@@")
        .map_or(first_line, |end| &first_line[..end + 4]);
    format!(
        "{MARKER} deletion-only hunk dropped ({}): -{} lines\n",
        String::from_utf8_lossy(ranges),
        hunk.deleted
    )
}

/// Where to cut `text`'s content (after `header_len`): at the last line end within `allowance`
/// bytes, with the marker that replaces the rest; `None` when that would not make it smaller.
fn clip_plan(
    text: &[u8],
    header_len: usize,
    allowance: usize,
    added: u32,
    deleted: u32,
) -> Option<(usize, String)> {
    let content = &text[header_len..];
    if content.len() <= allowance {
        return None;
    }
    let cut = content[..allowance]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |last| last + 1);
    let marker = format!(
        "{MARKER} clipped: {cut} of {} bytes of this file's diff shown (+{added} -{deleted} lines in all)\n",
        content.len()
    );
    (header_len + cut + marker.len() < text.len()).then_some((cut, marker))
}

fn clip(
    text: &[u8],
    header_len: usize,
    allowance: usize,
    added: u32,
    deleted: u32,
) -> Option<Vec<u8>> {
    let (cut, marker) = clip_plan(text, header_len, allowance, added, deleted)?;
    let mut out = Vec::with_capacity(header_len + cut + marker.len());
    out.extend_from_slice(&text[..header_len + cut]);
    out.extend_from_slice(marker.as_bytes());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{Change, ChangeKind};

    fn file(text: &str, hunks: Vec<HunkSpan>, header_len: usize) -> FileDiff {
        FileDiff {
            change: Change::for_tests(ChangeKind::Modified, "f.txt"),
            binary: false,
            generated: false,
            added_lines: hunks.iter().map(|h| h.added).sum(),
            deleted_lines: hunks.iter().map(|h| h.deleted).sum(),
            text: text.as_bytes().to_vec(),
            header_len,
            hunks,
        }
    }

    const HEADER: &str =
        "diff --git a/f.txt b/f.txt\nindex 1111111..2222222 100644\n--- a/f.txt\n+++ b/f.txt\n";

    fn two_hunks() -> FileDiff {
        let h1 = "@@ -1,5 +1,2 @@ fn main\n ctx\n-gone 1\n-gone 2\n-gone 3\n-gone 4\n-gone 5\n-gone 6\n ctx\n";
        let h2 = "@@ -20 +17 @@\n-old\n+new\n";
        let text = format!("{HEADER}{h1}{h2}");
        let s1 = HEADER.len();
        let s2 = s1 + h1.len();
        file(
            &text,
            vec![
                HunkSpan {
                    start: s1,
                    end: s2,
                    added: 0,
                    deleted: 6,
                },
                HunkSpan {
                    start: s2,
                    end: text.len(),
                    added: 1,
                    deleted: 1,
                },
            ],
            HEADER.len(),
        )
    }

    #[test]
    fn deletion_only_hunks_become_markers() {
        let p = Prepared::new(two_hunks(), false);
        let text = String::from_utf8(p.without_deletions.clone()).expect("UTF-8");
        assert_eq!(
            text,
            format!(
                "{HEADER}[git-pair] deletion-only hunk dropped (@@ -1,5 +1,2 @@): -6 lines\n@@ -20 +17 @@\n-old\n+new\n"
            )
        );
        assert_eq!((p.dropped_hunks, p.kept_hunks), (1, 1));
    }

    #[test]
    fn names_only_keeps_header_lines_but_not_file_labels() {
        let p = Prepared::new(two_hunks(), true);
        assert_eq!(
            String::from_utf8(p.names_only.clone()).expect("UTF-8"),
            "diff --git a/f.txt b/f.txt\nindex 1111111..2222222 100644\n[git-pair] names only (lockfile, generated or vendored): +1 -7 lines not shown\n"
        );
        assert!(matches!(p.reduced(), Shape::NamesOnly(_)));
    }

    #[test]
    fn non_utf8_content_is_shown_escaped_not_as_binary() {
        let body = "@@ -1 +1 @@\n-caf\u{e9}\n+caf\u{e8}\n";
        let mut f = file(&format!("{HEADER}{body}"), Vec::new(), HEADER.len());
        let start = HEADER.len();
        f.text[start + 16] = 0xe9; // break the UTF-8 of the first content line
        f.hunks = vec![HunkSpan {
            start,
            end: f.text.len(),
            added: 1,
            deleted: 1,
        }];
        f.text.push(b'+');
        f.text.extend_from_slice(b"nul\0here\n");
        f.hunks[0].end = f.text.len();
        let p = Prepared::new(f, false);
        assert!(!p.metadata_only);
        let text = std::str::from_utf8(&p.full).expect("escaped text is UTF-8");
        assert!(text.contains(ESCAPED_MARKER), "{text}");
        assert!(text.contains("-caf\\xe9\\xa9\n"), "{text}");
        assert!(text.contains("+caf\u{e8}\n"), "{text}");
        assert!(text.contains("+nul\\x00here\n"), "{text}");
        assert!(text[p.header_len..].starts_with("@@ -1 +1 @@"), "{text}");
    }

    #[test]
    fn clipping_cuts_at_line_ends_and_never_grows() {
        let p = Prepared::new(two_hunks(), false);
        let (clipped, was_clipped) = p.clipped(30);
        assert!(was_clipped);
        let text = String::from_utf8(clipped).expect("UTF-8");
        assert!(text.starts_with(HEADER));
        assert!(text.ends_with("lines in all)\n"), "{text}");
        let (same, was_clipped) = p.clipped(10_000);
        assert!(!was_clipped);
        assert_eq!(same, p.without_deletions);
    }
}
