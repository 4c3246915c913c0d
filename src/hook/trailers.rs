//! The `Pair-Run:` and `Reviewed-by:` trailers the `commit-msg` hook adds to a commit message,
//! placed by git's own trailer rules, as `git interpret-trailers --if-exists addIfDifferent
//! --no-divider` (what `git commit --trailer` runs) would place them.
//!
//! Pure: bytes in, bytes out; no git, no files. The rules follow git's `trailer.c` and
//! `commit.c` (2.47): the trailer block is the message's last paragraph when all its lines
//! are trailers (or continuation lines), or when at least a quarter are and one is
//! git-generated (`Signed-off-by: `, `(cherry picked from commit `). Comment lines and
//! everything from the scissors line on are left where they are, after the trailers. Two
//! deliberate differences, both to leave a message alone: nothing to add returns the message
//! unchanged (git would still rewrite the block, e.g. `Key:v` as `Key: v`), and a message
//! with no content returns unchanged, so that `git commit` still aborts on it.

/// The trailer naming the run whose review the commit carries.
pub const PAIR_RUN: &str = "Pair-Run";
/// The trailer naming the reviewer and round that approved the commit's tree.
pub const REVIEWED_BY: &str = "Reviewed-by";

/// Trailers git itself writes; one of them lets a mixed paragraph count as the trailer block.
const GIT_GENERATED_PREFIXES: [&[u8]; 2] = [b"Signed-off-by: ", b"(cherry picked from commit "];
/// What follows the comment prefix and a space on the scissors line of `commit -v`.
const CUT_LINE: &[u8] = b"------------------------ >8 ------------------------\n";
/// The separator between a trailer's token and value (git's default `trailer.separators`).
const SEPARATOR: u8 = b':';

/// A trailer that cannot be written as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("'{token}' is not a trailer token: use letters, digits and '-'")]
    BadToken { token: String },
    #[error("the {token} trailer needs a value on one line, got '{value}'")]
    BadValue { token: String, value: String },
}

/// One `Token: value` trailer, validated so that it reads back as itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailer {
    token: String,
    value: String,
}

impl Trailer {
    /// Validates `token` (letters, digits, `-`) and `value` (one non-empty line; surrounding
    /// whitespace is dropped, as git drops it when reading a trailer).
    pub fn new(token: &str, value: &str) -> Result<Trailer, Error> {
        if token.is_empty()
            || !token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err(Error::BadToken {
                token: token.to_owned(),
            });
        }
        let trimmed = value.trim_matches(|c: char| c.is_ascii() && is_space(c as u8));
        if trimmed.is_empty() || !crate::util::is_single_line(trimmed) {
            return Err(Error::BadValue {
                token: token.to_owned(),
                value: value.to_owned(),
            });
        }
        Ok(Trailer {
            token: token.to_owned(),
            value: trimmed.to_owned(),
        })
    }

    /// The token, e.g. `Pair-Run`.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The value, e.g. the run id.
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// `Pair-Run: <run_id>` and `Reviewed-by: <reviewer> (git-pair round <round>)`.
pub fn pair_trailers(run_id: &str, reviewer: &str, round: u32) -> Result<[Trailer; 2], Error> {
    Ok([
        Trailer::new(PAIR_RUN, run_id)?,
        Trailer::new(REVIEWED_BY, &format!("{reviewer} (git-pair round {round})"))?,
    ])
}

/// How to read the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options<'a> {
    /// What starts a comment line (`core.commentChar`/`core.commentString`; `#` by default).
    pub comment_prefix: &'a str,
    /// Treat a line starting with `---` and whitespace as the start of a patch, as plain
    /// `git interpret-trailers` does. Off by default, as in `git commit --trailer`: a commit
    /// message is all message.
    pub divider: bool,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            comment_prefix: "#",
            divider: false,
        }
    }
}

/// Adds each trailer in `trailers` that the message does not already carry with the same
/// value (`addIfDifferent`: token and value compared without case), at the end of the
/// message's trailer block, or in a new paragraph after one blank line when it has none.
/// Comment lines and a scissors section at the end stay after the trailers.
///
/// Returns the message unchanged when nothing is added or when it has no content (only
/// comments, blank lines and `Signed-off-by:` lines: `git commit` aborts on those).
pub fn add_trailers(message: &[u8], trailers: &[Trailer], options: &Options) -> Vec<u8> {
    let comment = options.comment_prefix.as_bytes();
    let mut buf = message.to_vec();
    if buf.last().is_some_and(|&b| b != b'\n') {
        buf.push(b'\n');
    }
    if has_no_content(&buf, comment) {
        return message.to_vec();
    }

    let end = end_of_log_message(&buf, options.divider, comment);
    let start = trailer_block_start(&buf, end, comment);
    let mut items = parse_block(&buf[start..end], comment);

    let mut added = false;
    for trailer in trailers {
        let already = items.iter().any(|item| match item {
            Item::Trailer { token, value } => {
                same_token(token, trailer.token.as_bytes())
                    && value.eq_ignore_ascii_case(trailer.value.as_bytes())
            }
            Item::Other(_) => false,
        });
        if !already {
            items.push(Item::Trailer {
                token: trailer.token.as_bytes().to_vec(),
                value: trailer.value.as_bytes().to_vec(),
            });
            added = true;
        }
    }
    if !added {
        return message.to_vec();
    }

    let mut out = buf[..start].to_vec();
    if !ends_with_blank_line(&buf, start) {
        out.push(b'\n');
    }
    for item in &items {
        match item {
            Item::Trailer { token, value } => {
                out.extend_from_slice(token);
                if last_non_space(token) != Some(SEPARATOR) {
                    out.extend_from_slice(b": ");
                }
                out.extend_from_slice(value);
            }
            Item::Other(line) => out.extend_from_slice(line),
        }
        out.push(b'\n');
    }
    out.extend_from_slice(&buf[end..]);
    out
}

/// One entry of the trailer block as git reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    /// `token: value` (continuation lines kept inside the value).
    Trailer { token: Vec<u8>, value: Vec<u8> },
    /// A line of the block that is not a trailer, kept as it is (without its newline).
    Other(Vec<u8>),
}

/// git's `isspace`: space, tab, LF, CR (not VT or FF).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|&b| !is_space(b))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(start, |i| i + 1);
    &bytes[start..end.max(start)]
}

/// The start of the line after the one starting at `pos`.
fn next_line(buf: &[u8], pos: usize) -> usize {
    buf[pos..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(buf.len(), |i| pos + i + 1)
}

/// The start of the last line of `buf[..len]`, a final newline belonging to that line.
fn last_line(buf: &[u8], len: usize) -> Option<usize> {
    match len {
        0 => None,
        1 => Some(0),
        _ => Some(
            buf[..len - 1]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1),
        ),
    }
}

/// Whether the line starting at `pos` holds only whitespace.
fn is_blank_line(buf: &[u8], pos: usize) -> bool {
    buf[pos..]
        .iter()
        .take_while(|&&b| b != b'\n')
        .all(|&b| is_space(b))
}

fn ends_with_blank_line(buf: &[u8], len: usize) -> bool {
    last_line(buf, len).is_some_and(|line| is_blank_line(buf, line))
}

fn last_non_space(bytes: &[u8]) -> Option<u8> {
    bytes.iter().rev().copied().find(|&b| !is_space(b))
}

/// Where the separator of a `token<optional whitespace>:` line is, as git's
/// `find_separator`.
fn find_separator(line: &[u8]) -> Option<usize> {
    let mut whitespace_found = false;
    for (i, &c) in line.iter().enumerate() {
        if c == SEPARATOR {
            return Some(i);
        }
        if !whitespace_found && (c.is_ascii_alphanumeric() || c == b'-') {
            continue;
        }
        if i != 0 && (c == b' ' || c == b'\t') {
            whitespace_found = true;
            continue;
        }
        break;
    }
    None
}

/// Tokens match without case on the shorter one's length, trailing punctuation ignored
/// (git's `same_token`).
fn same_token(a: &[u8], b: &[u8]) -> bool {
    let len = |t: &[u8]| {
        t.iter()
            .rposition(|c| c.is_ascii_alphanumeric())
            .map_or(0, |i| i + 1)
    };
    let n = len(a).min(len(b));
    a[..n].eq_ignore_ascii_case(&b[..n])
}

/// Where the commit message proper ends in `buf`: before a `---` patch divider (when asked)
/// and before the trailing run of comment and empty lines and the scissors section.
fn end_of_log_message(buf: &[u8], divider: bool, comment: &[u8]) -> usize {
    let mut end = buf.len();
    if divider {
        let mut s = 0;
        while s < buf.len() {
            if buf[s..].starts_with(b"---") && buf.get(s + 3).is_some_and(|&c| is_space(c)) {
                end = s;
                break;
            }
            s = next_line(buf, s);
        }
    }
    end - ignored_log_message_bytes(buf, end, comment)
}

/// Where the scissors line starts, or `len` (git's `wt_status_locate_end`).
fn scissors_position(buf: &[u8], len: usize, comment: &[u8]) -> usize {
    let mut pattern = b"\n".to_vec();
    pattern.extend_from_slice(comment);
    pattern.push(b' ');
    pattern.extend_from_slice(CUT_LINE);
    if buf.starts_with(&pattern[1..]) {
        return 0;
    }
    match buf
        .windows(pattern.len())
        .position(|w| w == pattern.as_slice())
    {
        Some(p) => len.min(p + 1),
        None => len,
    }
}

/// How many bytes at the end of `buf[..len]` are not message: the scissors section and the
/// run of comment lines, empty lines and old-style `Conflicts:` blocks before it (git's
/// `ignored_log_message_bytes`, whose "no run yet" is a zero offset, kept as such).
fn ignored_log_message_bytes(buf: &[u8], len: usize, comment: &[u8]) -> usize {
    let cutoff = scissors_position(buf, len, comment);
    let mut boc = 0;
    let mut bol = 0;
    let mut in_old_conflicts_block = false;
    while bol < cutoff {
        let next = buf[bol..cutoff]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(cutoff, |i| bol + i + 1);
        if buf[bol..cutoff].starts_with(comment) || buf[bol] == b'\n' {
            if boc == 0 {
                boc = bol;
            }
        } else if buf[bol..].starts_with(b"Conflicts:\n") {
            in_old_conflicts_block = true;
            if boc == 0 {
                boc = bol;
            }
        } else if in_old_conflicts_block && buf[bol] == b'\t' {
            // A path in the conflicts block.
        } else if boc != 0 {
            boc = 0;
            in_old_conflicts_block = false;
        }
        bol = next;
    }
    if boc != 0 { len - boc } else { len - cutoff }
}

/// Where the trailer block of `buf[..len]` starts, or `len` when there is none (git's
/// `find_trailer_block_start` with no `trailer.*` configuration).
fn trailer_block_start(buf: &[u8], len: usize, comment: &[u8]) -> usize {
    // The first paragraph is the title and cannot be trailers.
    let mut s = 0;
    while s < len {
        if !buf[s..len].starts_with(comment) && is_blank_line(buf, s) {
            break;
        }
        s = next_line(buf, s);
    }
    let end_of_title = s;

    let mut only_spaces = true;
    let mut recognized_prefix = false;
    let (mut trailer_lines, mut non_trailer_lines, mut possible_continuation_lines) = (0, 0, 0);
    let mut line = last_line(buf, len);
    while let Some(bol) = line.filter(|&l| l >= end_of_title) {
        line = last_line(buf, bol);
        if buf[bol..len].starts_with(comment) {
            non_trailer_lines += possible_continuation_lines;
            possible_continuation_lines = 0;
            continue;
        }
        if is_blank_line(buf, bol) {
            if only_spaces {
                continue;
            }
            non_trailer_lines += possible_continuation_lines;
            if (recognized_prefix && trailer_lines * 3 >= non_trailer_lines)
                || (trailer_lines > 0 && non_trailer_lines == 0)
            {
                return next_line(buf, bol);
            }
            return len;
        }
        only_spaces = false;

        if GIT_GENERATED_PREFIXES
            .iter()
            .any(|prefix| buf[bol..].starts_with(prefix))
        {
            trailer_lines += 1;
            possible_continuation_lines = 0;
            recognized_prefix = true;
            continue;
        }
        let separator = find_separator(&buf[bol..]);
        if separator.is_some_and(|p| p >= 1) && !is_space(buf[bol]) {
            trailer_lines += 1;
            possible_continuation_lines = 0;
        } else if is_space(buf[bol]) {
            possible_continuation_lines += 1;
        } else {
            non_trailer_lines += 1 + possible_continuation_lines;
            possible_continuation_lines = 0;
        }
    }
    len
}

/// The block's entries: continuation lines joined to their trailer, comment lines dropped
/// (git drops them when it rewrites the block).
fn parse_block(block: &[u8], comment: &[u8]) -> Vec<Item> {
    let mut strings: Vec<Vec<u8>> = Vec::new();
    let mut last_is_trailer = false;
    for line in block.split_inclusive(|&b| b == b'\n') {
        if last_is_trailer && line.first().is_some_and(|&b| is_space(b)) {
            if let Some(last) = strings.last_mut() {
                last.extend_from_slice(line);
            }
            continue;
        }
        last_is_trailer = find_separator(line).is_some_and(|p| p >= 1);
        strings.push(line.to_vec());
    }

    strings
        .iter()
        .filter(|s| !s.starts_with(comment))
        .map(|s| match find_separator(s).filter(|&p| p >= 1) {
            Some(p) => Item::Trailer {
                token: trim(&s[..p]).to_vec(),
                value: trim(&s[p + 1..]).to_vec(),
            },
            None => Item::Other(s.strip_suffix(b"\n").unwrap_or(s).to_vec()),
        })
        .collect()
}

/// Whether the message is empty for `git commit` (its `rest_is_empty` after the default
/// cleanup): nothing before the scissors but comments, whitespace and sign-offs.
fn has_no_content(buf: &[u8], comment: &[u8]) -> bool {
    let cutoff = scissors_position(buf, buf.len(), comment);
    buf[..cutoff]
        .split(|&b| b == b'\n')
        .filter(|line| !line.starts_with(comment))
        .filter(|line| !line.starts_with(GIT_GENERATED_PREFIXES[0]))
        .all(|line| line.iter().all(|&b| is_space(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    const RUN: &str = "20261129-231500-a1b2c3";

    fn pair() -> [Trailer; 2] {
        pair_trailers(RUN, "codex", 2).expect("valid trailers")
    }

    fn add(message: &str) -> String {
        String::from_utf8(add_trailers(
            message.as_bytes(),
            &pair(),
            &Options::default(),
        ))
        .expect("utf-8")
    }

    const TRAILERS: &str =
        "Pair-Run: 20261129-231500-a1b2c3\nReviewed-by: codex (git-pair round 2)\n";

    #[test]
    fn trailers_land_where_git_puts_them() {
        let t = TRAILERS;
        let cases: &[(&str, &str, String)] = &[
            (
                "subject only",
                "Fix the fetcher\n",
                format!("Fix the fetcher\n\n{t}"),
            ),
            (
                "no final newline",
                "Fix the fetcher",
                format!("Fix the fetcher\n\n{t}"),
            ),
            (
                "body, no trailers",
                "Fix\n\nRetry with backoff.\n",
                format!("Fix\n\nRetry with backoff.\n\n{t}"),
            ),
            (
                "existing block is appended to",
                "Fix\n\nBody.\n\nSigned-off-by: A <a@example.com>\n",
                format!("Fix\n\nBody.\n\nSigned-off-by: A <a@example.com>\n{t}"),
            ),
            (
                "a different Pair-Run is added, not replaced",
                "Fix\n\nPair-Run: 20260101-000000-ffffff\n",
                format!("Fix\n\nPair-Run: 20260101-000000-ffffff\n{t}"),
            ),
            (
                "an identical trailer is not added twice, case aside",
                "Fix\n\npair-run: 20261129-231500-A1B2C3\n",
                "Fix\n\npair-run: 20261129-231500-A1B2C3\nReviewed-by: codex (git-pair round 2)\n"
                    .to_owned(),
            ),
            (
                "the title is never the trailer block",
                "Fix: the fetcher\n",
                format!("Fix: the fetcher\n\n{t}"),
            ),
            (
                "a mixed paragraph without a git trailer is body",
                "Fix\n\nKey: value\nplain text\n",
                format!("Fix\n\nKey: value\nplain text\n\n{t}"),
            ),
            (
                "a mixed paragraph with a sign-off and a quarter trailers is the block",
                "Fix\n\nSigned-off-by: A <a@example.com>\nnote one\nnote two\nnote three\n",
                format!(
                    "Fix\n\nSigned-off-by: A <a@example.com>\nnote one\nnote two\nnote three\n{t}"
                ),
            ),
            (
                "continuation lines belong to their trailer",
                "Fix\n\nCo-authored-by: A\n  <a@example.com>\n",
                format!("Fix\n\nCo-authored-by: A\n  <a@example.com>\n{t}"),
            ),
            (
                "comments from the commit template stay after the trailers",
                "Fix\n\nBody.\n\n# Please enter the commit message for your changes.\n# On branch main\n",
                format!(
                    "Fix\n\nBody.\n\n{t}\n# Please enter the commit message for your changes.\n# On branch main\n"
                ),
            ),
            (
                "the scissors section stays last",
                "Fix\n\n# ------------------------ >8 ------------------------\n# Do not modify or remove the line above.\ndiff --git a/x b/x\nSigned-off-by: not-a-trailer\n",
                format!(
                    "Fix\n\n{t}\n# ------------------------ >8 ------------------------\n# Do not modify or remove the line above.\ndiff --git a/x b/x\nSigned-off-by: not-a-trailer\n"
                ),
            ),
            (
                "a --- line is message text in a commit",
                "Fix\n\n---\nnot a patch\n",
                format!("Fix\n\n---\nnot a patch\n\n{t}"),
            ),
            (
                "git normalises the block it rewrites",
                "Fix\n\nKey :value\n",
                format!("Fix\n\nKey: value\n{t}"),
            ),
        ];
        for (name, input, expected) in cases {
            assert_eq!(add(input), *expected, "{name}");
        }
    }

    #[test]
    fn adding_twice_changes_nothing() {
        for message in git_comparison_messages() {
            let once = add_trailers(message.as_bytes(), &pair(), &Options::default());
            let twice = add_trailers(&once, &pair(), &Options::default());
            assert_eq!(
                String::from_utf8_lossy(&twice),
                String::from_utf8_lossy(&once),
                "{message:?}"
            );
        }
    }

    #[test]
    fn nothing_to_add_leaves_the_message_byte_for_byte() {
        let message = format!("Fix\n\nKey:value\n{TRAILERS}# comment\n");
        assert_eq!(add(&message), message);
    }

    #[test]
    fn an_empty_message_stays_empty_so_git_still_aborts() {
        for message in [
            "",
            "\n",
            "\n# Please enter the commit message for your changes.\n",
            "Signed-off-by: A <a@example.com>\n",
            "\n# ------------------------ >8 ------------------------\ndiff --git a/x b/x\n",
        ] {
            assert_eq!(add(message), message, "{message:?}");
        }
    }

    #[test]
    fn another_comment_prefix_is_honoured() {
        let options = Options {
            comment_prefix: ";",
            divider: false,
        };
        let out = add_trailers(b"Fix\n\n; comment\n", &pair(), &options);
        assert_eq!(
            String::from_utf8_lossy(&out),
            format!("Fix\n\n{TRAILERS}\n; comment\n")
        );
    }

    #[test]
    fn trailer_values_are_validated() {
        assert_eq!(
            Trailer::new("Pair Run", "x"),
            Err(Error::BadToken {
                token: "Pair Run".into()
            })
        );
        assert!(Trailer::new("", "x").is_err());
        assert!(Trailer::new("Pair-Run", "a\nPair-Run: b").is_err());
        assert!(Trailer::new("Pair-Run", "  ").is_err());
        assert_eq!(
            Trailer::new("Pair-Run", " x ").expect("trimmed").value(),
            "x"
        );
        assert!(pair_trailers(RUN, "evil\nSigned-off-by: x", 1).is_err());
    }

    #[test]
    fn non_utf8_messages_keep_their_bytes() {
        let message = b"Fix caf\xe9\n\nBody \xff.\n";
        let out = add_trailers(message, &pair(), &Options::default());
        let mut expected = message.to_vec();
        expected.push(b'\n');
        expected.extend_from_slice(TRAILERS.as_bytes());
        assert_eq!(out, expected);
    }

    /// Messages that exercise each of git's rules.
    fn git_comparison_messages() -> Vec<String> {
        let cut = "# ------------------------ >8 ------------------------";
        vec![
            "Fix the fetcher".into(),
            "Fix the fetcher\n".into(),
            "Fix\n\nRetry with backoff.\nSecond line.\n".into(),
            "Fix\n\nBody.\n\nSigned-off-by: A <a@example.com>\n".into(),
            "Fix\n\nPair-Run: 20260101-000000-ffffff\nReviewed-by: claude (git-pair round 1)\n"
                .into(),
            format!("Fix\n\n{TRAILERS}"),
            "Fix\n\nPAIR-RUN: 20261129-231500-A1B2C3\n".into(),
            "Fix: the fetcher\n".into(),
            "Fix\n\nKey: value\nplain text\n".into(),
            "Fix\n\nSigned-off-by: A <a@example.com>\nnote one\nnote two\nnote three\n".into(),
            "Fix\n\nSigned-off-by: A\nnote 1\nnote 2\nnote 3\nnote 4\n".into(),
            "Fix\n\n(cherry picked from commit 0123456789abcdef)\nsome words\n".into(),
            "Fix\n\nCo-authored-by: A\n  <a@example.com>\n\tmore\n".into(),
            "Fix\n\nBody.\n\n# Please enter the commit message for your changes.\n# On branch main\n#\n"
                .into(),
            format!("Fix\n\nBody.\n{cut}\n# Do not modify or remove the line above.\ndiff --git a/x b/x\n"),
            format!("Fix\n\nA: b\n\n# comment\n{cut}\ndiff\n"),
            "Fix\n\n---\nnot a patch\n".into(),
            "Fix\n\nA: b\n# inside the block\nC: d\n".into(),
            "Fix\n\nKey :value\nOther:   spaced   \n".into(),
            "Fix\n\nBody.\n\nConflicts:\n\tsrc/a.rs\n\tsrc/b.rs\n".into(),
            "Fix\n\nA: b\n  \n\n".into(),
            "Fix\r\n\r\nBody\r\n".into(),
            "Fix\n\nReviewed: codex (git-pair round 2)\n".into(),
            "# only a comment first\nFix\n\nBody\n".into(),
            "Fix\n\nnot: a trailer because lowercase? no, it is\n".into(),
        ]
    }

    /// `git interpret-trailers` with no user or system configuration, outside any repository.
    fn git_interpret_trailers(message: &str, divider: bool) -> Option<String> {
        let scratch = tempfile::tempdir().expect("scratch");
        let mut args = vec!["interpret-trailers", "--if-exists", "addIfDifferent"];
        if !divider {
            args.push("--no-divider");
        }
        let trailer_args: Vec<String> = pair()
            .iter()
            .map(|t| format!("{}: {}", t.token(), t.value()))
            .collect();
        for t in &trailer_args {
            args.extend(["--trailer", t.as_str()]);
        }
        let mut child = Command::new("git")
            .args(&args)
            .current_dir(scratch.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CEILING_DIRECTORIES", scratch.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(message.as_bytes()).expect("write");
        }
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(String::from_utf8(out.stdout).expect("utf-8"))
    }

    #[test]
    fn placement_matches_git_interpret_trailers() {
        let mut compared = 0;
        for message in git_comparison_messages() {
            for divider in [false, true] {
                let Some(expected) = git_interpret_trailers(&message, divider) else {
                    eprintln!("git is not runnable here: skipping the comparison");
                    return;
                };
                let options = Options {
                    divider,
                    ..Options::default()
                };
                let ours = add_trailers(message.as_bytes(), &pair(), &options);
                let ours = String::from_utf8(ours).expect("utf-8");
                if ours == message && expected != message {
                    // Nothing to add: we leave the message alone where git rewrites it.
                    let again = add_trailers(expected.as_bytes(), &pair(), &options);
                    assert_eq!(again, expected.as_bytes(), "{message:?}");
                } else {
                    assert_eq!(ours, expected, "message {message:?}, divider {divider}");
                }
                compared += 1;
            }
        }
        assert!(compared >= 30);
    }
}
