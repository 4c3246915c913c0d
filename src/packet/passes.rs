//! A review of the whole change, in as many passes as it takes (SPEC §6.2 "Coverage is part
//! of the approval"): every file's diff, redacted and with unreadable bytes escaped, packed in
//! git's order into passes of at most the byte budget each. A file too large for one pass is
//! split at hunk boundaries (a hunk too large, at line boundaries, each part with its own
//! `@@` header), its header repeated in every pass that carries a part. What no pass can
//! carry — binary content, a file over `pair.maxFileBytes`, a single line longer than a pass
//! — is listed as unreviewed: then the review's coverage is partial.

use gix::bstr::ByteSlice;

use super::shape::{MARKER, escape_unreadable};
use super::{Coverage, Error, FileList, Options, check_blindness, display, redact};
use crate::diff::{Change, Differ, FileDiff};
use crate::secrets::{Finding, Scanner};

/// The change in passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passes {
    /// Each pass's diff text, at most `budget_bytes` long; at least one (empty for an empty
    /// change).
    pub passes: Vec<Vec<u8>>,
    /// What the passes show together: `full` every file carried completely, `unreviewed`
    /// the rest.
    pub coverage: Coverage,
    /// The secrets found in the change (redacted from the passes), in file order.
    pub secrets: Vec<Finding>,
}

/// The line put after a file's header in each pass that carries only part of it.
pub const SPLIT_MARKER: &str =
    "[git-pair] part of a file too large for one pass: its other parts are in other passes\n";

/// Why a file's content reaches no reviewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unreviewed {
    Binary,
    TooLarge(u64),
    LongLine,
}

/// Splits the change `changes` into passes under `options.budget_bytes`, with every secret
/// `scanner` finds redacted first; files over `max_file_bytes` (either side) are not read
/// but scanned for secrets from their blobs, up to [`crate::secrets::MAX_SCANNED_BLOB`].
pub fn build(
    differ: &mut Differ,
    changes: &[Change],
    options: &Options,
    max_file_bytes: u64,
    scanner: &Scanner,
) -> Result<Passes, Error> {
    check_blindness(
        changes
            .iter()
            .flat_map(|c| [c.old_path.as_slice(), c.new_path.as_slice()])
            .filter(|p| !p.is_empty()),
        &options.exclude,
    )?;
    let mut too_large: Vec<Option<u64>> = Vec::with_capacity(changes.len());
    for change in changes {
        too_large.push(oversized(differ, change, max_file_bytes)?);
    }
    let renderable: Vec<Change> = changes
        .iter()
        .zip(&too_large)
        .filter(|(_, big)| big.is_none())
        .map(|(c, _)| c.clone())
        .collect();
    let mut rendered = redact::render_ahead(differ, &renderable, usize::MAX, scanner)?.into_iter();
    let mut secrets = Vec::new();
    let mut packer = Packer::new(options.budget_bytes);
    let mut coverage = Coverage {
        v: 1,
        files_total: changes.len(),
        full: FileList::default(),
        clipped: FileList::default(),
        names_only: FileList::default(),
        not_included: FileList::default(),
        binary: 0,
        bytes_included: 0,
        bytes_total: Some(0),
        budget_bytes: options.budget_bytes as u64,
        summary: None,
        passes: 1,
        unreviewed: FileList::default(),
    };
    let mut unreviewed: Vec<(String, Unreviewed)> = Vec::new();
    for (change, big) in changes.iter().zip(too_large) {
        let label = display(change);
        if let Some(size) = big {
            coverage.bytes_total = None;
            if let Some(id) = change.new_id.filter(|_| change.new_mode != Some(0o160000)) {
                let path = change.new_path.to_str_lossy();
                if !scanner.skips_path(&path)
                    && let Some(content) = differ.text_blob(id, crate::secrets::MAX_SCANNED_BLOB)?
                {
                    secrets.extend(scanner.scan(&path, &content));
                }
            }
            unreviewed.push((label, Unreviewed::TooLarge(size)));
            continue;
        }
        let (file, found) = match rendered.next().flatten() {
            Some(done) => done,
            None => redact::redact_file(scanner, differ.render(change)?),
        };
        secrets.extend(found);
        let file = escape_unreadable(file);
        if let Some(total) = coverage.bytes_total.as_mut() {
            *total += file.text.len() as u64;
        }
        let binary_content = file.binary && change.old_id != change.new_id;
        if file.binary {
            coverage.binary += 1;
        }
        let carried = packer.push(&file.text)
            || split(&file, options.budget_bytes).is_some_and(|parts| {
                for part in parts {
                    packer.push(&part);
                }
                true
            });
        match (carried, binary_content) {
            (true, false) => coverage.full.push(&label),
            (true, true) => unreviewed.push((label, Unreviewed::Binary)),
            (false, _) => unreviewed.push((label, Unreviewed::LongLine)),
        }
    }
    // What no pass shows is named in the passes too (bounded), so the reviewer knows of it.
    let unlisted = unreviewed
        .iter()
        .filter(|(_, why)| *why != Unreviewed::Binary)
        .count();
    let mut listed = 0;
    for (label, why) in &unreviewed {
        coverage.unreviewed.push(label);
        let line = match why {
            Unreviewed::Binary => continue,
            Unreviewed::TooLarge(size) => {
                format!("{MARKER} not shown ({size} bytes, over pair.maxFileBytes): {label}\n")
            }
            Unreviewed::LongLine => {
                format!("{MARKER} not shown (a line longer than a whole packet): {label}\n")
            }
        };
        if listed == super::LISTED_PATHS {
            packer.push(
                format!("{MARKER} ... and {} more not shown\n", unlisted - listed).as_bytes(),
            );
            break;
        }
        packer.push(line.as_bytes());
        listed += 1;
    }
    let passes = packer.finish();
    coverage.passes = passes.len() as u32;
    coverage.bytes_included = passes.iter().map(|p| p.len() as u64).sum();
    if coverage.is_partial() {
        coverage.summary = Some(format!(
            "reviewed {} of {} files",
            coverage.full.count, coverage.files_total
        ));
    }
    Ok(Passes {
        passes,
        coverage,
        secrets,
    })
}

/// The larger side's size when a side of `change` is a blob over `max` bytes.
fn oversized(differ: &Differ, change: &Change, max: u64) -> Result<Option<u64>, Error> {
    let mut largest = None;
    for (mode, id) in [
        (change.old_mode, change.old_id),
        (change.new_mode, change.new_id),
    ] {
        let (Some(mode), Some(id)) = (mode, id) else {
            continue;
        };
        if mode & 0o170000 != 0o100000 {
            continue;
        }
        let size = differ.blob_size(id)?;
        if size > max {
            largest = Some(largest.map_or(size, |l: u64| l.max(size)));
        }
    }
    Ok(largest)
}

/// Passes being filled in order.
struct Packer {
    budget: usize,
    passes: Vec<Vec<u8>>,
    current: Vec<u8>,
}

impl Packer {
    fn new(budget: usize) -> Packer {
        Packer {
            budget,
            passes: Vec::new(),
            current: Vec::new(),
        }
    }

    /// Adds `bytes` to the current pass, or to a new one when they do not fit there; false
    /// (nothing added) when they are larger than a whole pass.
    fn push(&mut self, bytes: &[u8]) -> bool {
        if bytes.len() > self.budget {
            return false;
        }
        if self.current.len() + bytes.len() > self.budget {
            self.passes.push(std::mem::take(&mut self.current));
        }
        self.current.extend_from_slice(bytes);
        true
    }

    fn finish(mut self) -> Vec<Vec<u8>> {
        if !self.current.is_empty() || self.passes.is_empty() {
            self.passes.push(self.current);
        }
        self.passes
    }
}

/// `file` in parts of at most `budget` bytes, each its header, [`SPLIT_MARKER`] and some of
/// its hunks (or of one hunk's lines, under a header of their own). `None` when it cannot be
/// split so: a header or a line too long, or content outside its hunks (a type change's
/// second section).
fn split(file: &FileDiff, budget: usize) -> Option<Vec<Vec<u8>>> {
    let text = &file.text;
    let mut end = file.header_len;
    for hunk in &file.hunks {
        if hunk.start != end {
            return None;
        }
        end = hunk.end;
    }
    if end != text.len() || file.hunks.is_empty() {
        return None;
    }
    let mut head = text[..file.header_len].to_vec();
    head.extend_from_slice(SPLIT_MARKER.as_bytes());
    let room = budget.checked_sub(head.len()).filter(|&r| r > 0)?;
    let mut parts = Vec::new();
    let mut current = head.clone();
    for hunk in &file.hunks {
        let bytes = &text[hunk.start..hunk.end];
        let pieces = if bytes.len() <= room {
            vec![bytes.to_vec()]
        } else {
            split_hunk(bytes, room)?
        };
        for piece in pieces {
            if current.len() + piece.len() > budget {
                parts.push(std::mem::replace(&mut current, head.clone()));
            }
            current.extend_from_slice(&piece);
        }
    }
    if current.len() > head.len() {
        parts.push(current);
    }
    Some(parts)
}

/// One hunk (`@@` line and its lines) as consecutive hunks of at most `room` bytes each.
fn split_hunk(hunk: &[u8], room: usize) -> Option<Vec<Vec<u8>>> {
    let mut lines = hunk.split_inclusive(|&b| b == b'\n');
    let header = lines.next()?;
    let parsed = crate::util::hunk::header(header)?;
    let ((old_start, old_count), (new_start, new_count)) = (parsed.old, parsed.new);
    let context = String::from_utf8_lossy(parsed.tail).into_owned();
    // The next line number on each side (a side with no lines names the line before it).
    let mut old_next = if old_count == 0 {
        old_start + 1
    } else {
        old_start
    };
    let mut new_next = if new_count == 0 {
        new_start + 1
    } else {
        new_start
    };
    // A line and the `\ No newline at end of file` after it stay together.
    let mut groups: Vec<(&[u8], usize)> = Vec::new();
    let mut offset = header.len();
    for line in lines {
        match groups.last_mut() {
            Some((_, len)) if line.starts_with(b"\\") => *len += line.len(),
            _ => groups.push((&hunk[offset..], line.len())),
        }
        offset += line.len();
    }
    // Room for the longest header a part can get: two ranges of up to 20 digits each.
    let reserve = "@@ -,  +, @@\n".len() + 4 * 20 + context.len();
    let fits = room.checked_sub(reserve)?;
    let mut parts = Vec::new();
    let mut body: Vec<u8> = Vec::new();
    let (mut old_n, mut new_n) = (0u64, 0u64);
    let mut flush = |body: &mut Vec<u8>,
                     old_n: &mut u64,
                     new_n: &mut u64,
                     old_next: &mut u64,
                     new_next: &mut u64| {
        if body.is_empty() {
            return;
        }
        let range = |next: u64, n: u64| match n {
            0 => format!("{},0", next - 1),
            1 => next.to_string(),
            n => format!("{next},{n}"),
        };
        let mut part = format!(
            "@@ -{} +{} @@{}",
            range(*old_next, *old_n),
            range(*new_next, *new_n),
            context
        )
        .into_bytes();
        part.extend_from_slice(body);
        parts.push(part);
        body.clear();
        *old_next += *old_n;
        *new_next += *new_n;
        *old_n = 0;
        *new_n = 0;
    };
    for (rest, len) in groups {
        let group = &rest[..len];
        if group.len() > fits {
            return None;
        }
        if body.len() + group.len() > fits {
            flush(
                &mut body,
                &mut old_n,
                &mut new_n,
                &mut old_next,
                &mut new_next,
            );
        }
        match group.first() {
            Some(b'+') => new_n += 1,
            Some(b'-') => old_n += 1,
            _ => {
                old_n += 1;
                new_n += 1;
            }
        }
        body.extend_from_slice(group);
    }
    flush(
        &mut body,
        &mut old_n,
        &mut new_n,
        &mut old_next,
        &mut new_next,
    );
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::file_diff_for_tests;

    fn lines(tag: &str, n: usize) -> String {
        (0..n)
            .map(|i| format!("{tag} {i} {}\n", "x".repeat(i % 50)))
            .collect()
    }

    /// Rebuilds the new side of a file from the `+` and context lines of its parts, in order.
    fn new_side(parts: &[Vec<u8>]) -> String {
        let mut out = String::new();
        for part in parts {
            let text = String::from_utf8(part.clone()).expect("UTF-8");
            let mut in_hunk = false;
            for line in text.lines() {
                if line.starts_with("@@ ") {
                    in_hunk = true;
                    continue;
                }
                if in_hunk && (line.starts_with('+') || line.starts_with(' ')) {
                    out.push_str(&line[1..]);
                    out.push('\n');
                }
            }
        }
        out
    }

    #[test]
    fn a_large_new_file_is_split_into_parts_that_carry_every_line() {
        let content = lines("added", 2000);
        let file = file_diff_for_tests("big.txt", None, Some(content.as_bytes()));
        assert!(file.text.len() > 10_000);
        let parts = split(&file, 10_000).expect("splits");
        assert!(parts.len() > 1);
        for part in &parts {
            assert!(part.len() <= 10_000, "{}", part.len());
            let text = String::from_utf8_lossy(part);
            assert!(
                text.starts_with("diff --git a/big.txt b/big.txt\n"),
                "{text}"
            );
            assert!(text.contains(SPLIT_MARKER));
        }
        assert_eq!(new_side(&parts), content);
        // Each part's header names where its lines are.
        let second = String::from_utf8_lossy(&parts[1]);
        let header = second
            .lines()
            .find(|l| l.starts_with("@@ "))
            .expect("a hunk header");
        let first_line = second
            .lines()
            .skip_while(|l| !l.starts_with("@@ "))
            .nth(1)
            .expect("a line");
        let n: u64 = first_line
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .expect("numbered");
        assert!(
            header.starts_with(&format!("@@ -0,0 +{},", n + 1)),
            "{header}"
        );
    }

    #[test]
    fn modified_files_split_with_both_sides_counted() {
        let old = lines("line", 3000);
        let new = old
            .replace(" 7 ", " seven ")
            .replace("line 2000 ", "LINE 2000 ");
        let file = file_diff_for_tests("m.txt", Some(old.as_bytes()), Some(new.as_bytes()));
        let parts = split(&file, 400).expect("splits");
        for part in &parts {
            let text = String::from_utf8_lossy(part);
            for hunk in text.split("\n@@ ").skip(1) {
                let (header, body) = hunk.split_once('\n').expect("header line");
                let line = format!("@@ {header}\n");
                let parsed = crate::util::hunk::header(line.as_bytes()).expect("a header");
                let (oc, nc) = (parsed.old.1, parsed.new.1);
                let old_lines = body
                    .lines()
                    .filter(|l| l.starts_with('-') || l.starts_with(' '))
                    .count() as u64;
                let new_lines = body
                    .lines()
                    .filter(|l| l.starts_with('+') || l.starts_with(' '))
                    .count() as u64;
                assert_eq!((oc, nc), (old_lines, new_lines), "{header}\n{body}");
            }
        }
    }

    #[test]
    fn a_line_longer_than_a_pass_cannot_be_split() {
        let content = format!("short\n{}\n", "y".repeat(5000));
        let file = file_diff_for_tests("wide.txt", None, Some(content.as_bytes()));
        assert_eq!(split(&file, 2000), None);
    }

    #[test]
    fn the_packer_never_overfills_a_pass() {
        let mut packer = Packer::new(100);
        assert!(packer.push(&[b'a'; 60]));
        assert!(packer.push(&[b'b'; 60]));
        assert!(!packer.push(&[b'c'; 101]));
        assert!(packer.push(&[b'd'; 40]));
        let passes = packer.finish();
        assert_eq!(passes.iter().map(Vec::len).collect::<Vec<_>>(), [60, 100]);
        assert_eq!(Packer::new(10).finish(), vec![Vec::<u8>::new()]);
    }
}
