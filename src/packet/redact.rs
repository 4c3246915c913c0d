//! Secrets out of the packet (SPEC §6.2, §14): each rendered file diff has every match replaced
//! by `[REDACTED:<kind>]` *before* the byte budget cuts the packet (redaction changes lengths,
//! so the budget is applied to what is really sent), with its hunk positions moved to match.
//! Decides nothing about verdicts: it returns the findings for the caller to act on.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::diff::{Change, Differ, FileDiff, HunkSpan};
use crate::secrets::{Finding, Scanner};

/// At most this many threads render and redact files.
const MAX_WORKERS: usize = 4;

/// Changes of fewer files are rendered on the calling thread alone (a fork costs more).
const PARALLEL_FROM: usize = 16;

/// A file rendered and redacted ahead of the packet asking for it.
pub(super) type Ahead = Option<(FileDiff, Vec<Finding>)>;

/// Renders the files whose diffs fit `budget` together (what a packet under budget shows in
/// full) and redacts each, on up to [`MAX_WORKERS`] threads with a [`Differ`] each: entry `i`
/// is file `i`, rendered and redacted, or `None` where the work stopped (the budget used up,
/// or a small change done on this thread alone). The first file's error, by position, is the
/// error returned.
pub(super) fn render_ahead(
    differ: &mut Differ,
    changes: &[Change],
    budget: usize,
    scanner: &Scanner,
) -> Result<Vec<Ahead>, crate::diff::Error> {
    let workers = if changes.len() < PARALLEL_FROM {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, MAX_WORKERS)
    };
    let forks = (1..workers)
        .map(|_| differ.fork())
        .collect::<Result<Vec<_>, _>>()?;
    let next = AtomicUsize::new(0);
    let rendered_bytes = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let work = |differ: &mut Differ| -> Worked {
        let mut done = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(change) = changes.get(i) else { break };
            let file = match differ.render(change) {
                Ok(file) => file,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return (done, Some((i, e)));
                }
            };
            let len = file.text.len();
            let before = rendered_bytes.fetch_add(len, Ordering::Relaxed);
            done.push((i, redact_file(scanner, file)));
            if before.saturating_add(len) > budget {
                stop.store(true, Ordering::Relaxed);
            }
        }
        (done, None)
    };
    let mut results: Vec<Worked> = std::thread::scope(|scope| {
        let handles: Vec<_> = forks
            .into_iter()
            .map(|mut fork| scope.spawn(move || work(&mut fork)))
            .collect();
        let mut results = vec![work(differ)];
        for handle in handles {
            results.push(handle.join().expect("a render worker does not panic"));
        }
        results
    });
    if let Some((_, e)) = results
        .iter_mut()
        .filter_map(|(_, failed)| failed.take())
        .min_by_key(|(i, _)| *i)
    {
        return Err(e);
    }
    let mut ahead: Vec<Ahead> = Vec::new();
    for (i, done) in results.into_iter().flat_map(|(done, _)| done) {
        if ahead.len() <= i {
            ahead.resize_with(i + 1, || None);
        }
        ahead[i] = Some(done);
    }
    Ok(ahead)
}

/// What one render worker did: the files it rendered, and the first error it met.
type Worked = (
    Vec<(usize, (FileDiff, Vec<Finding>))>,
    Option<(usize, crate::diff::Error)>,
);

/// `file` with its secrets redacted, and what was found (ranges are in the original text).
pub(super) fn redact_file(scanner: &Scanner, file: FileDiff) -> (FileDiff, Vec<Finding>) {
    let Some(redacted) = scanner.redact_diff_mapped(&file.text) else {
        return (file, Vec::new());
    };
    let hunks = file
        .hunks
        .iter()
        .map(|h| HunkSpan {
            start: redacted.map_offset(h.start),
            end: redacted.map_offset(h.end),
            ..*h
        })
        .collect();
    let header_len = redacted.map_offset(file.header_len);
    let findings = redacted.findings.clone();
    (
        FileDiff {
            text: redacted.text,
            header_len,
            hunks,
            ..file
        },
        findings,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::file_diff_for_tests;

    #[test]
    fn hunks_still_frame_their_lines_after_redaction() {
        // A GitHub-shaped token, assembled here so the source holds none.
        let token = ["gh", "p_", &"aB3dE5gH7jK9mN1pQ4rS6tU8vW0xY2zC5eF7"[..36]].concat();
        let old: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let mut new = old.replace("line 3\n", &format!("token = \"{token}\"\n"));
        new = new.replace("line 30\n", &format!("other = \"{token}\"\nline 30\n"));
        let file = file_diff_for_tests("src/app.rs", Some(old.as_bytes()), Some(new.as_bytes()));
        assert_eq!(file.hunks.len(), 2);
        let (redacted, findings) = redact_file(&Scanner::builtin(), file.clone());
        assert_eq!(findings.len(), 2);
        let text = String::from_utf8(redacted.text.clone()).expect("UTF-8");
        assert!(!text.contains(&token), "{text}");
        assert_eq!(text.matches("[REDACTED:github-token]").count(), 2);
        assert_eq!(redacted.header_len, file.header_len);
        for (before, after) in file.hunks.iter().zip(&redacted.hunks) {
            assert!(text[after.start..].starts_with("@@ "), "{text}");
            assert_eq!(
                file.text[before.start..before.end]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count(),
                text[after.start..after.end].matches('\n').count()
            );
            assert_eq!((before.added, before.deleted), (after.added, after.deleted));
        }
        assert_eq!(redacted.hunks.last().map(|h| h.end), Some(text.len()));
    }
}
