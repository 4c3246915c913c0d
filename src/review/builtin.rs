//! The built-in reviewer: deterministic checks on the added lines of the change, read from
//! its file diffs ([`FileDiff`]: every changed file, complete, not the budget-cut packet):
//! conflict markers, debug leftovers, oversized files, source changed without tests, new
//! TODO/FIXME. Pure and offline; answers in the same contract as any other reviewer. Binary
//! files get no line checks; their size is still judged.
//!
//! Blocking (→ CHANGES_REQUESTED): `conflict-marker`, `debug-leftover`, `large-file` — each
//! is almost always an accident and cheap to fix before merging.
//! Advisory (reported, verdict stays APPROVED): `missing-tests`, `todo` — both are often
//! deliberate, and a deterministic check cannot tell.
//!
//! Secrets are not its check: the one scanner ([`crate::secrets`]) decides what a secret is,
//! and the round turns each of its findings into one blocking `[secret]` finding. The
//! built-in is handed those findings only so that nothing it writes carries a secret: a line
//! it quotes has every secret on it redacted, and a line the scanner names without saying
//! where on it the secret is, is not quoted at all.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

use crate::diff::FileDiff;
use crate::review::parse::{Finding, Severity, Verdict, render_contract};
use crate::secrets::{self, Finding as SecretFinding, Origin};
use crate::util::hunk::{self, HunkLine, LineKind};

/// Settings of the built-in reviewer.
#[derive(Debug, Clone)]
pub struct BuiltinOptions {
    /// A file bigger than this (its size in the snapshot; else the bytes of its added lines)
    /// is flagged.
    pub max_file_bytes: u64,
    /// At most this many findings per category; further ones are summed up in one line.
    pub max_per_category: usize,
}

impl Default for BuiltinOptions {
    fn default() -> BuiltinOptions {
        BuiltinOptions {
            max_file_bytes: 1024 * 1024,
            max_per_category: 10,
        }
    }
}

/// The built-in reviewer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltinReview {
    /// APPROVED unless a blocking finding was made.
    pub verdict: Verdict,
    /// Findings, numbered from 1.
    pub findings: Vec<Finding>,
    /// The same answer written in the text contract (what gets stored as output).
    pub text: String,
}

/// Categories whose findings make the verdict CHANGES_REQUESTED.
pub const BLOCKING_CATEGORIES: &[&str] = &["conflict-marker", "debug-leftover", "large-file"];

/// Reviews the change: `files`, every changed file's diff, complete; `secrets`, what the
/// scanner found in them, each as [`secrets::Scanner::scan_diff`] reports it for its file's
/// `text` (ranges into that text; a finding named by path and line only is honoured too);
/// `sizes`, each added or modified file's size in the snapshot (a file without one is judged
/// by the bytes of its added lines).
pub fn review(
    files: &[FileDiff],
    secrets: &[SecretFinding],
    sizes: &[(String, u64)],
    options: &BuiltinOptions,
) -> BuiltinReview {
    let sizes: HashMap<&str, u64> = sizes.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let mut secrets_of: HashMap<&str, Vec<&SecretFinding>> = HashMap::new();
    for s in secrets
        .iter()
        .filter(|s| matches!(s.origin, Origin::Added | Origin::Context | Origin::Text))
    {
        secrets_of.entry(s.path.as_str()).or_default().push(s);
    }
    let mut raw: Vec<Finding> = Vec::new();
    let mut any_source = None;
    let mut sources = 0usize;
    let mut any_test = false;
    for diff in files {
        let path = String::from_utf8_lossy(&diff.change.new_path).into_owned();
        let test_file = is_test_path(&path);
        any_test |= test_file;
        if !test_file && is_source_path(&path) {
            sources += 1;
            any_source.get_or_insert_with(|| path.clone());
        }
        let file = File {
            size: sizes.get(path.as_str()).copied(),
            secrets: secrets_of.get(path.as_str()).map_or(&[], Vec::as_slice),
            path,
            diff,
        };
        check_file(&file, options, &mut raw, &mut any_test);
    }
    if let (Some(source), false) = (any_source, any_test) {
        raw.push(finding(
            "missing-tests",
            Some(Severity::Low),
            "",
            match sources {
                1 => format!("a source file changed ({source}) but no test file or test code did"),
                n => format!(
                    "{n} source files changed ({source} and {} more) but no test file or test code did",
                    n - 1
                ),
            },
        ));
    }
    let findings = cap_per_category(raw, options.max_per_category);
    let verdict = if findings
        .iter()
        .any(|f| BLOCKING_CATEGORIES.contains(&f.category.as_str()))
    {
        Verdict::ChangesRequested
    } else {
        Verdict::Approved
    };
    let text = render_contract(verdict, &findings);
    BuiltinReview {
        verdict,
        findings,
        text,
    }
}

/// One changed file as the checks see it.
struct File<'a> {
    /// The new-side path, as people read it (not git-quoted).
    path: String,
    diff: &'a FileDiff,
    /// Its size in the snapshot, when known.
    size: Option<u64>,
    /// The scanner's findings on its new side.
    secrets: &'a [&'a SecretFinding],
}

impl File<'_> {
    /// The added lines, in order (none for a binary file).
    fn added_lines(&self) -> impl Iterator<Item = HunkLine> + '_ {
        let text = &self.diff.text;
        let hunks = if self.diff.binary {
            &[][..]
        } else {
            &self.diff.hunks[..]
        };
        hunks
            .iter()
            .flat_map(move |h| hunk::lines(text, h.start..h.end))
            .filter(|l| l.kind == LineKind::Added)
    }

    /// `line`'s text for a finding to quote, every secret on it redacted; `None` when the
    /// scanner names the line without saying where on it the secret is.
    fn quotable(&self, line: &HunkLine) -> Option<String> {
        let span = &line.content;
        let overlaps = |s: &SecretFinding| {
            matches!(s.origin, Origin::Added | Origin::Context)
                && s.range.start < span.end
                && s.range.end > span.start
        };
        if self
            .secrets
            .iter()
            .any(|s| u64::try_from(s.line).ok() == Some(line.number) && !overlaps(s))
        {
            return None;
        }
        let mut on_line: Vec<(Range<usize>, &str)> = self
            .secrets
            .iter()
            .filter(|s| overlaps(s))
            .map(|s| {
                (
                    s.range.start.max(span.start)..s.range.end.min(span.end),
                    s.kind.as_str(),
                )
            })
            .collect();
        on_line.sort_by_key(|(r, _)| r.start);
        let text = &self.diff.text;
        let mut out = Vec::with_capacity(span.len());
        let mut copied = span.start;
        for (range, kind) in on_line {
            if range.end <= copied {
                continue;
            }
            out.extend_from_slice(&text[copied..range.start.max(copied)]);
            out.extend_from_slice(secrets::redaction_marker(kind).as_bytes());
            copied = range.end;
        }
        out.extend_from_slice(&text[copied..span.end]);
        Some(String::from_utf8_lossy(&out).into_owned())
    }
}

fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    lower.split('/').any(|seg| {
        matches!(
            seg,
            "test" | "tests" | "spec" | "specs" | "__tests__" | "testdata"
        )
    }) || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains("_spec.")
        || name.contains(".spec.")
}

fn is_source_path(path: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "rs", "py", "js", "jsx", "ts", "tsx", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp",
        "cs", "rb", "php", "swift", "scala", "sh", "m", "mm", "ex", "exs", "zig", "lua",
    ];
    path.rsplit_once('.')
        .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

fn debug_rules() -> &'static [(Regex, &'static str)] {
    static RULES: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    RULES.get_or_init(|| {
        [
            (r"\bdbg!\(", "dbg!"),
            (r"\bconsole\.(?:log|debug|trace)\(", "console.log"),
            (r"^\s*debugger\s*;?\s*$", "debugger statement"),
            (r"\bbinding\.pry\b|\bbyebug\b", "binding.pry/byebug"),
            (
                r"\bpdb\.set_trace\(\)|^\s*breakpoint\(\)",
                "Python breakpoint",
            ),
            (
                r#"(?i)\bprint\(\s*f?["'](?:debug|here|xxx|>>>)"#,
                "debug print(",
            ),
            (r"\bvar_dump\(", "var_dump"),
        ]
        .into_iter()
        .map(|(p, what)| (Regex::new(p).expect("debug pattern is valid"), what))
        .collect()
    })
}

fn check_file(
    file: &File<'_>,
    options: &BuiltinOptions,
    out: &mut Vec<Finding>,
    any_test: &mut bool,
) {
    static TODO: OnceLock<Regex> = OnceLock::new();
    static TEST_CODE: OnceLock<Regex> = OnceLock::new();
    let todo =
        TODO.get_or_init(|| Regex::new(r"\b(TODO|FIXME|XXX)\b").expect("todo pattern is valid"));
    let test_code = TEST_CODE.get_or_init(|| {
        Regex::new(
            r"#\[(?:cfg\(test\)|test|tokio::test)\]|\bdef test_|\b(?:describe|it|test)\(\s*['`]",
        )
        .expect("test pattern is valid")
    });
    let loc = |n: u64| format!("{}:{n}", file.path);
    let mut in_conflict = false;
    let mut added_bytes: u64 = 0;
    for line in file.added_lines() {
        let n = line.number;
        // The `+` and the text, as the line stands in the diff.
        added_bytes += line.content.len() as u64 + 1;
        let text = String::from_utf8_lossy(&file.diff.text[line.content.clone()]);
        let text = text.as_ref();
        if text.starts_with("<<<<<<< ") || text == "<<<<<<<" {
            in_conflict = true;
            out.push(finding(
                "conflict-marker",
                Some(Severity::High),
                &loc(n),
                "merge conflict marker `<<<<<<<` committed".into(),
            ));
        } else if in_conflict && text == "=======" {
            out.push(finding(
                "conflict-marker",
                Some(Severity::High),
                &loc(n),
                "merge conflict marker `=======` committed".into(),
            ));
        } else if text.starts_with(">>>>>>> ") || text == ">>>>>>>" {
            in_conflict = false;
            out.push(finding(
                "conflict-marker",
                Some(Severity::High),
                &loc(n),
                "merge conflict marker `>>>>>>>` committed".into(),
            ));
        }
        if let Some((_, what)) = debug_rules().iter().find(|(re, _)| re.is_match(text)) {
            out.push(finding(
                "debug-leftover",
                Some(Severity::Medium),
                &loc(n),
                format!("{what} left in the change"),
            ));
        }
        if let Some(m) = todo.find(text) {
            let text = match file.quotable(&line) {
                Some(quoted) => format!("new {} added: {}", m.as_str(), quoted.trim()),
                None => format!(
                    "new {} added (the line is not quoted: it holds a secret)",
                    m.as_str()
                ),
            };
            out.push(finding("todo", Some(Severity::Low), &loc(n), text));
        }
        if test_code.is_match(text) {
            *any_test = true;
        }
    }
    let size = file.size.unwrap_or(added_bytes);
    if size > options.max_file_bytes {
        out.push(finding(
            "large-file",
            Some(Severity::Medium),
            &file.path,
            format!(
                "{size} bytes in one file (limit {}); large or generated files belong in LFS, a release asset, or the build",
                options.max_file_bytes
            ),
        ));
    }
}

fn finding(category: &str, severity: Option<Severity>, location: &str, text: String) -> Finding {
    Finding {
        n: 0,
        category: category.to_owned(),
        severity,
        location: location.to_owned(),
        text: text.chars().take(300).collect(),
    }
}

fn cap_per_category(raw: Vec<Finding>, max: usize) -> Vec<Finding> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut kept = Vec::new();
    for f in raw {
        let count = seen.entry(f.category.clone()).or_default();
        *count += 1;
        if *count <= max {
            kept.push(f);
        }
    }
    for (category, count) in seen {
        if count > max {
            let severity = kept
                .iter()
                .find(|f| f.category == category)
                .and_then(|f| f.severity);
            kept.push(finding(
                &category,
                severity,
                "",
                format!("and {} more `{category}` findings", count - max),
            ));
        }
    }
    for (i, f) in kept.iter_mut().enumerate() {
        f.n = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::file_diff_for_tests;
    use crate::review::parse::{Parsed, parse_answer};
    use crate::secrets::Scanner;

    /// `path` modified: a context line kept, a line removed, `added` added after it (so the
    /// first added line is line 2 of the new file).
    fn file(path: &str, added: &[&str]) -> FileDiff {
        let old = "context line\nremoved line\n";
        let mut new = String::from("context line\n");
        for l in added {
            new.push_str(l);
            new.push('\n');
        }
        file_diff_for_tests(path, Some(old.as_bytes()), Some(new.as_bytes()))
    }

    fn run(files: &[FileDiff]) -> BuiltinReview {
        review(files, &[], &[], &BuiltinOptions::default())
    }

    fn categories(r: &BuiltinReview) -> Vec<(&str, &str)> {
        r.findings
            .iter()
            .map(|f| (f.category.as_str(), f.location.as_str()))
            .collect()
    }

    #[test]
    fn each_check_fires_on_added_lines_with_the_new_line_number() {
        let cases = [
            ("<<<<<<< HEAD", "conflict-marker"),
            ("    dbg!(&x);", "debug-leftover"),
            ("  console.log(state)", "debug-leftover"),
            ("debugger;", "debug-leftover"),
            ("binding.pry", "debug-leftover"),
            ("import pdb; pdb.set_trace()", "debug-leftover"),
            ("print(\"DEBUG value\", v)", "debug-leftover"),
            ("// TODO: handle the error", "todo"),
            ("# FIXME later", "todo"),
        ];
        for (line, want) in cases {
            let r = run(&[file("src/app.rs", &[line])]);
            assert_eq!(r.findings[0].category, want, "{line}");
            assert_eq!(r.findings[0].location, "src/app.rs:2", "{line}");
        }
    }

    #[test]
    fn harmless_lines_raise_nothing() {
        let lines = [
            "let password = std::env::var(\"DB_PASSWORD\")?;",
            "println!(\"done\");",
            "print(result)",
            "Title",
            "=======",
            "fn todo_list() {}",
        ];
        let r = run(&[file("README.md", &lines)]);
        assert_eq!(r.findings, vec![], "{:?}", r.findings);
        assert_eq!(r.verdict, Verdict::Approved);
    }

    #[test]
    fn secrets_are_the_scanners_finding_not_the_builtins() {
        // Secret-shaped strings are assembled at run time so this file itself holds none.
        let aws = format!("let key = \"{}{}\";", "AKIA", "ZQ7M4KRT6W3XJ5NP");
        let look_alike = format!("db_{} = \"{}\"", "password", "hunter22");
        let files = [file("src/app.rs", &[aws.as_str(), look_alike.as_str()])];
        let secrets = Scanner::builtin().scan_diff(&files[0].text);
        let r = review(&files, &secrets, &[], &BuiltinOptions::default());
        assert!(
            r.findings.iter().all(|f| f.category != "secret"),
            "{:?}",
            r.findings
        );
        assert_eq!(r.verdict, Verdict::Approved, "{:?}", r.findings);
    }

    #[test]
    fn a_quoted_line_never_carries_a_secret() {
        let key = format!("{}{}", "AKIA", "ZQ7M4KRT6W3XJ5NP");
        let line = format!("let key = \"{key}\"; // TODO move to the environment");
        let files = [file("src/app.rs", &[line.as_str()])];
        let secrets = Scanner::builtin().scan_diff(&files[0].text);
        assert_eq!(secrets.len(), 1, "the scanner finds the key");
        let r = review(&files, &secrets, &[], &BuiltinOptions::default());
        assert_eq!(
            r.findings[0].text,
            "new TODO added: let key = \"[REDACTED:aws-access-key-id]\"; // TODO move to the environment"
        );
        assert!(!r.text.contains(&key), "{}", r.text);
        // Named by path and line only (no range into this text): not quoted at all.
        let mut named = secrets[0].clone();
        named.origin = Origin::Text;
        named.range = 0..0;
        let r = review(&files, &[named], &[], &BuiltinOptions::default());
        assert_eq!(
            r.findings[0].text,
            "new TODO added (the line is not quoted: it holds a secret)"
        );
        assert_eq!(r.findings[0].location, "src/app.rs:2");
    }

    #[test]
    fn every_line_of_a_multi_line_secret_is_redacted_where_quoted() {
        let body = format!("MIIEow{}", "IBAAKCAQEAx3Vq9Zr1Ty8Kp2Wm5Ln7Hd4Gf6Js0Qe");
        let key = [
            format!("-----BEGIN RSA {}-----", "PRIVATE KEY"),
            format!("{body}+XXX/"),
            format!("-----END RSA {}-----", "PRIVATE KEY"),
        ];
        let refs: Vec<&str> = key.iter().map(String::as_str).collect();
        let files = [file("deploy/id_rsa", &refs)];
        let secrets = Scanner::builtin().scan_diff(&files[0].text);
        assert!(!secrets.is_empty(), "the scanner finds the key");
        let r = review(&files, &secrets, &[], &BuiltinOptions::default());
        // The body line holds `XXX`: a `todo` that must not quote the key.
        let todo = r.findings.iter().find(|f| f.category == "todo");
        assert_eq!(
            todo.map(|f| (f.location.as_str(), f.text.as_str())),
            Some(("deploy/id_rsa:3", "new XXX added: [REDACTED:private-key]")),
            "{:?}",
            r.findings
        );
        assert!(!r.text.contains(&body), "{}", r.text);
    }

    #[test]
    fn removed_and_context_lines_are_not_checked() {
        let f = file_diff_for_tests(
            "a.md",
            Some(b"dbg!(x)\nconsole.log(1)\n"),
            Some(b"dbg!(x)\n"),
        );
        assert_eq!(run(&[f]).findings, vec![]);
    }

    #[test]
    fn conflict_separator_counts_only_inside_a_conflict() {
        let r = run(&[file(
            "doc.md",
            &["<<<<<<< ours", "a", "=======", "b", ">>>>>>> theirs"],
        )]);
        assert_eq!(
            categories(&r),
            [
                ("conflict-marker", "doc.md:2"),
                ("conflict-marker", "doc.md:4"),
                ("conflict-marker", "doc.md:6")
            ]
        );
    }

    #[test]
    fn verdict_blocks_only_on_blocking_categories() {
        let todo_only = run(&[file("src/a.rs", &["// TODO tidy"])]);
        assert_eq!(todo_only.verdict, Verdict::Approved);
        assert_eq!(
            categories(&todo_only),
            [("todo", "src/a.rs:2"), ("missing-tests", "")]
        );
        let debug = run(&[file("src/a.rs", &["dbg!(1);"])]);
        assert_eq!(debug.verdict, Verdict::ChangesRequested);
    }

    #[test]
    fn the_missing_tests_finding_counts_the_source_files() {
        let text = |r: &BuiltinReview| {
            r.findings
                .iter()
                .find(|f| f.category == "missing-tests")
                .map(|f| f.text.clone())
                .unwrap_or_default()
        };
        let one = run(&[file("src/a.rs", &["fn a() {}"])]);
        assert!(
            text(&one).contains("a source file changed (src/a.rs) but no test"),
            "{}",
            text(&one)
        );
        let three = run(&[
            file("src/a.rs", &["fn a() {}"]),
            file("src/b.rs", &["fn b() {}"]),
            file("src/c.rs", &["fn c() {}"]),
        ]);
        assert!(
            text(&three).contains("3 source files changed (src/a.rs and 2 more)"),
            "{}",
            text(&three)
        );
    }

    #[test]
    fn tests_changed_alongside_source_satisfy_the_tests_check() {
        let both = [
            file("src/a.rs", &["fn f() {}"]),
            file("tests/a.rs", &["fn t() {}"]),
        ];
        assert_eq!(run(&both).findings, vec![]);
        let inline = [file("src/a.rs", &["#[cfg(test)]", "mod tests {}"])];
        assert_eq!(run(&inline).findings, vec![]);
        let py = [
            file("app/views.py", &["def f(): pass"]),
            file("app/test_views.py", &["def test_f(): pass"]),
        ];
        assert_eq!(run(&py).findings, vec![]);
        let docs = [file("docs/guide.md", &["words"])];
        assert_eq!(run(&docs).findings, vec![]);
    }

    #[test]
    fn large_files_are_flagged_by_snapshot_size_else_added_bytes() {
        let big = "x".repeat(100);
        let lines: Vec<&str> = (0..20).map(|_| big.as_str()).collect();
        let options = BuiltinOptions {
            max_file_bytes: 1000,
            ..BuiltinOptions::default()
        };
        let r = review(&[file("data.txt", &lines)], &[], &[], &options);
        assert_eq!(categories(&r), [("large-file", "data.txt")]);
        assert_eq!(r.verdict, Verdict::ChangesRequested);
        // The snapshot's size wins over what the diff adds: a one-line edit of a big file…
        let small_edit = [file("data.txt", &["x"])];
        let sizes = [("data.txt".to_owned(), 5000)];
        let r = review(&small_edit, &[], &sizes, &options);
        assert_eq!(categories(&r), [("large-file", "data.txt")]);
        // …and a binary file, which has no lines to check, is judged by it too.
        let binary = file_diff_for_tests("img.png", None, Some(b"\x89PNG\0\0dbg!(1)\n"));
        assert!(binary.binary);
        let binary = [binary];
        let sizes = [("img.png".to_owned(), 5000)];
        let r = review(&binary, &[], &sizes, &options);
        assert_eq!(categories(&r), [("large-file", "img.png")]);
        assert_eq!(review(&binary, &[], &[], &options).findings, vec![]);
    }

    #[test]
    fn findings_are_capped_per_category_with_a_summary() {
        let lines: Vec<String> = (0..15).map(|i| format!("// TODO {i}")).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let r = run(&[file("notes.txt", &refs)]);
        assert_eq!(r.findings.len(), 11);
        assert_eq!(r.findings[10].text, "and 5 more `todo` findings");
        assert_eq!(
            r.findings.iter().map(|f| f.n).collect::<Vec<_>>(),
            (1..=11).collect::<Vec<_>>()
        );
    }

    #[test]
    fn hunk_line_numbers_follow_the_new_side() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let mut new: Vec<String> = (1..=30).map(|i| format!("line {i}")).collect();
        new[19] = "// FIXME one".to_owned();
        new.insert(21, "// FIXME two".to_owned());
        let new = new.join("\n") + "\n";
        let f = file_diff_for_tests("x.txt", Some(old.as_bytes()), Some(new.as_bytes()));
        assert_eq!(
            categories(&run(&[f])),
            [("todo", "x.txt:20"), ("todo", "x.txt:22")]
        );
    }

    #[test]
    fn new_deleted_and_quoted_paths() {
        let files = [
            file_diff_for_tests("new.txt", None, Some(b"TODO a\n")),
            file_diff_for_tests("old.txt", Some(b"TODO gone\n"), None),
            file_diff_for_tests("na\u{ef}ve \"q\".txt", Some(b"x\n"), Some(b"x\nTODO b\n")),
        ];
        assert!(files[2].text.starts_with(b"diff --git \"a/na\\303\\257ve"));
        assert_eq!(
            categories(&run(&files)),
            [("todo", "new.txt:1"), ("todo", "na\u{ef}ve \"q\".txt:2")]
        );
    }

    #[test]
    fn answer_text_round_trips_through_the_parser() {
        let r = run(&[file("src/a.rs", &["dbg!(1);", "// TODO x"])]);
        assert_eq!(
            parse_answer(r.text.as_bytes()),
            Parsed::Verdict {
                verdict: r.verdict,
                findings: r.findings.clone(),
                notes: vec![]
            }
        );
        let empty = run(&[]);
        assert_eq!(
            (empty.verdict, empty.text.as_str()),
            (Verdict::Approved, "VERDICT: APPROVED\n")
        );
    }
}
