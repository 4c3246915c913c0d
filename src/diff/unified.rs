//! The line diff of two byte buffers, written as git writes hunks: `@@ -a,b +c,d @@ func`
//! headers, context taken from the new side, `\ No newline at end of file` markers.
//! Pure: bytes in, bytes out. File headers (`diff --git`, `index`, …) live in `render`.

use gix::diff::blob::{Algorithm as ImaraAlgorithm, Diff, InternedInput, sources::byte_lines};

/// The line-matching algorithm (`diff.algorithm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// git's default.
    #[default]
    Myers,
    /// Myers without the cost-bounding heuristics (`minimal`).
    Minimal,
    /// `histogram`. Also used for `patience`, which has no separate implementation here.
    Histogram,
}

/// How hunks are cut and matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HunkOptions {
    /// Lines of context around each change (`-U`, `diff.context`; git's default is 3).
    pub context: u32,
    /// Extra unchanged lines allowed between two changes before they are split into two hunks
    /// (`diff.interHunkContext`, default 0).
    pub inter_hunk_context: u32,
    /// The line-matching algorithm.
    pub algorithm: Algorithm,
    /// `diff.indentHeuristic` (default true): slide ambiguous changes to where indentation says.
    pub indent_heuristic: bool,
}

impl Default for HunkOptions {
    fn default() -> Self {
        HunkOptions {
            context: 3,
            inter_hunk_context: 0,
            algorithm: Algorithm::Myers,
            indent_heuristic: true,
        }
    }
}

/// Where one hunk sits in the output and what it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HunkSpan {
    /// Byte offset of the hunk's `@@` line in the output buffer.
    pub start: usize,
    /// Byte offset just past the hunk's last line.
    pub end: usize,
    /// `+` lines in the hunk.
    pub added: u32,
    /// `-` lines in the hunk.
    pub deleted: u32,
}

/// The result of [`write_hunks`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunks {
    /// Total `+` lines.
    pub added: u32,
    /// Total `-` lines.
    pub deleted: u32,
    /// One entry per hunk, in order.
    pub spans: Vec<HunkSpan>,
}

/// The longest function line git keeps (`struct func_line`'s buffer in xdiff).
const FUNC_LINE_MAX: usize = 80;
/// git formats a hunk header into a 128-byte buffer and cuts the function name to fit.
const HUNK_HEADER_BUF: usize = 128;

/// Diffs `old` against `new` line by line and appends git's hunks to `out`.
///
/// `preamble` (the `--- a/…`/`+++ b/…` lines) is written before the first hunk, and only if
/// there is one, as git does. Identical inputs write nothing.
pub fn write_hunks(
    old: &[u8],
    new: &[u8],
    preamble: &[u8],
    options: &HunkOptions,
    out: &mut Vec<u8>,
) -> Hunks {
    let mut result = Hunks::default();
    if old == new {
        return result;
    }
    let input = InternedInput::new(byte_lines(old), byte_lines(new));
    let algorithm = match options.algorithm {
        Algorithm::Myers => ImaraAlgorithm::Myers,
        Algorithm::Minimal => ImaraAlgorithm::MyersMinimal,
        Algorithm::Histogram => ImaraAlgorithm::Histogram,
    };
    let mut diff = Diff::compute(algorithm, &input);
    if options.indent_heuristic {
        diff.postprocess_lines(&input);
    } else {
        diff.postprocess_no_heuristic(&input);
    }
    let changes: Vec<_> = diff.hunks().collect();
    if changes.is_empty() {
        return result;
    }
    let old_lines: Vec<&[u8]> = input.before.iter().map(|&t| input.interner[t]).collect();
    let new_lines: Vec<&[u8]> = input.after.iter().map(|&t| input.interner[t]).collect();
    let n_old = old_lines.len() as u32;
    let n_new = new_lines.len() as u32;
    let ctx = options.context;
    let max_gap = 2 * ctx + options.inter_hunk_context;

    out.extend_from_slice(preamble);
    let mut func = FuncLine::default();
    let mut first = 0;
    while first < changes.len() {
        // A hunk takes changes while the unchanged gap between them is at most `max_gap`.
        let mut last = first;
        while last + 1 < changes.len()
            && changes[last + 1].before.start - changes[last].before.end <= max_gap
        {
            last += 1;
        }
        let (head, tail) = (&changes[first], &changes[last]);
        let s1 = head.before.start.saturating_sub(ctx);
        let s2 = head.after.start.saturating_sub(ctx);
        let trailing = ctx.min(n_old - tail.before.end).min(n_new - tail.after.end);
        let e1 = tail.before.end + trailing;
        let e2 = tail.after.end + trailing;

        let start = out.len();
        let func_name = func.before(&old_lines, s1 as usize);
        write_hunk_header(out, s1 + 1, e1 - s1, s2 + 1, e2 - s2, func_name);

        let (mut added, mut deleted) = (0, 0);
        let mut at_new = s2;
        for change in &changes[first..=last] {
            for line in &new_lines[at_new as usize..change.after.start as usize] {
                write_line(out, b' ', line);
            }
            for line in &old_lines[change.before.start as usize..change.before.end as usize] {
                write_line(out, b'-', line);
            }
            for line in &new_lines[change.after.start as usize..change.after.end as usize] {
                write_line(out, b'+', line);
            }
            deleted += change.before.end - change.before.start;
            added += change.after.end - change.after.start;
            at_new = change.after.end;
        }
        for line in &new_lines[at_new as usize..e2 as usize] {
            write_line(out, b' ', line);
        }
        result.spans.push(HunkSpan {
            start,
            end: out.len(),
            added,
            deleted,
        });
        result.added += added;
        result.deleted += deleted;
        first = last + 1;
    }
    result
}

fn write_line(out: &mut Vec<u8>, prefix: u8, line: &[u8]) {
    out.push(prefix);
    out.extend_from_slice(line);
    if line.last() != Some(&b'\n') {
        out.extend_from_slice(b"\n\\ No newline at end of file\n");
    }
}

/// Writes `@@ -s1,c1 +s2,c2 @@ func` as xdiff formats it and git's `diff.c` then prints it:
/// a count of 1 is omitted, an empty range names the line before it, and the line is cut at the
/// first byte that is not valid UTF-8 (git's `sane_truncate_line`).
fn write_hunk_header(out: &mut Vec<u8>, s1: u32, c1: u32, s2: u32, c2: u32, func: &[u8]) {
    let mut line = Vec::with_capacity(HUNK_HEADER_BUF);
    line.extend_from_slice(b"@@ -");
    push_range(&mut line, s1, c1);
    line.extend_from_slice(b" +");
    push_range(&mut line, s2, c2);
    line.extend_from_slice(b" @@");
    if !func.is_empty() {
        line.push(b' ');
        let room = HUNK_HEADER_BUF - line.len() - 1;
        line.extend_from_slice(&func[..func.len().min(room)]);
    }
    line.push(b'\n');
    let valid = git_utf8_prefix_len(&line);
    out.extend_from_slice(&line[..valid]);
    if valid < line.len() {
        out.push(b'\n');
    }
}

fn push_range(line: &mut Vec<u8>, start: u32, count: u32) {
    let start = if count == 0 { start - 1 } else { start };
    line.extend_from_slice(start.to_string().as_bytes());
    if count != 1 {
        line.push(b',');
        line.extend_from_slice(count.to_string().as_bytes());
    }
}

/// git's default function-line finder (`def_ff`) with xdiff's memory of the previous hunk's
/// answer: the nearest line above the hunk that starts with a letter, `_` or `$`.
#[derive(Default)]
struct FuncLine {
    /// Lines below this index were already searched for an earlier hunk.
    searched_below: usize,
    text: Vec<u8>,
}

impl FuncLine {
    /// Returns the function line for a hunk whose first line (context included) is `hunk_start`.
    fn before(&mut self, old_lines: &[&[u8]], hunk_start: usize) -> &[u8] {
        for line in old_lines[self.searched_below.min(hunk_start)..hunk_start]
            .iter()
            .rev()
        {
            if let Some(found) = function_line(line) {
                self.text = found.to_vec();
                break;
            }
        }
        self.searched_below = self.searched_below.max(hunk_start);
        &self.text
    }
}

fn function_line(line: &[u8]) -> Option<&[u8]> {
    let first = *line.first()?;
    if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$') {
        return None;
    }
    let mut len = line.len().min(FUNC_LINE_MAX);
    while len > 0 && matches!(line[len - 1], b' ' | b'\t' | b'\n' | b'\r') {
        len -= 1;
    }
    Some(&line[..len])
}

/// The length of the longest prefix git's UTF-8 reader accepts (`utf8.c`'s
/// `pick_one_utf8_char`): strict UTF-8, and additionally refusing U+FFFE and U+FFFF.
pub(crate) fn git_utf8_prefix_len(bytes: &[u8]) -> usize {
    let mut i = 0;
    while i < bytes.len() {
        let b0 = bytes[i];
        let cont = |k: usize| bytes.get(i + k).is_some_and(|b| b & 0xc0 == 0x80);
        let width = if b0 < 0x80 {
            1
        } else if b0 & 0xe0 == 0xc0 {
            if !cont(1) || b0 & 0xfe == 0xc0 {
                break;
            }
            2
        } else if b0 & 0xf0 == 0xe0 {
            if !cont(1) || !cont(2) {
                break;
            }
            let b1 = bytes[i + 1];
            let overlong = b0 == 0xe0 && b1 & 0xe0 == 0x80;
            let surrogate = b0 == 0xed && b1 & 0xe0 == 0xa0;
            let non_char = b0 == 0xef && b1 == 0xbf && bytes[i + 2] & 0xfe == 0xbe;
            if overlong || surrogate || non_char {
                break;
            }
            3
        } else if b0 & 0xf8 == 0xf0 {
            if !cont(1) || !cont(2) || !cont(3) {
                break;
            }
            let b1 = bytes[i + 1];
            let overlong = b0 == 0xf0 && b1 & 0xf0 == 0x80;
            let too_big = (b0 == 0xf4 && b1 > 0x8f) || b0 > 0xf4;
            if overlong || too_big {
                break;
            }
            4
        } else {
            break;
        };
        i += width;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunks(old: &str, new: &str) -> String {
        let mut out = Vec::new();
        write_hunks(
            old.as_bytes(),
            new.as_bytes(),
            b"",
            &HunkOptions::default(),
            &mut out,
        );
        String::from_utf8(out).expect("test inputs are UTF-8")
    }

    #[test]
    fn identical_inputs_write_nothing() {
        assert_eq!(hunks("a\nb\n", "a\nb\n"), "");
    }

    #[test]
    fn range_rules_follow_git() {
        // Cases checked against `git diff --no-index` output.
        let cases = [
            ("", "a\n", "@@ -0,0 +1 @@\n+a\n"),
            ("a\n", "", "@@ -1 +0,0 @@\n-a\n"),
            ("a\n", "b\n", "@@ -1 +1 @@\n-a\n+b\n"),
            (
                "a",
                "a\n",
                "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n",
            ),
            (
                "1\n2\n3\n4\n5\n",
                "1\n2\n3\n4\n5\n6\n",
                "@@ -3,3 +3,4 @@\n 3\n 4\n 5\n+6\n",
            ),
        ];
        for (old, new, expected) in cases {
            assert_eq!(hunks(old, new), expected, "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn function_line_is_the_nearest_above_the_context() {
        let old = "fn alpha() {\n  1\n  2\n  3\n  4\n  5\n}\n";
        let new = "fn alpha() {\n  1\n  2\n  3\n  4\n  five\n}\n";
        assert_eq!(
            hunks(old, new),
            "@@ -3,5 +3,5 @@ fn alpha() {\n   2\n   3\n   4\n-  5\n+  five\n }\n"
        );
    }

    #[test]
    fn function_line_is_cut_at_80_bytes_then_trailing_space() {
        let long = format!("{}   {}\n", "x".repeat(78), "tail");
        assert_eq!(
            function_line(long.as_bytes()),
            Some("x".repeat(78).as_bytes())
        );
        assert_eq!(function_line(b"$var = 1;\r\n"), Some(&b"$var = 1;"[..]));
        assert_eq!(function_line(b"  indented\n"), None);
        assert_eq!(function_line(b"\xc3\xa9t\xc3\xa9\n"), None);
    }

    #[test]
    fn hunk_header_is_cut_at_invalid_utf8() {
        let mut out = Vec::new();
        write_hunk_header(&mut out, 5, 2, 5, 3, b"caf\xe9 au lait");
        assert_eq!(out, b"@@ -5,2 +5,3 @@ caf\n");
    }

    #[test]
    fn git_utf8_rules() {
        let cases: &[(&[u8], usize)] = &[
            (b"plain", 5),
            ("é€😀".as_bytes(), 9),
            (b"a\xc0\x80", 1),         // overlong
            (b"a\xed\xa0\x80", 1),     // surrogate
            (b"a\xef\xbf\xbe", 1),     // U+FFFE
            (b"a\xf4\x90\x80\x80", 1), // beyond U+10FFFF
            (b"a\xe2\x82", 1),         // truncated
        ];
        for (input, expected) in cases {
            assert_eq!(git_utf8_prefix_len(input), *expected, "{input:?}");
        }
    }
}
