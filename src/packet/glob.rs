//! gitignore-style path sets on gix's own pattern machinery (`gix::glob`, git's wildmatch):
//! `*`, `?`, `[...]` stay within one path component, `**` spans directories, a pattern
//! without a `/` matches a name at any depth, one with a `/` is anchored at the repository
//! root, a trailing `/` only matches directories, `!pattern` re-includes and the last
//! matching pattern wins. A path is in the set when it, or any directory containing it, is —
//! and as in git, nothing under an excluded directory can be re-included.
//! Pure: bytes in, booleans out.

use gix::bstr::{BStr, ByteSlice};
use gix::glob::{Pattern, pattern::Case, wildmatch};

/// An ordered list of gitignore-style patterns, evaluated as one `.gitignore` file would be.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathSet {
    /// Each pattern with its text as written, in order (later patterns win).
    patterns: Vec<(Pattern, String)>,
}

impl PathSet {
    /// Parses `patterns` in order; empty ones (after trimming whitespace) match nothing and
    /// are dropped.
    pub fn new(patterns: impl IntoIterator<Item = impl AsRef<str>>) -> PathSet {
        let patterns = patterns
            .into_iter()
            .filter_map(|text| {
                let text = text.as_ref();
                let pattern = Pattern::from_bytes(text.trim().as_bytes())?;
                // `/` alone parses as an anchored pattern with no text, which git ignores.
                (!pattern.text.is_empty()).then(|| (pattern, text.to_owned()))
            })
            .collect();
        PathSet { patterns }
    }

    /// Whether `path` (repository-relative, `/`-separated) is in the set.
    pub fn matches(&self, path: &[u8]) -> bool {
        self.matching(path).is_some()
    }

    /// The pattern (as written) that puts `path` in the set, or `None` when it is not in it:
    /// the deciding pattern of the outermost excluded directory containing `path`, else the
    /// last pattern matching `path` itself, unless that one is a negation.
    pub fn matching(&self, path: &[u8]) -> Option<&str> {
        let path = path.as_bstr();
        let directories = path
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'/')
            .map(|(slash, _)| &path[..slash]);
        directories
            .map(|dir| (dir, true))
            .chain(std::iter::once((path, false)))
            .find_map(|(candidate, is_dir)| self.last_match(candidate, is_dir))
    }

    /// The last pattern matching `path` when it is a positive one.
    fn last_match(&self, path: &BStr, is_dir: bool) -> Option<&str> {
        if path.is_empty() {
            return None;
        }
        let basename_start = path.rfind_byte(b'/').map(|slash| slash + 1);
        let (pattern, text) = self.patterns.iter().rev().find(|(pattern, _)| {
            pattern.matches_repo_relative_path(
                path,
                basename_start,
                Some(is_dir),
                Case::Sensitive,
                wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
            )
        })?;
        (!pattern.is_negative()).then_some(text.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        PathSet::new([pattern]).matches(path.as_bytes())
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
            // git's wildmatch details the hand-written matcher did not have.
            ("[[:digit:]].txt", "7.txt", true),
            ("[[:digit:]].txt", "x.txt", false),
            ("*", "a/b", true),
            ("secret/", "secret/deep/down/key", true),
            ("/secret/", "x/secret/key", false),
        ];
        for (pattern, path, expected) in cases {
            assert_eq!(m(pattern, path), expected, "{pattern} vs {path}");
        }
    }

    #[test]
    fn empty_patterns_are_ignored() {
        assert_eq!(PathSet::new(["", "/", "  "]), PathSet::default());
        assert!(!PathSet::new(["", "/"]).matches(b"a"));
    }

    #[test]
    fn negation_re_includes_and_the_last_match_wins() {
        let set = PathSet::new(["*.env", "!example.env"]);
        assert_eq!(set.matching(b"prod.env"), Some("*.env"));
        assert_eq!(set.matching(b"config/example.env"), None);
        // Order matters: a later positive pattern excludes again.
        let set = PathSet::new(["*.env", "!example.env", "config/*.env"]);
        assert_eq!(set.matching(b"config/example.env"), Some("config/*.env"));
        assert_eq!(set.matching(b"example.env"), None);
        // A negation alone excludes nothing.
        assert!(!PathSet::new(["!a"]).matches(b"a"));
        // `\!` is a literal `!`.
        assert!(PathSet::new(["\\!important"]).matches(b"!important"));
    }

    #[test]
    fn a_path_inside_an_excluded_directory_is_excluded() {
        let set = PathSet::new(["secrets"]);
        assert_eq!(set.matching(b"secrets/a/b/key.pem"), Some("secrets"));
        assert_eq!(set.matching(b"deep/secrets/key.pem"), Some("secrets"));
        assert!(!set.matches(b"secretsx/key.pem"));
        // As in git, a file cannot be re-included when a directory containing it is excluded…
        let set = PathSet::new(["secrets/", "!secrets/public.pem"]);
        assert_eq!(set.matching(b"secrets/public.pem"), Some("secrets/"));
        // …but it can be when only the files inside are.
        let set = PathSet::new(["secrets/*", "!secrets/public.pem"]);
        assert_eq!(set.matching(b"secrets/public.pem"), None);
        assert_eq!(set.matching(b"secrets/private.pem"), Some("secrets/*"));
        // A negated directory re-includes what is under it.
        let set = PathSet::new(["build*", "!build-tools/"]);
        assert!(!set.matches(b"build-tools/x.sh"));
        assert!(set.matches(b"build-out/x.o"));
        // The outermost excluded directory decides, whatever is negated below it.
        let set = PathSet::new(["a/", "!a/b/", "!a/b/c"]);
        assert_eq!(set.matching(b"a/b/c"), Some("a/"));
    }
}
