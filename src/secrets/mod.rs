//! The one secret scanner (SPEC §14): finds credentials in text or in a unified diff, names
//! them by kind, path and line, and redacts them. Pure: bytes in, findings out; it reads no
//! repository and no file except a pattern table it is asked to load. Patterns are data
//! (`data/secrets.json`, replaceable through `pair.secretsFile`).
//!
//! How a scan runs: one case-insensitive search for every rule keyword; a rule's regex runs
//! only on a line holding one of its keywords (a multi-line rule, such as a PEM key, also on a
//! window after it); a match is then dropped when the allowlist says it is a placeholder, a
//! stop-word, a look-alike, too low in entropy, or on a line carrying the allow marker.
//! Overlapping matches merge into one finding named by the rule listed first in the table.
//!
//! In a diff the whole text is scanned (so redaction covers headers and binary metadata too),
//! then each match is placed: a `+` or context line names the new path and new line number, a
//! `-` line (a secret being removed, which the diff still carries) the old path and old line,
//! and a line outside any hunk the file's path and the line of the diff text. Sections of
//! paths the allowlist skips (lock files, images, vendored code) are neither reported nor
//! redacted, as in [`Scanner::scan`].
//!
//! A [`Finding`] never holds the secret: only kind, rule, path, line and the byte range, and
//! its `Debug`, `Display` and `Serialize` show none of the matched bytes.

mod diff;
mod error;
mod location;
mod table;
#[cfg(test)]
mod tests;

use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use regex::bytes::CaptureLocations;
use serde::Serialize;

pub use error::SecretsError;
use location::LineCounter;
pub use location::Origin;
use table::{Rule, Table};

/// The shipped pattern table.
pub const BUILTIN_TABLE: &str = include_str!("../../data/secrets.json");

/// Where whole objects are scanned (what `push` would publish, files left out of a review
/// packet), larger blobs are skipped: 8 MiB of text is far beyond any hand-written file that
/// holds a credential, and it keeps a scan's cost bounded.
pub const MAX_SCANNED_BLOB: u64 = 8 * 1024 * 1024;

/// Whether `bytes` are binary as git decides (a NUL in the first 8,000 bytes): not scanned.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8000)].contains(&0)
}

/// One secret found: what kind, where. Never the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The kind (`aws-access-key-id`, `generic-secret`, …), as in `[REDACTED:<kind>]`.
    pub kind: String,
    /// The id of the table rule that matched.
    pub rule: String,
    /// Repository path of the file (for a diff: see [`Origin`]).
    pub path: String,
    /// 1-based line (for a diff: see [`Origin`]).
    pub line: usize,
    /// What kind of line `line` is.
    pub origin: Origin,
    /// Byte range of the secret in the scanned text, for callers that redact themselves.
    #[serde(skip)]
    pub range: Range<usize>,
}

impl Finding {
    /// A short, stable description: `aws-access-key-id in .env:3`.
    pub fn describe(&self) -> String {
        match self.origin {
            Origin::Text | Origin::Added | Origin::Context => {
                format!("{} in {}:{}", self.kind, self.path, self.line)
            }
            Origin::Removed => format!(
                "{} in {}:{} (removed line)",
                self.kind, self.path, self.line
            ),
            Origin::Header => format!(
                "{} in {} (diff line {})",
                self.kind,
                self.display_path(),
                self.line
            ),
        }
    }

    fn display_path(&self) -> &str {
        if self.path.is_empty() {
            "diff"
        } else {
            &self.path
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A diff with its secrets replaced ([`Scanner::redact_diff_mapped`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactedDiff {
    /// The redacted text.
    pub text: Vec<u8>,
    /// What was replaced (ranges are in the original text).
    pub findings: Vec<Finding>,
    /// Each replaced range of the original text and the length of what replaced it, in order.
    edits: Vec<(Range<usize>, usize)>,
}

impl RedactedDiff {
    /// Where byte `offset` of the original text is in the redacted one. An offset inside a
    /// replaced secret maps to the end of its marker.
    pub fn map_offset(&self, offset: usize) -> usize {
        let mut moved = offset;
        let mut shift: isize = 0;
        for (old, new_len) in &self.edits {
            if offset <= old.start {
                break;
            }
            let new_start = old.start.saturating_add_signed(shift);
            if offset < old.end {
                return new_start + new_len;
            }
            shift += *new_len as isize - old.len() as isize;
            moved = offset.saturating_add_signed(shift);
        }
        moved
    }
}

/// The text that replaces a secret of `kind`.
pub fn redaction_marker(kind: &str) -> String {
    format!("[REDACTED:{kind}]")
}

/// A compiled pattern table, ready to scan. Cheap to clone (regexes are shared).
#[derive(Clone)]
pub struct Scanner {
    source: Source,
}

/// Where a scanner's table is: the shipped one is compiled on first use, once per process
/// (possibly ahead of time on another thread, [`Scanner::warm_up`]).
#[derive(Clone)]
enum Source {
    Builtin,
    Loaded(Table),
}

/// The shipped table, compiled once per process.
fn builtin_table() -> &'static Table {
    static BUILTIN: OnceLock<Table> = OnceLock::new();
    BUILTIN.get_or_init(|| {
        table::compile(
            BUILTIN_TABLE,
            "data/secrets.json (built in)",
            table::When::OnFirstUse,
        )
        .expect("the shipped secrets.json is valid (checked by a unit test)")
    })
}

impl fmt::Debug for Scanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Scanner");
        match &self.source {
            Source::Builtin => d.field("table", &"built in"),
            Source::Loaded(table) => d.field("rules", &table.rules.len()),
        };
        d.finish_non_exhaustive()
    }
}

/// A match before it becomes a finding: rule index and the secret's byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    rule: usize,
    range: Range<usize>,
}

impl Scanner {
    /// The shipped table (compiled once per process, on first use).
    pub fn builtin() -> Scanner {
        Scanner {
            source: Source::Builtin,
        }
    }

    /// Starts compiling the shipped table on another thread, so that a command can do other
    /// work (snapshot, diff) meanwhile; the first scan waits for it. A loaded table is
    /// compiled already: nothing to do.
    pub fn warm_up(&self) {
        if matches!(self.source, Source::Builtin) {
            std::thread::spawn(|| {
                builtin_table();
            });
        }
    }

    fn table(&self) -> &Table {
        match &self.source {
            Source::Builtin => builtin_table(),
            Source::Loaded(table) => table,
        }
    }

    /// A scanner from a table in the `data/secrets.json` format.
    pub fn from_json(text: &str) -> Result<Scanner, SecretsError> {
        Scanner::compile(text, "(inline JSON)")
    }

    /// The table at `path` (`pair.secretsFile`), replacing the shipped one; `None`: the shipped
    /// table. Errors name the file and what is wrong with it.
    pub fn load(path: Option<&Path>) -> Result<Scanner, SecretsError> {
        let Some(path) = path else {
            return Ok(Scanner::builtin());
        };
        let text = std::fs::read_to_string(path).map_err(|source| SecretsError::Read {
            path: path.to_owned(),
            source,
        })?;
        Scanner::compile(&text, &path.display().to_string())
    }

    fn compile(text: &str, origin: &str) -> Result<Scanner, SecretsError> {
        Ok(Scanner {
            source: Source::Loaded(table::compile(text, origin, table::When::Now)?),
        })
    }

    /// The kinds this table reports, in table order, each once.
    pub fn kinds(&self) -> Vec<&str> {
        let mut kinds: Vec<&str> = Vec::new();
        for rule in &self.table().rules {
            if !kinds.contains(&rule.kind.as_str()) {
                kinds.push(&rule.kind);
            }
        }
        kinds
    }

    /// Whether the allowlist skips `path` (lock files, images, vendored code) entirely.
    pub fn skips_path(&self, path: &str) -> bool {
        let path = path.strip_prefix("./").unwrap_or(path);
        self.table()
            .allow
            .paths
            .as_ref()
            .is_some_and(|re| re.is_match(path.as_bytes()))
    }

    /// The secrets in `text`, the content of the file at `path` (any bytes; never panics).
    pub fn scan(&self, path: &str, text: &[u8]) -> Vec<Finding> {
        if self.skips_path(path) {
            return Vec::new();
        }
        let candidates = self.candidates(text);
        let mut line = LineCounter::default();
        candidates
            .into_iter()
            .map(|c| {
                self.finding(
                    &c,
                    path.to_owned(),
                    line.line_of(text, c.range.start),
                    Origin::Text,
                )
            })
            .collect()
    }

    /// `text` with each secret replaced by `[REDACTED:<kind>]` (a multi-line secret keeps its
    /// line breaks, so line numbers stay right), and the findings. A path the allowlist skips
    /// comes back unchanged.
    pub fn redact(&self, path: &str, text: &str) -> (String, Vec<Finding>) {
        let mut findings = self.scan(path, text.as_bytes());
        snap_to_chars(text, &mut findings);
        let out = replace(text.as_bytes(), &findings, false, None);
        (
            String::from_utf8(out).expect("whole characters were replaced by ASCII"),
            findings,
        )
    }

    /// The secrets in a unified diff as `git diff` prints it. See [`Origin`] for what path
    /// and line each finding names. Files whose path the allowlist skips are not scanned.
    pub fn scan_diff(&self, diff: &[u8]) -> Vec<Finding> {
        let candidates = self.candidates(diff);
        if candidates.is_empty() {
            return Vec::new();
        }
        let offsets: Vec<usize> = candidates.iter().map(|c| c.range.start).collect();
        let located = diff::locate(diff, &offsets, &|path| self.skips_path(path));
        candidates
            .iter()
            .zip(located)
            .filter_map(|(c, at)| {
                let (path, line, origin) = at?;
                Some(self.finding(c, path, line, origin))
            })
            .collect()
    }

    /// `diff` with every secret found anywhere in it (hunks, headers, binary metadata)
    /// replaced by `[REDACTED:<kind>]`, keeping each line's `+`/`-`/space marker; and the
    /// findings.
    pub fn redact_diff(&self, diff: &str) -> (String, Vec<Finding>) {
        let mut findings = self.scan_diff(diff.as_bytes());
        snap_to_chars(diff, &mut findings);
        let out = replace(diff.as_bytes(), &findings, true, None);
        (
            String::from_utf8(out).expect("whole characters were replaced by ASCII"),
            findings,
        )
    }

    /// [`Scanner::redact_diff`] for a diff that may not be UTF-8.
    pub fn redact_diff_bytes(&self, diff: &[u8]) -> (Vec<u8>, Vec<Finding>) {
        let findings = self.scan_diff(diff);
        (replace(diff, &findings, true, None), findings)
    }

    /// [`Scanner::redact_diff_bytes`], also saying where each byte of `diff` went, so that a
    /// caller holding offsets into the diff (hunk positions) can move them; `None` when there
    /// is nothing to redact (no copy is made). A UTF-8 diff stays UTF-8 (whole characters are
    /// replaced).
    pub fn redact_diff_mapped(&self, diff: &[u8]) -> Option<RedactedDiff> {
        let mut findings = self.scan_diff(diff);
        if findings.is_empty() {
            return None;
        }
        if let Ok(text) = std::str::from_utf8(diff) {
            snap_to_chars(text, &mut findings);
        }
        let mut edits = Vec::new();
        let text = replace(diff, &findings, true, Some(&mut edits));
        Some(RedactedDiff {
            text,
            findings,
            edits,
        })
    }

    /// `text` (the content of the file at `path`, any bytes) with each secret replaced by
    /// `[REDACTED:<kind>]`, and the findings. UTF-8 text stays UTF-8.
    pub fn redact_bytes(&self, path: &str, text: &[u8]) -> (Vec<u8>, Vec<Finding>) {
        let mut findings = self.scan(path, text);
        if findings.is_empty() {
            return (text.to_vec(), findings);
        }
        if let Ok(text) = std::str::from_utf8(text) {
            snap_to_chars(text, &mut findings);
        }
        (replace(text, &findings, false, None), findings)
    }

    /// Redacts every string inside a JSON value in place (keys are left alone: they are
    /// names, not data); returns the findings, each named by `path`.
    pub fn redact_json(&self, path: &str, value: &mut serde_json::Value) -> Vec<Finding> {
        let mut found = Vec::new();
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                serde_json::Value::String(text) => {
                    let (redacted, findings) = self.redact(path, text);
                    if !findings.is_empty() {
                        *text = redacted;
                        found.extend(findings);
                    }
                }
                serde_json::Value::Array(items) => stack.extend(items.iter_mut()),
                serde_json::Value::Object(map) => stack.extend(map.values_mut()),
                _ => {}
            }
        }
        found
    }

    fn finding(&self, c: &Candidate, path: String, line: usize, origin: Origin) -> Finding {
        let rule = &self.table().rules[c.rule];
        Finding {
            kind: rule.kind.clone(),
            rule: rule.id.clone(),
            path,
            line,
            origin,
            range: c.range.clone(),
        }
    }

    /// Every accepted match in `text`, sorted by start, overlaps merged.
    fn candidates(&self, text: &[u8]) -> Vec<Candidate> {
        let rules = &self.table().rules;
        let keywords = &self.table().keywords;
        let mut found: Vec<Candidate> = Vec::new();
        // Per rule: the start of the last line it was woken on, to wake it once per line.
        let mut woken_at = vec![usize::MAX; rules.len()];
        let mut active: Vec<usize> = Vec::new();
        let mut locations: Vec<Option<CaptureLocations>> = vec![None; rules.len()];
        // The line the keywords found so far sit on; its rules run once its last keyword is in.
        let mut line: Option<Range<usize>> = None;
        let mut searched_to = 0;
        // Offsets in the lowered copy are offsets in `text` (ASCII case only changes).
        let lowered = text.to_ascii_lowercase();
        for hit in keywords.regex.find_iter(&lowered) {
            match &line {
                // Keywords hold no newline: a hit starting before the line's end is on it.
                Some(current) if hit.start() < current.end => {}
                _ => {
                    if let Some(done) = line.take() {
                        self.run_rules(text, done, &mut active, &mut locations, &mut found);
                    }
                    let start = text[searched_to..hit.start()]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(searched_to, |i| searched_to + i + 1);
                    let end = text[hit.end()..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(text.len(), |i| hit.end() + i);
                    searched_to = end;
                    line = Some(start..end);
                }
            }
            let line_start = line.as_ref().map_or(0, |l| l.start);
            for &r in keywords.rules_of(hit.as_bytes()) {
                if woken_at[r] != line_start {
                    woken_at[r] = line_start;
                    active.push(r);
                }
            }
        }
        if let Some(done) = line {
            self.run_rules(text, done, &mut active, &mut locations, &mut found);
        }
        merge(found)
    }

    /// Runs the rules woken on `line`, then forgets them.
    fn run_rules(
        &self,
        text: &[u8],
        line: Range<usize>,
        active: &mut Vec<usize>,
        locations: &mut [Option<CaptureLocations>],
        found: &mut Vec<Candidate>,
    ) {
        for &r in active.iter() {
            let rule = &self.table().rules[r];
            let locs = locations[r].get_or_insert_with(|| rule.regex.get().capture_locations());
            self.run_rule(r, rule, text, line.clone(), locs, found);
        }
        active.clear();
    }

    /// Runs one rule on the line `line` (and its window), pushing accepted matches that start
    /// on that line.
    fn run_rule(
        &self,
        index: usize,
        rule: &Rule,
        text: &[u8],
        line: Range<usize>,
        locs: &mut CaptureLocations,
        found: &mut Vec<Candidate>,
    ) {
        let region_end = match rule.window {
            Some(w) => text.len().min(line.start.saturating_add(w)).max(line.end),
            None => line.end,
        };
        let region = &text[line.start..region_end];
        let line_len = line.end - line.start;
        let mut at = 0;
        while at <= line_len {
            if rule
                .regex
                .get()
                .captures_read_at(locs, region, at)
                .is_none()
            {
                break;
            }
            let Some((m_start, m_end)) = locs.get(0) else {
                break;
            };
            if m_start > line_len {
                break;
            }
            if let Some((s, e)) = locs.get(rule.secret_group)
                && s < e
            {
                let key = rule
                    .context_group
                    .and_then(|g| locs.get(g))
                    .map(|(ks, ke)| &region[ks..ke]);
                let line_bytes = &text[line.clone()];
                if self.accept(rule, &region[s..e], key, line_bytes) {
                    found.push(Candidate {
                        rule: index,
                        range: line.start + s..line.start + e,
                    });
                }
            }
            at = if m_end > m_start { m_end } else { m_end + 1 };
        }
    }

    /// Whether a match is kept: the allowlist, the rule's filters and its entropy floor.
    fn accept(&self, rule: &Rule, secret: &[u8], key: Option<&[u8]>, line: &[u8]) -> bool {
        let allow = &self.table().allow;
        let repeated = allow.repeated_chars && secret.iter().all(|&b| b == secret[0]);
        let placeholder = || {
            allow
                .values
                .get()
                .as_ref()
                .is_some_and(|set| set.is_match(secret))
        };
        if rule.placeholders && (repeated || placeholder()) {
            return false;
        }
        if rule
            .allow_values
            .get()
            .as_ref()
            .is_some_and(|set| set.is_match(secret))
        {
            return false;
        }
        if let (Some(keys), Some(key)) = (rule.allow_context.get(), key)
            && keys.is_match(key)
        {
            return false;
        }
        if rule.stopwords && allow.stopwords.iter().any(|w| starts_a_word(secret, w)) {
            return false;
        }
        if let Some(min) = rule.min_entropy
            && shannon_entropy(secret) <= min
        {
            return false;
        }
        if rule.skip_base64_text && is_base64_of_text(secret) {
            return false;
        }
        if let Some(marker) = &allow.marker
            && contains(line, marker)
        {
            return false;
        }
        true
    }
}

/// Sorts matches by start and merges overlapping ones: the union of their ranges, named by
/// the rule listed first.
fn merge(mut found: Vec<Candidate>) -> Vec<Candidate> {
    found.sort_unstable_by_key(|c| (c.range.start, c.rule));
    let mut out: Vec<Candidate> = Vec::with_capacity(found.len());
    for c in found {
        match out.last_mut() {
            Some(last) if c.range.start < last.range.end => {
                last.range.end = last.range.end.max(c.range.end);
                last.rule = last.rule.min(c.rule);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Widens each finding's range to whole UTF-8 characters of `text`.
fn snap_to_chars(text: &str, findings: &mut [Finding]) {
    for f in findings {
        let mut start = f.range.start.min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = f.range.end.min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        f.range = start..end;
    }
}

/// `text` with each finding's range replaced by its marker. Line breaks inside a range are
/// kept (and, in a diff, the `+`/`-`/space that starts the next line), so the text keeps
/// its line count. `edits`, when given, receives each replaced range and its new length.
fn replace(
    text: &[u8],
    findings: &[Finding],
    diff: bool,
    mut edits: Option<&mut Vec<(Range<usize>, usize)>>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut copied = 0;
    for f in findings {
        let range = f.range.start.max(copied)..f.range.end.min(text.len());
        if range.start >= range.end {
            continue;
        }
        out.extend_from_slice(&text[copied..range.start]);
        let replaced_at = out.len();
        out.extend_from_slice(redaction_marker(&f.kind).as_bytes());
        let secret = &text[range.clone()];
        for (i, &b) in secret.iter().enumerate() {
            if b == b'\n' {
                out.push(b'\n');
                if diff && let Some(&next @ (b'+' | b'-' | b' ')) = secret.get(i + 1) {
                    out.push(next);
                }
            }
        }
        if let Some(edits) = edits.as_deref_mut() {
            edits.push((range.clone(), out.len() - replaced_at));
        }
        copied = range.end;
    }
    out.extend_from_slice(&text[copied..]);
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Whether `word` (lowercase) occurs in `text`, any case, at its start or after a byte that
/// is not a letter: `fake-key`, `key_for_tests`, `YOUR_TOKEN` — but not inside a random
/// run of letters, where a long token would hold a short word by chance.
fn starts_a_word(text: &[u8], word: &[u8]) -> bool {
    !word.is_empty()
        && text.windows(word.len()).enumerate().any(|(i, w)| {
            (i == 0 || !text[i - 1].is_ascii_alphabetic())
                && w.iter()
                    .zip(word)
                    .all(|(a, b)| a.to_ascii_lowercase() == *b)
        })
}

/// Shannon entropy of `bytes` in bits per byte.
fn shannon_entropy(bytes: &[u8]) -> f64 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[usize::from(b)] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether `value` is base64 (standard or URL alphabet) of ordinary prose: printable ASCII
/// with spaces, mostly letters. Real credentials encode random bytes, or `user:password`.
fn is_base64_of_text(value: &[u8]) -> bool {
    let body = value
        .strip_suffix(b"==")
        .or_else(|| value.strip_suffix(b"="))
        .unwrap_or(value);
    if body.len() < 16 || body.len() % 4 == 1 {
        return false;
    }
    let mut decoded = Vec::with_capacity(body.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &b in body {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return false,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            decoded.push((acc >> bits) as u8);
        }
    }
    let printable = decoded
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) || matches!(b, b'\n' | b'\r' | b'\t'));
    let spaces = decoded.iter().filter(|&&b| b == b' ').count();
    let letters = decoded.iter().filter(|b| b.is_ascii_alphabetic()).count();
    printable && spaces > 0 && (letters + spaces) * 10 >= decoded.len() * 8
}
