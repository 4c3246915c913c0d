//! git's configuration value syntax — booleans and integers with `k`/`m`/`g` suffixes — read
//! by gix's own typed values (`gix::config::{Boolean, Integer}`), so that pure modules
//! (`config`) read a value exactly as `git config --type=bool|int` does without naming gix.
//! Values only: no repository, no files.

/// A git boolean written with a value (`true/yes/on`, `false/no/off`, empty, or a number,
/// non-zero being true), or `None` when it is not one. A key written without `=` is true;
/// that is the caller's case, as it has no value to parse.
pub fn boolean(value: &str) -> Option<bool> {
    gix::config::Boolean::try_from(value).ok().map(bool::from)
}

/// A git integer (`10`, `10k`, `2m`, `1g`) that fits a `u32`, or `None`.
pub fn integer_u32(value: &str) -> Option<u32> {
    gix::config::Integer::from_bytes::<u32>(value).ok()
}

/// The `-c key=value` overrides `git` hands its subcommands in `GIT_CONFIG_PARAMETERS`, as
/// gix's override strings (`key=value`, or `key` alone for an implicit true). git writes each
/// as shell single-quoted words separated by spaces: `'key'='value'`, `'key'` (no value), or
/// the older `'key=value'`; a `'` inside is written `'\''`. A malformed rest is ignored, as
/// git itself stops reading there.
pub fn config_parameters(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        let Some((key, after)) = quoted(rest) else {
            return out;
        };
        rest = after;
        match rest.strip_prefix('=') {
            Some(after) => {
                let Some((value, after)) = quoted(after) else {
                    return out;
                };
                out.push(format!("{key}={value}"));
                rest = after;
            }
            None => out.push(key),
        }
    }
}

/// One shell single-quoted word at the start of `text` (with `'\''` escapes), and the rest.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut rest = text.strip_prefix('\'')?;
    let mut word = String::new();
    loop {
        let end = rest.find('\'')?;
        word.push_str(&rest[..end]);
        rest = &rest[end + 1..];
        match rest.strip_prefix("\\''") {
            Some(after) => {
                word.push('\'');
                rest = after;
            }
            None => return Some((word, rest)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_parameters_read_as_git_writes_them() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("'pair.maxrounds'='3'", &["pair.maxrounds=3"]),
            (
                "'pair.maxrounds'='3' 'core.bare'",
                &["pair.maxrounds=3", "core.bare"],
            ),
            ("'user.name=old style'", &["user.name=old style"]),
            ("'pair.task'='it'\\''s'", &["pair.task=it's"]),
            ("'pair.empty'=''", &["pair.empty="]),
            ("'pair.a'='1' garbage 'pair.b'='2'", &["pair.a=1"]),
            ("'unterminated", &[]),
        ];
        for (text, expected) in cases {
            assert_eq!(config_parameters(text), *expected, "{text}");
        }
    }
}
