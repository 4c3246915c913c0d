//! Where in a unified diff (as `git diff` prints it) a match sits: which file section, which
//! side, which line. Used only after a scan of the whole diff text found something, so it
//! may walk lines one by one; hunk lines are counted by the one hunk reader,
//! [`crate::util::hunk`]. Knows nothing about patterns.

use std::ops::Range;
use std::sync::OnceLock;

use regex::bytes::Regex;

use super::location::{LineCounter, Origin};
use crate::util::hunk::{HunkCursor, LineKind};

/// One `diff --git` section (or the text before the first one, with no paths).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Section {
    range: Range<usize>,
    /// Old-side path without `a/`; `None` for `/dev/null` or unknown.
    old_path: Option<String>,
    /// New-side path without `b/`; `None` for `/dev/null` or unknown.
    new_path: Option<String>,
}

impl Section {
    fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("")
    }

    fn old(&self) -> &str {
        self.old_path.as_deref().unwrap_or_else(|| self.path())
    }
}

/// The diff location (path, line, kind of line) of each offset of a whole-diff scan (sorted),
/// `None` for one in a file whose path `skips`. Only sections holding an offset are parsed.
pub(super) fn locate(
    diff: &[u8],
    offsets: &[usize],
    skips: &dyn Fn(&str) -> bool,
) -> Vec<Option<(String, usize, Origin)>> {
    let starts = section_starts(diff);
    let mut lines = LineCounter::default();
    let mut current: Option<(usize, Section, bool, Walker)> = None;
    let mut out = Vec::with_capacity(offsets.len());
    for &offset in offsets {
        // `starts[0]` is 0, so some section holds every offset.
        let index = starts.partition_point(|&s| s <= offset).saturating_sub(1);
        if current.as_ref().is_none_or(|(i, ..)| *i != index) {
            let range = starts[index]..starts.get(index + 1).copied().unwrap_or(diff.len());
            let section = parse_section(diff, range.clone());
            let skipped = skips(section.path()) || section.old_path.as_deref().is_some_and(skips);
            let walker = Walker::new(range.start, lines.line_of(diff, range.start));
            current = Some((index, section, skipped, walker));
        }
        let Some((_, section, skipped, walker)) = current.as_mut() else {
            out.push(None);
            continue;
        };
        if *skipped {
            out.push(None);
            continue;
        }
        let (origin, line) = walker.locate(diff, section.range.end, offset);
        let path = match origin {
            Origin::Removed => section.old(),
            _ => section.path(),
        };
        out.push(Some((path.to_owned(), line, origin)));
    }
    out
}

/// Where each section starts: 0 (a preamble, or the first file), then every line starting
/// with `diff --git ` (a hunk line never does: it starts with ` `, `+`, `-` or `\\`).
fn section_starts(diff: &[u8]) -> Vec<usize> {
    static HEADER: OnceLock<Regex> = OnceLock::new();
    let header = HEADER.get_or_init(|| Regex::new(r"\ndiff --git ").expect("a literal regex"));
    let mut starts = vec![0];
    starts.extend(header.find_iter(diff).map(|m| m.start() + 1));
    starts
}

/// Walks one section's lines forward, tracking hunk line numbers.
#[derive(Debug)]
struct Walker {
    /// Offset of the next line to read.
    next: usize,
    /// 1-based line number in the diff text of the next line.
    diff_line: usize,
    /// The hunk being read (closed outside one).
    hunk: HunkCursor,
    /// The last line read: its end and location.
    current: Option<(usize, Origin, usize)>,
}

impl Walker {
    fn new(start: usize, diff_line: usize) -> Walker {
        Walker {
            next: start,
            diff_line,
            hunk: HunkCursor::default(),
            current: None,
        }
    }

    /// The location of the line holding byte `offset` (not before the last one located).
    fn locate(&mut self, diff: &[u8], section_end: usize, offset: usize) -> (Origin, usize) {
        loop {
            if let Some((end, origin, line)) = self.current
                && offset <= end
            {
                return (origin, line);
            }
            if self.next >= section_end {
                let line = self.diff_line.saturating_sub(1).max(1);
                return (Origin::Header, line);
            }
            let start = self.next;
            let end = diff[start..section_end]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(section_end, |i| start + i);
            self.next = end + 1;
            let location = self.classify(&diff[start..end]);
            self.diff_line += 1;
            self.current = Some((end, location.0, location.1));
        }
    }

    fn classify(&mut self, line: &[u8]) -> (Origin, usize) {
        let header = (Origin::Header, self.diff_line);
        if self.hunk.is_open() {
            if let Some((kind, number)) = self.hunk.read(line) {
                let origin = match kind {
                    LineKind::Context => Origin::Context,
                    LineKind::Added => Origin::Added,
                    LineKind::Removed => Origin::Removed,
                };
                return (origin, usize::try_from(number).unwrap_or(usize::MAX));
            }
            if self.hunk.is_open() {
                // The `\ No newline at end of file` marker.
                return header;
            }
            // Not a hunk line: the hunk was cut short; the line may start the next one.
        }
        if let Some(hunk) = HunkCursor::start(line) {
            self.hunk = hunk;
        }
        header
    }
}

/// The paths of the section at `range`, read from its header lines (up to the first hunk).
fn parse_section(diff: &[u8], range: Range<usize>) -> Section {
    let mut section = Section {
        range: range.clone(),
        ..Section::default()
    };
    let text = &diff[range];
    let Some(first) = text.strip_prefix(b"diff --git ") else {
        return section;
    };
    let first_end = first
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(first.len());
    // A diff with CRLF line ends keeps its `\r` out of the paths.
    (section.old_path, section.new_path) = git_line_paths(strip_cr(&first[..first_end]));
    for line in first[first_end..].split(|&b| b == b'\n').skip(1) {
        let line = strip_cr(line);
        if line.starts_with(b"@@ ") {
            break;
        }
        read_header_line(&mut section, line);
    }
    section
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn read_header_line(section: &mut Section, line: &[u8]) {
    if let Some(p) = line.strip_prefix(b"--- ") {
        section.old_path = side_path(p, b"a/");
    } else if let Some(p) = line.strip_prefix(b"+++ ") {
        section.new_path = side_path(p, b"b/");
    } else if let Some(p) = line
        .strip_prefix(b"rename from ")
        .or_else(|| line.strip_prefix(b"copy from "))
    {
        section.old_path = Some(path_text(&unquote_or_plain(p)));
    } else if let Some(p) = line
        .strip_prefix(b"rename to ")
        .or_else(|| line.strip_prefix(b"copy to "))
    {
        section.new_path = Some(path_text(&unquote_or_plain(p)));
    }
}

/// A `---`/`+++` operand: `/dev/null` → `None`; the prefix and a trailing tab (and what
/// follows it) are dropped.
fn side_path(text: &[u8], prefix: &[u8]) -> Option<String> {
    let raw = if text.starts_with(b"\"") {
        unquote(text)?.0
    } else {
        let end = text.iter().position(|&b| b == b'\t').unwrap_or(text.len());
        text[..end].to_vec()
    };
    if raw == b"/dev/null" {
        return None;
    }
    Some(path_text(raw.strip_prefix(prefix).unwrap_or(&raw)))
}

/// The two paths of a `diff --git A B` line (fallback when no `---`/`+++` lines follow).
fn git_line_paths(rest: &[u8]) -> (Option<String>, Option<String>) {
    let strip = |p: &[u8], prefix: &[u8]| path_text(p.strip_prefix(prefix).unwrap_or(p));
    if rest.starts_with(b"\"") {
        let Some((old, tail)) = unquote(rest) else {
            return (None, None);
        };
        let tail = tail.strip_prefix(b" ").unwrap_or(tail);
        let new = unquote_or_plain(tail);
        return (Some(strip(&old, b"a/")), Some(strip(&new, b"b/")));
    }
    // Unquoted `a/X b/Y`: prefer the split where X == Y (a path may contain " b/").
    let splits: Vec<usize> = (0..rest.len())
        .filter(|&i| {
            rest[i] == b' ' && rest[i + 1..].starts_with(b"b/") || rest[i..].starts_with(b" \"b/")
        })
        .collect();
    let pick = splits
        .iter()
        .copied()
        .find(|&i| {
            let old = rest[..i].strip_prefix(b"a/").unwrap_or(&rest[..i]);
            let new = &rest[i + 3..];
            old == new
        })
        .or(splits.first().copied());
    match pick {
        Some(i) => (
            Some(strip(&rest[..i], b"a/")),
            Some(strip(&unquote_or_plain(&rest[i + 1..]), b"b/")),
        ),
        None => (None, Some(path_text(rest))),
    }
}

fn unquote_or_plain(text: &[u8]) -> Vec<u8> {
    if text.starts_with(b"\"")
        && let Some((raw, _)) = unquote(text)
    {
        return raw;
    }
    text.to_vec()
}

/// Reads a C-style quoted string at the start of `text` (git's `quote_c_style`); returns the
/// bytes and what follows the closing quote.
fn unquote(text: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        let b = *text.get(i)?;
        i += 1;
        match b {
            b'"' => return Some((out, &text[i..])),
            b'\\' => {
                let e = *text.get(i)?;
                i += 1;
                out.push(match e {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 0x0b,
                    b'f' => 0x0c,
                    b'r' => b'\r',
                    b'0'..=b'3' => {
                        let d1 = *text.get(i)?;
                        let d2 = *text.get(i + 1)?;
                        if !(b'0'..=b'7').contains(&d1) || !(b'0'..=b'7').contains(&d2) {
                            return None;
                        }
                        i += 2;
                        ((e - b'0') << 6) | ((d1 - b'0') << 3) | (d2 - b'0')
                    }
                    other => other,
                });
            }
            other => out.push(other),
        }
    }
}

fn path_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_read_paths_from_headers() {
        let diff = concat!(
            "preamble\n",
            "diff --git a/old name.txt b/new name.txt\n",
            "similarity index 90%\n",
            "rename from old name.txt\n",
            "rename to new name.txt\n",
            "diff --git \"a/na\\303\\257ve\" \"b/na\\303\\257ve\"\n",
            "new file mode 100644\n",
            "--- /dev/null\n",
            "+++ \"b/na\\303\\257ve\"\n",
            "@@ -0,0 +1 @@\n",
            "+x\n",
            "diff --git a/gone.txt b/gone.txt\n",
            "deleted file mode 100644\n",
            "--- a/gone.txt\n",
            "+++ /dev/null\n",
            "@@ -1 +0,0 @@\n",
            "-x\n",
            "diff --git a/img.png b/img.png\n",
            "Binary files a/img.png and b/img.png differ\n",
        );
        let starts = section_starts(diff.as_bytes());
        let ends = starts.iter().skip(1).copied().chain([diff.len()]);
        let s: Vec<Section> = starts
            .iter()
            .zip(ends)
            .map(|(&a, b)| parse_section(diff.as_bytes(), a..b))
            .collect();
        let paths: Vec<(&str, &str)> = s.iter().map(|s| (s.old(), s.path())).collect();
        assert_eq!(
            paths,
            [
                ("", ""),
                ("old name.txt", "new name.txt"),
                ("naïve", "naïve"),
                ("gone.txt", "gone.txt"),
                ("img.png", "img.png"),
            ]
        );
        assert_eq!(s[0].range.start, 0);
        assert_eq!(s.last().map(|s| s.range.end), Some(diff.len()));
        assert!(s.windows(2).all(|w| w[0].range.end == w[1].range.start));
    }

    #[test]
    fn quoted_paths_unquote_octal_and_letters() {
        assert_eq!(
            unquote(b"\"a\\tb\\\"c\\\\\\303\\251\" rest"),
            Some((b"a\tb\"c\\\xc3\xa9".to_vec(), &b" rest"[..]))
        );
        assert_eq!(unquote(b"\"unterminated"), None);
    }
}
