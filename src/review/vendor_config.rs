//! Names of the tables a vendor's own TOML config file defines under one key (`[mcp_servers.NAME]`),
//! found by a small line scan rather than a TOML parser: what an isolation group repeated per
//! name (`each` in the surfaces data) is expanded with. Only names the scan is sure of, and
//! that fit the realization's declared shape, come out: a vendor may refuse an override that
//! names a table it does not have.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::PathBuf;

use regex::Regex;

/// The config file is read only up to this many bytes (a longer one is scanned in part).
const MAX_BYTES: u64 = 1024 * 1024;

/// At most this many names are returned.
const MAX_NAMES: usize = 256;

/// The path a file template names: `${VAR:-fallback}` (or `${VAR}`) at its start takes the
/// variable's value from `env` (the fallback when it is unset or empty), and a leading `~/`
/// is `HOME`'s. `None` when the result is not an absolute path.
pub fn resolve(template: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let mut path = template.to_owned();
    if let Some(rest) = path.strip_prefix("${") {
        let close = rest.find('}')?;
        let (var, fallback) = match rest[..close].split_once(":-") {
            Some((var, fallback)) => (var, Some(fallback)),
            None => (&rest[..close], None),
        };
        let value = match env(var).filter(|v| !v.is_empty()) {
            Some(value) => value,
            None => fallback?.to_owned(),
        };
        path = format!("{value}{}", &rest[close + 1..]);
    }
    if let Some(rest) = path.strip_prefix("~/") {
        let home = env("HOME").filter(|h| !h.is_empty())?;
        path = format!("{}/{rest}", home.trim_end_matches('/'));
    }
    let path = PathBuf::from(path);
    path.is_absolute().then_some(path)
}

/// The names of the `[<table>.NAME]` tables of the TOML file at `path` (also `NAME.key = …`
/// and `NAME = {…}` inside `[<table>]`, and top-level `<table>.NAME.key = …`), each fitting
/// `shape`, in first-seen order. A missing or unreadable file has none.
pub fn table_names(path: &std::path::Path, table: &str, shape: &Regex) -> Vec<String> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut bytes = Vec::new();
    if file.take(MAX_BYTES).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    scan(&String::from_utf8_lossy(&bytes), table)
        .into_iter()
        .filter(|name| shape.is_match(name))
        .take(MAX_NAMES)
        .collect()
}

/// Every name the text defines under `table`, unvalidated.
fn scan(text: &str, table: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut seen = BTreeSet::new();
    let mut add = |name: String| {
        if seen.insert(name.clone()) {
            names.push(name);
        }
    };
    // The header of the table the current line belongs to (`None`: top level).
    let mut current: Option<Vec<String>> = None;
    // Inside a multi-line string: no line there is a header or a key.
    let mut in_multiline: Option<&str> = None;
    for line in text.lines() {
        if let Some(quote) = in_multiline {
            if line.matches(quote).count() % 2 == 1 {
                in_multiline = None;
            }
            continue;
        }
        let trimmed = line.trim();
        for quote in ["\"\"\"", "'''"] {
            if trimmed.matches(quote).count() % 2 == 1 {
                in_multiline = Some(quote);
            }
        }
        if trimmed.starts_with("[[") {
            // An array of tables: not ours to name, and it ends the current table.
            current = Some(Vec::new());
            continue;
        }
        if let Some(header) = trimmed.strip_prefix('[') {
            let keys = key_path(header);
            if let Some((keys, rest)) = keys
                && rest.trim_start().starts_with(']')
            {
                if keys.len() >= 2 && keys[0] == table {
                    add(keys[1].clone());
                }
                current = Some(keys);
            } else {
                current = Some(Vec::new());
            }
            continue;
        }
        let Some((keys, rest)) = key_path(trimmed) else {
            continue;
        };
        if !rest.trim_start().starts_with('=') {
            continue;
        }
        match current.as_deref() {
            // `NAME.key = …` or `NAME = {…}` inside `[<table>]`.
            Some([only]) if only == table => add(keys[0].clone()),
            // `<table>.NAME.key = …` at the top level.
            None if keys.len() >= 2 && keys[0] == table => add(keys[1].clone()),
            _ => {}
        }
    }
    names
}

/// A dotted TOML key at the start of `s` (bare, `"basic"` or `'literal'` parts, spaces around
/// the dots) and what follows it; `None` when `s` does not start with one.
fn key_path(s: &str) -> Option<(Vec<String>, &str)> {
    let mut keys = Vec::new();
    let mut rest = s.trim_start();
    loop {
        let (key, after) = simple_key(rest)?;
        keys.push(key);
        let after = after.trim_start();
        match after.strip_prefix('.') {
            Some(more) => rest = more.trim_start(),
            None => return Some((keys, after)),
        }
    }
}

/// One key part at the start of `s`. A basic string with an escape is refused (its name is
/// not what it looks like).
fn simple_key(s: &str) -> Option<(String, &str)> {
    for quote in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(quote) {
            let close = inner.find(quote)?;
            let key = &inner[..close];
            if quote == '"' && key.contains('\\') {
                return None;
            }
            return Some((key.to_owned(), &inner[close + 1..]));
        }
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(s.len());
    (end > 0).then(|| (s[..end].to_owned(), &s[end..]))
}

#[cfg(test)]
mod tests {
    use super::{resolve, scan};

    #[test]
    fn names_come_from_headers_sub_tables_and_dotted_keys_only() {
        let text = r#"
model = "x"
mcp_servers.top.command = "a"

[model_providers.mock]
name = "mock"
description = """
[mcp_servers.in_a_string]
"""

[mcp_servers.one]
command = "sh"
args = ["-c", "[mcp_servers.not_a_table]"]

[mcp_servers."two-b"]  # a comment
[mcp_servers . "two-b" . env]
X = "1"

[mcp_servers]
three.command = "c"
four = { command = "d" }

[[mcp_servers_list]]
name = "x"

[profiles.p.mcp_servers.profiled]
command = "e"

[mcp_servers.'lit']
"#;
        assert_eq!(
            scan(text, "mcp_servers"),
            ["top", "one", "two-b", "three", "four", "lit"]
        );
    }

    #[test]
    fn an_escaped_or_unterminated_name_is_not_a_name() {
        assert!(
            scan(
                "[mcp_servers.\"a\\u0041\"]\n[mcp_servers.\"open]\n",
                "mcp_servers"
            )
            .is_empty()
        );
    }

    #[test]
    fn file_templates_expand_the_variable_or_its_fallback_and_home() {
        let env = |k: &str| match k {
            "HOME" => Some("/home/u".to_owned()),
            "SET" => Some("/opt/codex".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let at = |t: &str| resolve(t, &env).map(|p| p.display().to_string());
        assert_eq!(
            at("${SET:-~/.codex}/config.toml").as_deref(),
            Some("/opt/codex/config.toml")
        );
        assert_eq!(
            at("${UNSET:-~/.codex}/config.toml").as_deref(),
            Some("/home/u/.codex/config.toml")
        );
        assert_eq!(
            at("${EMPTY:-~/.codex}/c").as_deref(),
            Some("/home/u/.codex/c")
        );
        assert_eq!(at("${UNSET}/c"), None, "unset, no fallback");
        assert_eq!(at("relative/c"), None);
        let no_home = |_: &str| None;
        assert_eq!(resolve("~/.codex/c", &no_home), None);
    }
}
