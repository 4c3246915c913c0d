//! `packed-refs`, read and written as git does: the fast backwards reader of a prefix's
//! newest entries (a binary search over the sorted file, benchmarked in `cargo bench --bench
//! runs`), and the writer that adds or replaces entries, keeping every other line byte for
//! byte, under `packed-refs.lock` taken through [`crate::store::lock`].

use std::collections::HashSet;

use gix::ObjectId;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::store::{Error, lock};

/// `packed-refs` under its lock (`packed-refs.lock`, as git takes it): read and replaced whole
/// by [`PackedRefs::write_with`]; dropped unwritten, the lock goes and the file stays.
pub(super) struct PackedRefs {
    lock: gix::lock::File,
    path: PathBuf,
}

impl PackedRefs {
    /// Takes the lock on `<common_dir>/packed-refs`; `None` when another process holds it
    /// (callers then take gix's ordinary path, or skip a best-effort packing).
    pub(super) fn lock(common_dir: &Path) -> Result<Option<PackedRefs>, Error> {
        let path = common_dir.join("packed-refs");
        match lock::acquire(&path, Duration::ZERO) {
            Ok(lock) => Ok(Some(PackedRefs { lock, path })),
            Err(lock::NotLocked::Held(_)) => Ok(None),
            Err(lock::NotLocked::Failed(e)) => Err(e),
        }
    }

    /// Replaces `packed-refs` with its current content plus `new` (see [`packed_refs_with`]).
    /// With [`OnExisting::Refuse`], writes nothing and returns `false` when one of them is
    /// already packed.
    pub(super) fn write_with(
        self,
        new: &[(String, ObjectId)],
        on_existing: OnExisting,
    ) -> Result<bool, Error> {
        let existing = read_packed_refs(&self.path)?;
        let Some(content) = packed_refs_with(&existing, new, on_existing) else {
            return Ok(false);
        };
        lock::commit(self.lock, &content, None)?;
        Ok(true)
    }
}

fn read_packed_refs(path: &Path) -> Result<Vec<u8>, Error> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io("read", path)(e)),
    }
}

/// The entries of a sorted `packed-refs` body (no header line) whose names start with `prefix`,
/// last first, as (name, target): the end of the prefix's range is found by binary search and
/// only the entries walked are decoded, so the newest of many runs cost the same as of few.
/// Peel lines (`^…`) belong to the entry above them; undecodable lines are skipped.
pub(super) fn packed_backwards<'a>(
    buf: &'a [u8],
    prefix: &'a str,
) -> impl Iterator<Item = (&'a str, ObjectId)> + 'a {
    // The start of the entry holding byte `pos` (a peel line's entry is the line above).
    let entry_start = |mut pos: usize| loop {
        let start = buf[..pos]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        if start > 0 && buf.get(start) == Some(&b'^') {
            pos = start - 1;
        } else {
            return start;
        }
    };
    // The end of the entry starting at `start`: past its line and its peel lines.
    let entry_end = |start: usize| {
        let mut end = start;
        loop {
            end = buf[end..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(buf.len(), |i| end + i + 1);
            if buf.get(end) != Some(&b'^') {
                return end;
            }
        }
    };
    let name_at = |start: usize| {
        let line = &buf[start..];
        let line = &line[..line.iter().position(|b| *b == b'\n').unwrap_or(line.len())];
        let space = line.iter().position(|b| *b == b' ')?;
        Some((&line[space + 1..], &line[..space]))
    };
    // The first entry past the range: the first whose name is not below `prefix` with its
    // last byte raised (every name in the range sorts below that).
    let mut upper = prefix.as_bytes().to_vec();
    if let Some(last) = upper.last_mut() {
        *last += 1;
    }
    let (mut lo, mut hi) = (0, buf.len());
    while lo < hi {
        let start = entry_start(lo + (hi - lo) / 2);
        let below = name_at(start).is_none_or(|(name, _)| name < upper.as_slice());
        if below {
            lo = entry_end(start);
        } else {
            hi = start;
        }
    }
    let mut pos = lo;
    std::iter::from_fn(move || {
        while pos > 0 {
            let start = entry_start(pos - 1);
            pos = start;
            let Some((name, hex)) = name_at(start) else {
                continue;
            };
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            if !name.starts_with(prefix) {
                pos = 0;
                return None;
            }
            // A first field that is no id (a torn or foreign line) names no target: skipped.
            if let Ok(id) = ObjectId::from_hex(hex) {
                return Some((name, id));
            }
        }
        None
    })
}

const PACKED_HEADER: &str = "# pack-refs with: peeled fully-peeled sorted \n";

/// What to do when a ref to add is already in `packed-refs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OnExisting {
    Refuse,
    Replace,
}

/// `packed-refs` content with `new` refs (pointing at commits, so without `^` peel lines)
/// added to `existing`, sorted by name as git writes it; with [`OnExisting::Refuse`], `None`
/// when one of them is already there. Other entries and their peel lines are kept byte for
/// byte; the header keeps only the traits the old file had (a new file gets git's full set).
fn packed_refs_with(
    existing: &[u8],
    new: &[(String, ObjectId)],
    on_existing: OnExisting,
) -> Option<Vec<u8>> {
    let mut header: Option<&[u8]> = None;
    // (name, lines of the entry: the ref line and any `^` peel line after it)
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for line in existing.split_inclusive(|b| *b == b'\n') {
        if line.starts_with(b"#") {
            header.get_or_insert(line);
        } else if line.starts_with(b"^") {
            if let Some((_, block)) = entries.last_mut() {
                block.extend_from_slice(line);
            }
        } else if let Some(space) = line.iter().position(|b| *b == b' ') {
            let name = line[space + 1..].trim_ascii_end().to_vec();
            let mut block = line.to_vec();
            if !block.ends_with(b"\n") {
                block.push(b'\n');
            }
            entries.push((name, block));
        }
    }
    let new_names: HashSet<&[u8]> = new.iter().map(|(name, _)| name.as_bytes()).collect();
    let before = entries.len();
    entries.retain(|(name, _)| !new_names.contains(name.as_slice()));
    if entries.len() != before && on_existing == OnExisting::Refuse {
        return None;
    }
    for (name, id) in new {
        entries.push((
            name.as_bytes().to_vec(),
            format!("{id} {name}\n").into_bytes(),
        ));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let header = match header {
        None => PACKED_HEADER.as_bytes().to_vec(),
        Some(old) => {
            let traits = String::from_utf8_lossy(old);
            let mut line = "# pack-refs with:".to_owned();
            for t in ["peeled", "fully-peeled"] {
                if traits.split_whitespace().any(|w| w == t) {
                    line.push(' ');
                    line.push_str(t);
                }
            }
            line.push_str(" sorted \n");
            line.into_bytes()
        }
    };
    let mut out = header;
    for (_, block) in entries {
        out.extend_from_slice(&block);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RUNS_PREFIX;

    fn id(c: char) -> ObjectId {
        ObjectId::from_hex(c.to_string().repeat(40).as_bytes()).expect("hex")
    }

    #[test]
    fn new_refs_join_packed_refs_sorted_with_existing_entries_kept() {
        let existing = format!(
            "# pack-refs with: peeled fully-peeled sorted \n{a} refs/remotes/origin/main\n{b} refs/tags/v1\n^{c}\n",
            a = id('a'),
            b = id('b'),
            c = id('c')
        );
        let new = [
            ("refs/pair/runs/2".to_owned(), id('2')),
            ("refs/pair/runs/1".to_owned(), id('1')),
        ];
        let out = packed_refs_with(existing.as_bytes(), &new, OnExisting::Refuse).expect("added");
        let want = format!(
            "# pack-refs with: peeled fully-peeled sorted \n{one} refs/pair/runs/1\n{two} refs/pair/runs/2\n{a} refs/remotes/origin/main\n{b} refs/tags/v1\n^{c}\n",
            one = id('1'),
            two = id('2'),
            a = id('a'),
            b = id('b'),
            c = id('c')
        );
        assert_eq!(String::from_utf8(out).expect("utf-8"), want);
    }

    #[test]
    fn packed_refs_cases() {
        let new = [("refs/pair/runs/1".to_owned(), id('1'))];
        // A new file gets git's full header.
        let out = packed_refs_with(b"", &new, OnExisting::Refuse).expect("added");
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            format!("{PACKED_HEADER}{} refs/pair/runs/1\n", id('1'))
        );
        // An existing name is refused.
        let existing = format!("{} refs/pair/runs/1\n", id('9'));
        assert!(packed_refs_with(existing.as_bytes(), &new, OnExisting::Refuse).is_none());
        let replaced =
            packed_refs_with(existing.as_bytes(), &new, OnExisting::Replace).expect("replaced");
        assert_eq!(
            String::from_utf8(replaced).expect("utf-8"),
            format!("{PACKED_HEADER}{} refs/pair/runs/1\n", id('1'))
        );
        // A header without peeling traits does not gain them; a missing final newline is fixed.
        let existing = format!("# pack-refs with: sorted \n{} refs/x", id('9'));
        let out = String::from_utf8(
            packed_refs_with(existing.as_bytes(), &new, OnExisting::Refuse).expect("added"),
        )
        .expect("utf-8");
        assert!(out.starts_with("# pack-refs with: sorted \n"), "{out}");
        assert!(out.ends_with(" refs/x\n"), "{out}");
    }

    /// A naive reading of the same entries: every line decoded, the prefix's last first.
    fn packed_naive<'a>(buf: &'a str, prefix: &str) -> Vec<(&'a str, ObjectId)> {
        let mut out: Vec<_> = buf
            .lines()
            .filter(|l| !l.starts_with('^') && !l.starts_with('#'))
            .filter_map(|l| {
                let (hex, name) = l.split_once(' ')?;
                Some((name, ObjectId::from_hex(hex.as_bytes()).ok()?))
            })
            .filter(|(name, _)| name.starts_with(prefix))
            .collect();
        out.reverse();
        out
    }

    #[test]
    fn packed_entries_are_read_backwards_from_the_end_of_the_prefix_range() {
        let names = [
            "refs/heads/main",
            "refs/pair/dropped/1",
            "refs/pair/runs/20260101-000000-000aaa",
            "refs/pair/runs/20260101-000001-000aab",
            "refs/pair/runs/20260102-000000-000abc",
            "refs/pair/runs0",
            "refs/pair/runsx/1",
            "refs/remotes/origin/main",
            "refs/tags/v1",
        ];
        // Every subset (with and without peel lines, and a final newline) reads the same
        // backwards as the naive forward decoding does.
        for mask in 0u32..(1 << names.len()) {
            for (peeled, final_newline) in [(false, true), (true, true), (true, false)] {
                let mut buf = String::new();
                for (i, name) in names.iter().enumerate() {
                    if mask & (1 << i) != 0 {
                        let hex = format!("{:040x}", i + 1);
                        buf.push_str(&format!("{hex} {name}\n"));
                        if peeled && i % 2 == 0 {
                            buf.push_str(&format!("^{:040x}\n", 100 + i));
                        }
                    }
                }
                if !final_newline {
                    buf.pop();
                }
                let got: Vec<_> = packed_backwards(buf.as_bytes(), RUNS_PREFIX).collect();
                assert_eq!(got, packed_naive(&buf, RUNS_PREFIX), "{buf}");
            }
        }
    }
}
