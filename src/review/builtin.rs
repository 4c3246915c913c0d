//! The built-in reviewer: deterministic checks on the added lines of a unified diff (conflict
//! markers, committed secrets, debug leftovers, oversized files, source changed without tests,
//! new TODO/FIXME). Pure and offline; answers in the same contract as any other reviewer.
//!
//! Blocking (→ CHANGES_REQUESTED): `conflict-marker`, `secret`, `debug-leftover`,
//! `large-file` — each is almost always an accident and cheap to fix before merging.
//! Advisory (reported, verdict stays APPROVED): `missing-tests`, `todo` — both are often
//! deliberate, and a deterministic check cannot tell.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;

use crate::review::parse::{Finding, Severity, Verdict, render_contract};

/// Settings of the built-in reviewer.
#[derive(Debug, Clone)]
pub struct BuiltinOptions {
    /// A file whose added lines total more bytes than this is flagged.
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
pub const BLOCKING_CATEGORIES: &[&str] =
    &["conflict-marker", "secret", "debug-leftover", "large-file"];

/// Reviews the added lines of `diff` (unified diff text), and the size of each changed file as
/// the snapshot holds it (`sizes`; a packet under its byte budget shows only part of a big
/// file, or only its name).
pub fn review(diff: &str, sizes: &[(String, u64)], options: &BuiltinOptions) -> BuiltinReview {
    let mut files = parse_diff(diff);
    for (path, bytes) in sizes {
        match files.iter_mut().find(|f| &f.path == path) {
            Some(file) => file.size = Some(*bytes),
            None => files.push(FileAdds {
                path: path.clone(),
                size: Some(*bytes),
                ..FileAdds::default()
            }),
        }
    }
    let mut raw: Vec<Finding> = Vec::new();
    let mut any_source = None;
    let mut any_test = false;
    for file in &files {
        let test_file = is_test_path(&file.path);
        any_test |= test_file;
        if !test_file && is_source_path(&file.path) && any_source.is_none() {
            any_source = Some(file.path.clone());
        }
        check_file(file, options, &mut raw, &mut any_test);
    }
    if let (Some(source), false) = (any_source, any_test) {
        raw.push(finding(
            "missing-tests",
            Some(Severity::Low),
            "",
            format!("source files changed ({source}, …) but no test file or test code changed"),
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

/// One file's added lines in a diff.
#[derive(Debug, Default, PartialEq, Eq)]
struct FileAdds {
    path: String,
    /// (line number in the new file, text without the leading `+`)
    lines: Vec<(u32, String)>,
    added_bytes: u64,
    /// The whole file's size in the snapshot, when known.
    size: Option<u64>,
}

fn parse_diff(diff: &str) -> Vec<FileAdds> {
    let mut files: Vec<FileAdds> = Vec::new();
    let mut new_line: u32 = 0;
    let mut in_hunk = false;
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            in_hunk = false;
            files.push(FileAdds {
                path: path_from_git_header(rest),
                ..FileAdds::default()
            });
            continue;
        }
        if !in_hunk && let Some(path) = line.strip_prefix("+++ ") {
            let path = strip_diff_prefix(path.trim_end());
            if path != "/dev/null" {
                match files.last_mut() {
                    Some(f) if f.lines.is_empty() => f.path = path,
                    _ => files.push(FileAdds {
                        path,
                        ..FileAdds::default()
                    }),
                }
            }
            continue;
        }
        if let Some(header) = line.strip_prefix("@@ ") {
            in_hunk = true;
            new_line = header
                .split_whitespace()
                .find_map(|w| w.strip_prefix('+'))
                .and_then(|range| range.split(',').next())
                .and_then(|start| start.parse().ok())
                .unwrap_or(1);
            continue;
        }
        if !in_hunk {
            continue;
        }
        match line.as_bytes().first() {
            Some(b'+') => {
                if let Some(f) = files.last_mut() {
                    f.added_bytes += line.len() as u64;
                    f.lines.push((new_line, line[1..].to_owned()));
                }
                new_line += 1;
            }
            Some(b' ') => new_line += 1,
            Some(b'-') | Some(b'\\') => {}
            // Anything else (a blank line some tools emit for an empty context line).
            _ => new_line += 1,
        }
    }
    files
}

fn strip_diff_prefix(path: &str) -> String {
    let path = unquote(path);
    match path.split_once('/') {
        Some(("a" | "b", rest)) => rest.to_owned(),
        _ => path,
    }
}

fn unquote(path: &str) -> String {
    match path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => path.to_owned(),
    }
}

/// `a/x b/x` → `x` (the new side; only a guess when paths contain spaces, corrected by `+++`).
fn path_from_git_header(rest: &str) -> String {
    match rest.rfind(" b/") {
        Some(at) => rest[at + 3..].to_owned(),
        None => rest.to_owned(),
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

struct Rule {
    category: &'static str,
    severity: Severity,
    what: &'static str,
    re: Regex,
}

fn secret_rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let rule = |what, pattern: &str| Rule {
            category: "secret",
            severity: Severity::Critical,
            what,
            re: Regex::new(pattern).expect("secret pattern is valid"),
        };
        vec![
            rule("a private key", r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----"),
            rule("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
            rule(
                "an AWS secret access key",
                r#"(?i)aws_?secret_?access_?key\s*[=:]\s*["']?[A-Za-z0-9/+]{40}\b"#,
            ),
            rule("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"),
            rule("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
            rule("an OpenAI/Anthropic-style API key", r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"),
            rule("a bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*"),
            rule(
                "a hard-coded password",
                r#"(?i)(?:^|[^a-z])(?:password|passwd|pwd|secret)(?:_\w+)?["']?\s*[:=]\s*["'][^"'\s$<{]{4,}["']"#,
            ),
        ]
    })
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
    file: &FileAdds,
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
    let loc = |n: u32| format!("{}:{n}", file.path);
    let mut in_conflict = false;
    for (n, text) in &file.lines {
        if text.starts_with("<<<<<<< ") || text == "<<<<<<<" {
            in_conflict = true;
            out.push(finding(
                "conflict-marker",
                Some(Severity::High),
                &loc(*n),
                "merge conflict marker `<<<<<<<` committed".into(),
            ));
        } else if in_conflict && text == "=======" {
            out.push(finding(
                "conflict-marker",
                Some(Severity::High),
                &loc(*n),
                "merge conflict marker `=======` committed".into(),
            ));
        } else if text.starts_with(">>>>>>> ") || text == ">>>>>>>" {
            in_conflict = false;
            out.push(finding(
                "conflict-marker",
                Some(Severity::High),
                &loc(*n),
                "merge conflict marker `>>>>>>>` committed".into(),
            ));
        }
        if let Some(rule) = secret_rules().iter().find(|r| r.re.is_match(text)) {
            out.push(finding(
                rule.category,
                Some(rule.severity),
                &loc(*n),
                format!("{} is committed; remove it, rotate it, and load it from the environment or a secret store", rule.what),
            ));
        }
        if let Some((_, what)) = debug_rules().iter().find(|(re, _)| re.is_match(text)) {
            out.push(finding(
                "debug-leftover",
                Some(Severity::Medium),
                &loc(*n),
                format!("{what} left in the change"),
            ));
        }
        if let Some(m) = todo.find(text) {
            out.push(finding(
                "todo",
                Some(Severity::Low),
                &loc(*n),
                format!("new {} added: {}", m.as_str(), text.trim()),
            ));
        }
        if test_code.is_match(text) {
            *any_test = true;
        }
    }
    let size = file.size.unwrap_or(file.added_bytes);
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
    use crate::review::parse::{Parsed, parse_answer};

    fn diff(path: &str, added: &[&str]) -> String {
        let mut d = format!(
            "diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n@@ -1,2 +1,{} @@\n context line\n-removed line\n",
            added.len() + 1
        );
        for l in added {
            d.push('+');
            d.push_str(l);
            d.push('\n');
        }
        d
    }

    fn categories(r: &BuiltinReview) -> Vec<(&str, &str)> {
        r.findings
            .iter()
            .map(|f| (f.category.as_str(), f.location.as_str()))
            .collect()
    }

    #[test]
    fn each_check_fires_on_added_lines_with_the_new_line_number() {
        // Secret-shaped strings are assembled at run time so this file itself holds none.
        let aws = format!("let key = \"{}{}\";", "AKIA", "ABCDEFGHIJKLMNOP");
        let gh = format!("token: {}{}", "ghp_", "a".repeat(36));
        let slack = format!("SLACK={}{}", "xoxb-", "1234567890-abcdef");
        let openai = format!("OPENAI_API_KEY={}{}", "sk-proj-", "A".repeat(24));
        let pem = format!("-----BEGIN {}PRIVATE KEY-----", "RSA ");
        let bearer = format!("curl -H 'Authorization: {} {}'", "Bearer", "x".repeat(32));
        let password = format!("db_{} = \"{}\"", "password", "hunter22");
        let cases: Vec<(String, &str)> = vec![
            ("<<<<<<< HEAD".into(), "conflict-marker"),
            (aws, "secret"),
            (gh, "secret"),
            (slack, "secret"),
            (openai, "secret"),
            (pem, "secret"),
            (bearer, "secret"),
            (password, "secret"),
            ("    dbg!(&x);".into(), "debug-leftover"),
            ("  console.log(state)".into(), "debug-leftover"),
            ("debugger;".into(), "debug-leftover"),
            ("binding.pry".into(), "debug-leftover"),
            ("import pdb; pdb.set_trace()".into(), "debug-leftover"),
            ("print(\"DEBUG value\", v)".into(), "debug-leftover"),
            ("// TODO: handle the error".into(), "todo"),
            ("# FIXME later".into(), "todo"),
        ];
        for (line, want) in cases {
            let r = review(
                &diff("src/app.rs", &[line.as_str()]),
                &[],
                &BuiltinOptions::default(),
            );
            assert_eq!(r.findings[0].category, want, "{line}");
            assert_eq!(r.findings[0].location, "src/app.rs:2", "{line}");
        }
    }

    #[test]
    fn harmless_lines_raise_nothing() {
        let lines = [
            "let password = std::env::var(\"DB_PASSWORD\")?;",
            "password = \"\"",
            "println!(\"done\");",
            "print(result)",
            "Title",
            "=======",
            "fn todo_list() {}",
            "let sk = \"sk-short\";",
            "secretary = \"Alice Smith\"",
        ];
        let r = review(&diff("README.md", &lines), &[], &BuiltinOptions::default());
        assert_eq!(r.findings, vec![], "{:?}", r.findings);
        assert_eq!(r.verdict, Verdict::Approved);
    }

    #[test]
    fn removed_and_context_lines_are_not_checked() {
        let d = "diff --git a/a.md b/a.md\n--- a/a.md\n+++ b/a.md\n@@ -1,2 +1,1 @@\n dbg!(x)\n-console.log(1)\n";
        assert_eq!(review(d, &[], &BuiltinOptions::default()).findings, vec![]);
    }

    #[test]
    fn conflict_separator_counts_only_inside_a_conflict() {
        let r = review(
            &diff(
                "doc.md",
                &["<<<<<<< ours", "a", "=======", "b", ">>>>>>> theirs"],
            ),
            &[],
            &BuiltinOptions::default(),
        );
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
        let todo_only = review(
            &diff("src/a.rs", &["// TODO tidy"]),
            &[],
            &BuiltinOptions::default(),
        );
        assert_eq!(todo_only.verdict, Verdict::Approved);
        assert_eq!(
            categories(&todo_only),
            [("todo", "src/a.rs:2"), ("missing-tests", "")]
        );
        let debug = review(
            &diff("src/a.rs", &["dbg!(1);"]),
            &[],
            &BuiltinOptions::default(),
        );
        assert_eq!(debug.verdict, Verdict::ChangesRequested);
    }

    #[test]
    fn tests_changed_alongside_source_satisfy_the_tests_check() {
        let both = diff("src/a.rs", &["fn f() {}"]) + &diff("tests/a.rs", &["fn t() {}"]);
        assert_eq!(
            review(&both, &[], &BuiltinOptions::default()).findings,
            vec![]
        );
        let inline = diff("src/a.rs", &["#[cfg(test)]", "mod tests {}"]);
        assert_eq!(
            review(&inline, &[], &BuiltinOptions::default()).findings,
            vec![]
        );
        let py = diff("app/views.py", &["def f(): pass"])
            + &diff("app/test_views.py", &["def test_f(): pass"]);
        assert_eq!(
            review(&py, &[], &BuiltinOptions::default()).findings,
            vec![]
        );
        let docs = diff("docs/guide.md", &["words"]);
        assert_eq!(
            review(&docs, &[], &BuiltinOptions::default()).findings,
            vec![]
        );
    }

    #[test]
    fn large_files_are_flagged_by_added_bytes() {
        let big = "x".repeat(100);
        let lines: Vec<&str> = (0..20).map(|_| big.as_str()).collect();
        let options = BuiltinOptions {
            max_file_bytes: 1000,
            ..BuiltinOptions::default()
        };
        let r = review(&diff("data.txt", &lines), &[], &options);
        assert_eq!(categories(&r), [("large-file", "data.txt")]);
        assert_eq!(r.verdict, Verdict::ChangesRequested);
    }

    #[test]
    fn findings_are_capped_per_category_with_a_summary() {
        let lines: Vec<String> = (0..15).map(|i| format!("// TODO {i}")).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let r = review(&diff("notes.txt", &refs), &[], &BuiltinOptions::default());
        assert_eq!(r.findings.len(), 11);
        assert_eq!(r.findings[10].text, "and 5 more `todo` findings");
        assert_eq!(
            r.findings.iter().map(|f| f.n).collect::<Vec<_>>(),
            (1..=11).collect::<Vec<_>>()
        );
    }

    #[test]
    fn hunk_line_numbers_follow_the_new_side() {
        let d = "diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -10,3 +20,4 @@ fn ctx\n keep\n-gone\n+// FIXME one\n keep\n+// FIXME two\n";
        let r = review(d, &[], &BuiltinOptions::default());
        assert_eq!(categories(&r), [("todo", "x.txt:21"), ("todo", "x.txt:23")]);
    }

    #[test]
    fn new_deleted_and_quoted_paths() {
        let d = "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+TODO a\n\
                 diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-TODO gone\n\
                 diff --git \"a/sp ace.txt\" \"b/sp ace.txt\"\n--- \"a/sp ace.txt\"\n+++ \"b/sp ace.txt\"\n@@ -0,0 +1 @@\n+TODO b\n";
        let r = review(d, &[], &BuiltinOptions::default());
        assert_eq!(
            categories(&r),
            [("todo", "new.txt:1"), ("todo", "sp ace.txt:1")]
        );
    }

    #[test]
    fn answer_text_round_trips_through_the_parser() {
        let r = review(
            &diff("src/a.rs", &["dbg!(1);", "// TODO x"]),
            &[],
            &BuiltinOptions::default(),
        );
        assert_eq!(
            parse_answer(r.text.as_bytes()),
            Parsed::Verdict {
                verdict: r.verdict,
                findings: r.findings.clone()
            }
        );
        let empty = review("", &[], &BuiltinOptions::default());
        assert_eq!(
            (empty.verdict, empty.text.as_str()),
            (Verdict::Approved, "VERDICT: APPROVED\n")
        );
    }
}
