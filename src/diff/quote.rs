//! Path quoting exactly as git prints paths in diff headers (`core.quotePath`, C-style).
//! Pure functions over bytes; knows nothing about repositories.

/// How a byte must be written inside a C-style quoted path.
enum Escape {
    /// Written as is.
    None,
    /// Written as a backslash and this letter (`\t`, `\"`, …).
    Letter(u8),
    /// Written as a backslash and three octal digits.
    Octal,
}

fn escape_of(byte: u8, quote_high_bytes: bool) -> Escape {
    match byte {
        0x07 => Escape::Letter(b'a'),
        0x08 => Escape::Letter(b'b'),
        b'\t' => Escape::Letter(b't'),
        b'\n' => Escape::Letter(b'n'),
        0x0b => Escape::Letter(b'v'),
        0x0c => Escape::Letter(b'f'),
        b'\r' => Escape::Letter(b'r'),
        b'"' => Escape::Letter(b'"'),
        b'\\' => Escape::Letter(b'\\'),
        0x00..=0x1f | 0x7f => Escape::Octal,
        0x80..=0xff if quote_high_bytes => Escape::Octal,
        _ => Escape::None,
    }
}

/// Returns true when git would print `path` between double quotes.
pub fn needs_quotes(path: &[u8], quote_high_bytes: bool) -> bool {
    path.iter()
        .any(|&b| !matches!(escape_of(b, quote_high_bytes), Escape::None))
}

/// Appends `prefix` + `path` to `out`, quoted as a whole when the path needs it, like git's
/// `quote_two()` (`"a/na\303\257ve"`). `quote_high_bytes` is `core.quotePath`.
pub fn push_quoted_with_prefix(
    out: &mut Vec<u8>,
    prefix: &[u8],
    path: &[u8],
    quote_high_bytes: bool,
) {
    if !needs_quotes(prefix, quote_high_bytes) && !needs_quotes(path, quote_high_bytes) {
        out.extend_from_slice(prefix);
        out.extend_from_slice(path);
        return;
    }
    out.push(b'"');
    push_escaped(out, prefix, quote_high_bytes);
    push_escaped(out, path, quote_high_bytes);
    out.push(b'"');
}

/// Appends `path` to `out`, quoted when needed, like git's `quote_c_style()`.
pub fn push_quoted(out: &mut Vec<u8>, path: &[u8], quote_high_bytes: bool) {
    push_quoted_with_prefix(out, b"", path, quote_high_bytes);
}

/// Returns `path` as git would print it in a rename line, as a `String` (quoted paths are ASCII).
pub fn quoted(path: &[u8], quote_high_bytes: bool) -> String {
    let mut out = Vec::with_capacity(path.len() + 2);
    push_quoted(&mut out, path, quote_high_bytes);
    String::from_utf8_lossy(&out).into_owned()
}

fn push_escaped(out: &mut Vec<u8>, bytes: &[u8], quote_high_bytes: bool) {
    for &b in bytes {
        match escape_of(b, quote_high_bytes) {
            Escape::None => out.push(b),
            Escape::Letter(letter) => out.extend_from_slice(&[b'\\', letter]),
            Escape::Octal => out.extend_from_slice(&[
                b'\\',
                b'0' + (b >> 6),
                b'0' + ((b >> 3) & 7),
                b'0' + (b & 7),
            ]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_matches_git_rules() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain/path.rs", "plain/path.rs"),
            (b"with space", "with space"),
            (b"tab\there", "\"tab\\there\""),
            (b"quote\"d", "\"quote\\\"d\""),
            (b"back\\slash", "\"back\\\\slash\""),
            ("naïve".as_bytes(), "\"na\\303\\257ve\""),
            (b"bell\x07\x01\x7f", "\"bell\\a\\001\\177\""),
            (b"nl\nvt\x0bff\x0ccr\r", "\"nl\\nvt\\vff\\fcr\\r\""),
        ];
        for (input, expected) in cases {
            assert_eq!(quoted(input, true), *expected, "{input:?}");
        }
    }

    #[test]
    fn quote_path_off_keeps_high_bytes() {
        let mut out = Vec::new();
        push_quoted(&mut out, "naïve".as_bytes(), false);
        assert_eq!(out, "naïve".as_bytes());
    }

    #[test]
    fn prefix_goes_inside_the_quotes() {
        let mut out = Vec::new();
        push_quoted_with_prefix(&mut out, b"a/", b"x\ty", true);
        assert_eq!(out, b"\"a/x\\ty\"");
        out.clear();
        push_quoted_with_prefix(&mut out, b"b/", b"x y", true);
        assert_eq!(out, b"b/x y");
    }
}
