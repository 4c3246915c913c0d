//! Secrets out of the packet (SPEC §6.2, §14): each rendered file diff has every match replaced
//! by `[REDACTED:<kind>]` *before* the byte budget cuts the packet (redaction changes lengths,
//! so the budget is applied to what is really sent), with its hunk positions moved to match.
//! Decides nothing about verdicts: it returns the findings for the caller to act on.

use std::sync::{Mutex, mpsc};

use crate::diff::{Change, Differ, FileDiff, HunkSpan};
use crate::secrets::{Finding, Scanner};

/// At most this many threads redact rendered files.
const MAX_WORKERS: usize = 4;

/// A file rendered and redacted ahead of the packet asking for it.
pub(super) type Ahead = Option<(FileDiff, Vec<Finding>)>;

/// Renders, in order, the files whose diffs fit `budget` together (what a packet under
/// budget shows in full), redacting each on worker threads while the next is rendered:
/// rendering needs the one repository handle, scanning does not. Entry `i` is file `i`,
/// rendered and redacted; the list stops where the budget is used up.
pub(super) fn render_ahead(
    differ: &mut Differ,
    changes: &[Change],
    budget: usize,
    scanner: &Scanner,
) -> Result<Vec<Ahead>, crate::diff::Error> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_WORKERS);
    let results: Mutex<Vec<Ahead>> = Mutex::new(Vec::new());
    let (jobs, queue) = mpsc::channel::<(usize, FileDiff)>();
    let queue = Mutex::new(queue);
    let rendered: Result<(), crate::diff::Error> = std::thread::scope(|scope| {
        let jobs = jobs;
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let job = queue.lock().expect("no worker panics holding it").recv();
                    let Ok((i, file)) = job else { break };
                    let done = redact_file(scanner, file);
                    results.lock().expect("no worker panics holding it")[i] = Some(done);
                }
            });
        }
        let mut total = 0usize;
        for (i, change) in changes.iter().enumerate() {
            let file = differ.render(change)?;
            total = total.saturating_add(file.text.len());
            results
                .lock()
                .expect("no worker panics holding it")
                .push(None);
            if jobs.send((i, file)).is_err() || total > budget {
                break;
            }
        }
        Ok(())
    });
    rendered?;
    Ok(results.into_inner().expect("the workers are done"))
}

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
