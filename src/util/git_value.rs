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
