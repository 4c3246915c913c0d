//! The pattern table as data (`data/secrets.json`, or a `pair.secretsFile` override): its JSON
//! shape, its validation, and its compilation into rules, a keyword prefilter and an
//! allowlist. Knows nothing about lines, diffs or findings.

use std::sync::{Arc, OnceLock};

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::Deserialize;

use super::error::SecretsError;

/// The only version of the table format this build reads.
const VERSION: u32 = 1;
/// The longest keyword accepted.
const MAX_KEYWORD: usize = 64;
/// The most bytes past its line a multi-line rule may look at.
const MAX_WINDOW: usize = 1 << 20;
/// Compiled-regex size cap per rule: a runaway override fails to load instead of eating memory.
const REGEX_SIZE_LIMIT: usize = 16 << 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableDoc {
    v: u32,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    rules: Vec<RuleDoc>,
    #[serde(default)]
    allowlist: AllowlistDoc,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleDoc {
    id: String,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    keywords: Vec<String>,
    regex: String,
    #[serde(default)]
    secret_group: usize,
    #[serde(default)]
    context_group: Option<usize>,
    #[serde(default)]
    min_entropy: Option<f64>,
    #[serde(default = "yes")]
    placeholders: bool,
    #[serde(default)]
    stopwords: bool,
    #[serde(default)]
    skip_base64_text: bool,
    #[serde(default)]
    allow_values: Vec<String>,
    #[serde(default)]
    allow_context: Vec<String>,
    #[serde(default)]
    window_bytes: Option<usize>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct AllowlistDoc {
    #[serde(default)]
    marker: Option<String>,
    #[serde(default)]
    repeated_chars: bool,
    #[serde(default)]
    values: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
}

/// One compiled rule.
#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub id: String,
    /// Lowercase.
    pub keywords: Vec<String>,
    pub kind: String,
    pub regex: Lazy<Regex>,
    pub secret_group: usize,
    pub context_group: Option<usize>,
    pub min_entropy: Option<f64>,
    /// Whether the allowlist's placeholder `values` and `repeated_chars` apply.
    pub placeholders: bool,
    pub stopwords: bool,
    pub skip_base64_text: bool,
    pub allow_values: Lazy<Option<RegexSet>>,
    pub allow_context: Lazy<Option<RegexSet>>,
    /// Bytes past the start of the keyword's line the rule may see; `None`: the line only.
    pub window: Option<usize>,
}

/// The compiled allowlist.
#[derive(Debug, Clone)]
pub(super) struct Allowlist {
    pub marker: Option<Vec<u8>>,
    pub repeated_chars: bool,
    pub values: Lazy<Option<RegexSet>>,
    /// Lowercase.
    pub stopwords: Vec<Vec<u8>>,
    pub paths: Option<Regex>,
}

/// Finds rule keywords (in text lowered to ASCII lower case: any case matches), and says
/// which rules a found keyword wakes.
#[derive(Debug, Clone)]
pub(super) struct Keywords {
    pub regex: Regex,
    /// Every keyword with the rules it wakes: all rules having a keyword contained in it (a
    /// leftmost-first search reports `secret_access` where `secret` also occurs). Sorted by
    /// `(length, first 8 bytes)`, a lookup cheaper than hashing on this hot path.
    entries: Vec<KeywordEntry>,
}

#[derive(Debug, Clone)]
struct KeywordEntry {
    key: (usize, u64),
    /// Lowercase.
    keyword: Box<[u8]>,
    rules: Vec<usize>,
}

/// Length and the first 8 bytes, lowercased, as one integer.
fn lookup_key(bytes: &[u8]) -> (usize, u64) {
    let prefix = bytes
        .iter()
        .take(8)
        .fold(0u64, |k, &b| (k << 8) | u64::from(b.to_ascii_lowercase()));
    (bytes.len(), prefix)
}

impl Keywords {
    /// The rules woken by the keyword text `found` (any case).
    pub fn rules_of(&self, found: &[u8]) -> &[usize] {
        let key = lookup_key(found);
        let first = self.entries.partition_point(|e| e.key < key);
        self.entries[first..]
            .iter()
            .take_while(|e| e.key == key)
            .find(|e| e.keyword.eq_ignore_ascii_case(found))
            .map_or(&[], |e| e.rules.as_slice())
    }
}

/// When a table's rule patterns are compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum When {
    /// At load: a bad pattern is an error then (a `pair.secretsFile` override).
    Now,
    /// On first use: the shipped table, whose patterns a unit test compiles. A command that
    /// scans one short text wakes a rule or two, and compiling every rule up front cost more
    /// than the scan (about half of an 11 ms `coder-done`).
    OnFirstUse,
}

/// Patterns compiled on first use, or at once (see [`When`]); clones share the result.
#[derive(Clone)]
pub(super) struct Lazy<T> {
    patterns: Arc<[String]>,
    build: fn(&[String]) -> Result<T, regex::Error>,
    cell: Arc<OnceLock<T>>,
}

impl<T> Lazy<T> {
    fn new(
        patterns: Vec<String>,
        build: fn(&[String]) -> Result<T, regex::Error>,
        when: When,
    ) -> Result<Lazy<T>, regex::Error> {
        let lazy = Lazy {
            patterns: patterns.into(),
            build,
            cell: Arc::new(OnceLock::new()),
        };
        if when == When::Now {
            let built = build(&lazy.patterns)?;
            let _ = lazy.cell.set(built);
        }
        Ok(lazy)
    }

    /// The compiled patterns.
    pub fn get(&self) -> &T {
        self.cell.get_or_init(|| {
            (self.build)(&self.patterns)
                .expect("the shipped table's patterns compile (checked by a unit test)")
        })
    }
}

impl<T> std::fmt::Debug for Lazy<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lazy")
            .field("patterns", &self.patterns)
            .field("compiled", &self.cell.get().is_some())
            .finish()
    }
}

fn one_regex(patterns: &[String]) -> Result<Regex, regex::Error> {
    byte_regex(&patterns[0])
}

/// A validated, compiled table.
#[derive(Debug, Clone)]
pub(super) struct Table {
    pub rules: Vec<Rule>,
    pub keywords: Keywords,
    pub allow: Allowlist,
}

/// Parses and compiles a table; `origin` names it in errors.
pub(super) fn compile(text: &str, origin: &str, when: When) -> Result<Table, SecretsError> {
    let doc: TableDoc = serde_json::from_str(text).map_err(|source| SecretsError::Parse {
        origin: origin.to_owned(),
        source,
    })?;
    let invalid = |reason: String| SecretsError::Invalid {
        origin: origin.to_owned(),
        reason,
    };
    if doc.v != VERSION {
        return Err(invalid(format!("\"v\" must be {VERSION}, got {}", doc.v)));
    }
    if doc.rules.is_empty() {
        return Err(invalid("\"rules\" is empty".to_owned()));
    }
    let mut rules = Vec::with_capacity(doc.rules.len());
    for rule in doc.rules {
        if rules.iter().any(|r: &Rule| r.id == rule.id) {
            return Err(invalid(format!("rule {:?} appears twice", rule.id)));
        }
        rules.push(compile_rule(rule, when).map_err(invalid)?);
    }
    let keywords = compile_keywords(&rules).map_err(invalid)?;
    let allow = compile_allowlist(doc.allowlist, when).map_err(invalid)?;
    Ok(Table {
        rules,
        keywords,
        allow,
    })
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn byte_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
}

/// `None` for no patterns.
fn byte_regex_set(patterns: &[String]) -> Result<Option<RegexSet>, regex::Error> {
    if patterns.is_empty() {
        return Ok(None);
    }
    RegexSetBuilder::new(patterns)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map(Some)
}

fn compile_rule(doc: RuleDoc, when: When) -> Result<Rule, String> {
    let id = doc.id;
    if !is_name(&id) {
        return Err(format!(
            "rule id {id:?} must be lowercase letters, digits and '-'"
        ));
    }
    let kind = doc.kind.unwrap_or_else(|| id.clone());
    if !is_name(&kind) {
        return Err(format!(
            "rule {id:?}: kind {kind:?} must be lowercase letters, digits and '-'"
        ));
    }
    if doc.keywords.is_empty() {
        return Err(format!(
            "rule {id:?}: \"keywords\" is empty (a rule runs only where a keyword occurs)"
        ));
    }
    for k in &doc.keywords {
        if k.is_empty() || k.len() > MAX_KEYWORD || k.bytes().any(|b| b == b'\n' || b >= 0x80) {
            return Err(format!(
                "rule {id:?}: keyword {k:?} must be 1 to {MAX_KEYWORD} ASCII bytes without a newline"
            ));
        }
    }
    let regex = Lazy::new(vec![doc.regex], one_regex, when)
        .map_err(|e| format!("rule {id:?}: regex: {e}"))?;
    if when == When::Now {
        let groups = regex.get().captures_len();
        if doc.secret_group >= groups {
            return Err(format!(
                "rule {id:?}: secret_group {} but the regex has {} group(s)",
                doc.secret_group,
                groups - 1
            ));
        }
        if let Some(k) = doc.context_group
            && (k == 0 || k >= groups)
        {
            return Err(format!(
                "rule {id:?}: context_group {k} is not a group of the regex (1..{})",
                groups - 1
            ));
        }
    }
    if !doc.allow_context.is_empty() && doc.context_group.is_none() {
        return Err(format!("rule {id:?}: allow_context needs context_group"));
    }
    if let Some(e) = doc.min_entropy
        && !(e.is_finite() && (0.0..=8.0).contains(&e))
    {
        return Err(format!(
            "rule {id:?}: min_entropy must be between 0 and 8 bits, got {e}"
        ));
    }
    if let Some(w) = doc.window_bytes
        && !(1..=MAX_WINDOW).contains(&w)
    {
        return Err(format!(
            "rule {id:?}: window_bytes must be 1 to {MAX_WINDOW}, got {w}"
        ));
    }
    let allow_values = Lazy::new(doc.allow_values, byte_regex_set, when)
        .map_err(|e| format!("rule {id:?}: allow_values: {e}"))?;
    let allow_context = Lazy::new(doc.allow_context, byte_regex_set, when)
        .map_err(|e| format!("rule {id:?}: allow_context: {e}"))?;
    Ok(Rule {
        keywords: doc
            .keywords
            .iter()
            .map(|k| k.to_ascii_lowercase())
            .collect(),
        id,
        kind,
        regex,
        secret_group: doc.secret_group,
        context_group: doc.context_group,
        min_entropy: doc.min_entropy,
        placeholders: doc.placeholders,
        stopwords: doc.stopwords,
        skip_base64_text: doc.skip_base64_text,
        allow_values,
        allow_context,
        window: doc.window_bytes,
    })
}

fn compile_keywords(rules: &[Rule]) -> Result<Keywords, String> {
    let mut all: Vec<&str> = rules
        .iter()
        .flat_map(|r| r.keywords.iter().map(String::as_str))
        .collect();
    all.sort_unstable();
    all.dedup();
    let mut entries = Vec::with_capacity(all.len());
    for &found in &all {
        let woken: Vec<usize> = rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.keywords.iter().any(|k| found.contains(k.as_str())))
            .map(|(i, _)| i)
            .collect();
        entries.push(KeywordEntry {
            key: lookup_key(found.as_bytes()),
            keyword: found.as_bytes().into(),
            rules: woken,
        });
    }
    entries.sort_by_key(|e| e.key);
    // Longest first, so that of two keywords starting at the same byte the longer is reported
    // (its entry wakes the shorter one's rules too). The search runs on the text lowered to
    // ASCII lower case, with lower-case keywords: a case-sensitive alternation of literals
    // gets a SIMD prefilter, a case-insensitive one does not (10x slower on code).
    let mut lowered: Vec<String> = all.iter().map(|k| k.to_ascii_lowercase()).collect();
    lowered.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    lowered.dedup();
    let alternation = lowered
        .iter()
        .map(|k| regex::escape(k))
        .collect::<Vec<_>>()
        .join("|");
    let regex = RegexBuilder::new(&alternation)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| format!("keywords: {e}"))?;
    Ok(Keywords { regex, entries })
}

fn compile_allowlist(doc: AllowlistDoc, when: When) -> Result<Allowlist, String> {
    let marker = match doc.marker {
        Some(m) if m.trim().is_empty() => {
            return Err("allowlist.marker is empty".to_owned());
        }
        Some(m) => Some(m.into_bytes()),
        None => None,
    };
    let values = Lazy::new(doc.values, byte_regex_set, when)
        .map_err(|e| format!("allowlist.values: {e}"))?;
    let mut stopwords = Vec::with_capacity(doc.stopwords.len());
    for w in doc.stopwords {
        if w.is_empty() {
            return Err("allowlist.stopwords holds an empty word".to_owned());
        }
        stopwords.push(w.to_ascii_lowercase().into_bytes());
    }
    let mut globs = Vec::with_capacity(doc.paths.len());
    for p in &doc.paths {
        globs.push(glob_to_regex(p).ok_or_else(|| format!("allowlist.paths: bad glob {p:?}"))?);
    }
    let paths = if globs.is_empty() {
        None
    } else {
        Some(
            RegexBuilder::new(&globs.join("|"))
                .unicode(false)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .map_err(|e| format!("allowlist.paths: {e}"))?,
        )
    };
    Ok(Allowlist {
        marker,
        repeated_chars: doc.repeated_chars,
        values,
        stopwords,
        paths,
    })
}

/// Translates one gitignore-style glob into a regex over a `/`-separated repository path:
/// `*` and `?` stay within a component, `**` spans components, a glob without `/` matches a
/// file or directory name at any depth, one with `/` is anchored at the root.
fn glob_to_regex(glob: &str) -> Option<String> {
    let glob = glob.trim();
    let body = glob.strip_prefix('/').unwrap_or(glob);
    let body = body.strip_suffix('/').unwrap_or(body);
    if body.is_empty() {
        return None;
    }
    let anchored = glob.trim_end_matches('/').contains('/');
    let mut out = String::from(if anchored { "(?:^" } else { "(?:(?:^|/)" });
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'*' if bytes.get(i + 1) == Some(&b'*') => {
                let after_slash = bytes.get(i + 2) == Some(&b'/');
                out.push_str(if after_slash { "(?:.*/)?" } else { ".*" });
                i += if after_slash { 3 } else { 2 };
                continue;
            }
            b'*' => out.push_str("[^/]*"),
            b'?' => out.push_str("[^/]"),
            b'[' => {
                let close = bytes[i + 1..].iter().position(|&b| b == b']')? + i + 1;
                let mut class = String::from("[");
                let inner = &body[i + 1..close];
                let inner = inner
                    .strip_prefix('!')
                    .map_or_else(|| inner.to_owned(), |rest| format!("^{rest}"));
                class.push_str(&inner.replace('\\', "\\\\").replace('[', "\\["));
                class.push(']');
                out.push_str(&class);
                i = close + 1;
                continue;
            }
            _ => {
                let ch = body[i..].chars().next()?;
                out.push_str(&regex::escape(ch.encode_utf8(&mut [0; 4])));
                i += ch.len_utf8();
                continue;
            }
        }
        i += 1;
    }
    out.push_str("(?:$|/))");
    Some(out)
}
