//! gitignore-style path patterns: `*`, `?`, `[...]` stay within one path component, `**`
//! spans directories, a pattern without a `/` matches a file or directory name at any depth,
//! a pattern with a `/` is anchored at the repository root, a trailing `/` only matches
//! directories. A path matches when it, or any directory containing it, matches.
//! Pure: bytes in, booleans out.

/// A parsed pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    body: Vec<u8>,
    /// Matches only directories (written with a trailing `/`).
    directory_only: bool,
    /// Has no `/` other than a trailing one: matched against names, at any depth.
    name_only: bool,
}

impl Pattern {
    /// Parses `text`; returns `None` for an empty pattern (which matches nothing).
    pub fn new(text: &str) -> Option<Pattern> {
        let mut body = text.trim().as_bytes();
        let directory_only = body.ends_with(b"/");
        if directory_only {
            body = &body[..body.len() - 1];
        }
        let name_only = !body.contains(&b'/');
        if let Some(anchored) = body.strip_prefix(b"/") {
            body = anchored;
        }
        if body.is_empty() {
            return None;
        }
        Some(Pattern {
            text: text.to_owned(),
            body: body.to_vec(),
            directory_only,
            name_only,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `path` (repository-relative, `/`-separated) or one of its parent directories
    /// matches.
    pub fn matches(&self, path: &[u8]) -> bool {
        let mut end = path.len();
        let mut is_dir = false;
        loop {
            let candidate = &path[..end];
            if (is_dir || !self.directory_only) && self.matches_one(candidate) {
                return true;
            }
            match candidate.iter().rposition(|&b| b == b'/') {
                Some(slash) => {
                    end = slash;
                    is_dir = true;
                }
                None => return false,
            }
        }
    }

    fn matches_one(&self, path: &[u8]) -> bool {
        if self.name_only {
            let name = match path.iter().rposition(|&b| b == b'/') {
                Some(slash) => &path[slash + 1..],
                None => path,
            };
            wildmatch(&self.body, name)
        } else {
            wildmatch(&self.body, path)
        }
    }
}

/// git's `wildmatch` with `WM_PATHNAME`: `*`/`?`/classes do not match `/`; `**` between
/// slashes (or at either end) matches any number of directories.
fn wildmatch(pattern: &[u8], text: &[u8]) -> bool {
    match_at(pattern, text, true)
}

fn match_at(pattern: &[u8], text: &[u8], at_component_start: bool) -> bool {
    let (mut p, mut t) = (0, 0);
    while p < pattern.len() {
        match pattern[p] {
            b'*' => {
                let double = pattern.get(p + 1) == Some(&b'*');
                let ends_component = pattern.get(p + 2).is_none_or(|&c| c == b'/');
                let starts_component =
                    p == 0 && at_component_start || p > 0 && pattern[p - 1] == b'/';
                if double && starts_component && ends_component {
                    let rest = &pattern[(p + 3).min(pattern.len())..];
                    if p + 2 >= pattern.len() {
                        return true;
                    }
                    // `**/`: zero or more whole directories.
                    let mut from = t;
                    loop {
                        if match_at(rest, &text[from..], true) {
                            return true;
                        }
                        match text[from..].iter().position(|&b| b == b'/') {
                            Some(slash) => from += slash + 1,
                            None => return false,
                        }
                    }
                }
                let mut rest = p + 1;
                while rest < pattern.len() && pattern[rest] == b'*' {
                    rest += 1;
                }
                let mut from = t;
                loop {
                    if match_at(&pattern[rest..], &text[from..], false) {
                        return true;
                    }
                    if from >= text.len() || text[from] == b'/' {
                        return false;
                    }
                    from += 1;
                }
            }
            b'?' => {
                if t >= text.len() || text[t] == b'/' {
                    return false;
                }
                p += 1;
                t += 1;
            }
            b'[' => {
                let Some(&c) = text.get(t) else { return false };
                match match_class(&pattern[p..], c) {
                    Some((matched, len)) => {
                        if !matched || c == b'/' {
                            return false;
                        }
                        p += len;
                        t += 1;
                    }
                    // An unterminated class is a literal '['.
                    None => {
                        if c != b'[' {
                            return false;
                        }
                        p += 1;
                        t += 1;
                    }
                }
            }
            b'\\' if p + 1 < pattern.len() => {
                if text.get(t) != Some(&pattern[p + 1]) {
                    return false;
                }
                p += 2;
                t += 1;
            }
            literal => {
                if text.get(t) != Some(&literal) {
                    return false;
                }
                p += 1;
                t += 1;
            }
        }
    }
    t == text.len()
}

/// Matches `c` against the class at the start of `pattern` (`[...]`); returns whether it
/// matched and the class's length, or `None` when the class is not terminated.
fn match_class(pattern: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negated = matches!(pattern.get(i), Some(b'!' | b'^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < pattern.len() {
        let mut low = pattern[i];
        if low == b']' && !first {
            return Some((matched != negated, i + 1));
        }
        first = false;
        if low == b'\\' && i + 1 < pattern.len() {
            i += 1;
            low = pattern[i];
        }
        if pattern.get(i + 1) == Some(&b'-') && pattern.get(i + 2).is_some_and(|&h| h != b']') {
            let high = pattern[i + 2];
            if low <= c && c <= high {
                matched = true;
            }
            i += 3;
        } else {
            if low == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        Pattern::new(pattern)
            .expect("non-empty")
            .matches(path.as_bytes())
    }

    #[test]
    fn table() {
        let cases = [
            ("HANDOFF.md", "HANDOFF.md", true),
            ("HANDOFF.md", "docs/HANDOFF.md", true),
            ("HANDOFF.md", "HANDOFF.md.bak", false),
            ("/HANDOFF.md", "docs/HANDOFF.md", false),
            ("/HANDOFF.md", "HANDOFF.md", true),
            (".pair/working/**", ".pair/working/notes.txt", true),
            (".pair/working/**", ".pair/working/a/b/c", true),
            (".pair/working/**", ".pair/workingx/a", false),
            (".pair/working/**", "x/.pair/working/a", false),
            (".pair/working", ".pair/working/a/b", true),
            ("*.lock", "Cargo.lock", true),
            ("*.lock", "sub/dir/yarn.lock", true),
            ("*.min.js", "web/app.min.js", true),
            ("*.min.js", "web/app.js", false),
            ("vendor/", "vendor/lib/x.go", true),
            ("vendor/", "a/vendor/x.go", true),
            ("vendor/", "vendor", false),
            ("src/*.rs", "src/main.rs", true),
            ("src/*.rs", "src/sub/main.rs", false),
            ("src/**/*.rs", "src/main.rs", true),
            ("src/**/*.rs", "src/a/b/main.rs", true),
            ("**/secret", "a/b/secret", true),
            ("**/secret", "secret", true),
            ("**/secret/*.key", "x/secret/a.key", true),
            ("?.txt", "a.txt", true),
            ("?.txt", "ab.txt", false),
            ("[abc].txt", "b.txt", true),
            ("[!abc].txt", "b.txt", false),
            ("[a-c]x", "cx", true),
            ("a\\*b", "a*b", true),
            ("a\\*b", "axb", false),
            ("node_modules/", "node_modules/pkg/index.js", true),
            ("a**b", "a/x/b", false),
            ("a**b", "axxb", true),
        ];
        for (pattern, path, expected) in cases {
            assert_eq!(m(pattern, path), expected, "{pattern} vs {path}");
        }
    }

    #[test]
    fn empty_patterns_are_ignored() {
        assert!(Pattern::new("").is_none());
        assert!(Pattern::new("/").is_none());
    }
}
