//! Secrets out of the packet (SPEC §6.2, §14): each rendered file diff has every match replaced
//! by `[REDACTED:<kind>]` *before* the byte budget cuts the packet (redaction changes lengths,
//! so the budget is applied to what is really sent), with its hunk positions moved to match.
//! Decides nothing about verdicts: it returns the findings for the caller to act on.

use crate::diff::{FileDiff, HunkSpan};
use crate::secrets::{Finding, Scanner};

/// `file` with its secrets redacted, and what was found (ranges are in the original text).
pub(super) fn redact_file(scanner: &Scanner, file: FileDiff) -> (FileDiff, Vec<Finding>) {
    let redacted = scanner.redact_diff_mapped(&file.text);
    if redacted.findings.is_empty() {
        return (file, Vec::new());
    }
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
