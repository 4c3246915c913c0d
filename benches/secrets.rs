//! Benchmark: the secret scanner on generated ~10 MB unified diffs, three of them:
//! - code where 1 line in 30 mentions a keyword (`token`, `auth`, `password`, a URL…);
//! - keyword-heavy code, 7 lines in 25, still without a secret;
//! - the keyword-heavy code with 1 line in 4 a look-alike (commit ids, hashes, UUIDs,
//!   placeholders, `${VAR}` URLs) and a real-shaped secret every ~500 KB.
//!
//! Prints the median (and the fastest, useful on a shared machine) of several runs, in ms and
//! MB/s, for `scan_diff`, `redact_diff` and `scan`. Secrets are assembled at run time: this
//! file holds none.
//!
//! Run: `cargo bench --bench secrets`.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use git_pair::secrets::Scanner;

const TARGET_BYTES: usize = 10 * 1024 * 1024;
const RUNS: usize = 11;

struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let a = alphabet.as_bytes();
        (0..n).map(|_| char::from(a[self.below(a.len())])).collect()
    }
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &str = "0123456789abcdef";

/// Ordinary source lines; the last `KEYWORD_LINES` mention tokens, auth, passwords or URLs.
const CODE: &[&str] = &[
    "    let mut out = Vec::with_capacity(items.len());",
    "    for (i, item) in items.iter().enumerate() {",
    "        if item.is_empty() { continue; }",
    "        out.push(format!(\"{i}: {item}\"));",
    "    }",
    "fn parse_header(line: &str) -> Option<(String, String)> {",
    "    let (name, value) = line.split_once(':')?;",
    "    Some((name.trim().to_owned(), value.trim().to_owned()))",
    "}",
    "// Returns the number of bytes written so far.",
    "import { useEffect, useState } from 'react';",
    "export default function App({ children }) {",
    "  const [state, setState] = useState(null);",
    "  return <div className=\"app\">{children}</div>;",
    "def handle(request, *args, **kwargs):",
    "    logger.info(\"handling %s\", request.path)",
    "    return JsonResponse({\"ok\": True})",
    "",
    // Lines with keywords from here on.
    "    const token = await getAccessToken(credentials);",
    "    auth_header = build_auth_header(session)",
    "    if password is None: raise ValueError(\"missing password\")",
    "See https://docs.rs/regex/latest/regex/ for the syntax.",
    "    let tokenizer = Tokenizer::new(&config.vocab_path)?;",
    "    # Read the secret from the environment, never from the repository.",
    "  SECRET_KEY: ${{ secrets.SECRET_KEY }}",
];
const KEYWORD_LINES: usize = 7;

fn look_alike(g: &mut Gen) -> String {
    match g.below(14) {
        0 => format!("commit {}", g.pick(HEX, 40)),
        1 => format!("    \"sha\": \"{}\",", g.pick(HEX, 40)),
        2 => format!(
            "request_id: {}-{}-{}-{}-{}",
            g.pick(HEX, 8),
            g.pick(HEX, 4),
            g.pick(HEX, 4),
            g.pick(HEX, 4),
            g.pick(HEX, 12)
        ),
        3 => format!("{}  dist/app-{}.tar.gz", g.pick(HEX, 64), g.below(100)),
        4 => format!("secret_sha256 = \"{}\"", g.pick(HEX, 64)),
        5 => "password=changeme".to_owned(),
        6 => "token=${TOKEN}".to_owned(),
        7 => "Authorization: Bearer <token>".to_owned(),
        8 => "api_key=example-key-here".to_owned(),
        9 => "const authenticationTokenProvider = createProvider()".to_owned(),
        10 => [
            "DATABASE_URL=postgres://app:${DB_PASSWORD}@db",
            &g.below(9).to_string(),
            "/app",
        ]
        .concat(),
        11 => "see https://github.com/org/repo/blob/main/README.md".to_owned(),
        12 => format!("auth_request_id = \"{}\"", g.pick(HEX, 32)),
        _ => "tokens = self.tokenizer.encode(text)".to_owned(),
    }
}

fn secret(g: &mut Gen) -> String {
    match g.below(4) {
        0 => format!("GITHUB_TOKEN={}", ["ghp_", &g.pick(ALNUM, 36)].concat()),
        1 => format!("Authorization: Bearer {}", g.pick(ALNUM, 40)),
        2 => format!(
            "AWS_ACCESS_KEY_ID={}",
            ["AKIA", &g.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)].concat()
        ),
        _ => format!("DB_PASSWORD={}", g.pick(ALNUM, 24)),
    }
}

/// Which lines a generated diff holds.
#[derive(Clone, Copy, PartialEq)]
enum Mix {
    /// Code lines, 1 in 30 with a keyword.
    FewKeywords,
    /// Code lines drawn evenly from `CODE` (7 in 25 with a keyword).
    ManyKeywords,
    /// `ManyKeywords`, with 1 line in 4 a look-alike and a secret every ~500 KB.
    LookAlikes,
}

/// A git-style diff of about `TARGET_BYTES` of the given mix.
fn diff(mix: Mix) -> String {
    let dense = mix == Mix::LookAlikes;
    let plain = CODE.len() - KEYWORD_LINES;
    let mut g = Gen(0x2545_f491_4f6c_dd1d);
    let mut out = String::with_capacity(TARGET_BYTES + 4096);
    let mut file = 0;
    let mut next_secret = 500_000;
    while out.len() < TARGET_BYTES {
        file += 1;
        let path = format!("src/module_{file}/file_{}.rs", g.below(1000));
        out.push_str(&format!(
            "diff --git a/{path} b/{path}\nindex {}..{} 100644\n--- a/{path}\n+++ b/{path}\n",
            g.pick(HEX, 7),
            g.pick(HEX, 7)
        ));
        for hunk in 0..4 {
            let lines = 30;
            out.push_str(&format!(
                "@@ -{0},{lines} +{0},{lines} @@ fn f{hunk}()\n",
                1 + hunk * 100
            ));
            for _ in 0..lines {
                let marker = match g.below(3) {
                    0 => '+',
                    1 => '-',
                    _ => ' ',
                };
                let text = if dense && out.len() >= next_secret && marker == '+' {
                    next_secret += 500_000;
                    secret(&mut g)
                } else if dense && g.below(4) == 0 {
                    look_alike(&mut g)
                } else if mix == Mix::FewKeywords && g.below(30) != 0 {
                    CODE[g.below(plain)].to_owned()
                } else if mix == Mix::FewKeywords {
                    CODE[plain + g.below(KEYWORD_LINES)].to_owned()
                } else {
                    CODE[g.below(CODE.len())].to_owned()
                };
                out.push(marker);
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
    out
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn report(label: &str, bytes: usize, mut run: impl FnMut() -> usize) {
    let mut times = Vec::with_capacity(RUNS);
    let mut findings = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        findings = run();
        times.push(t.elapsed());
    }
    let fastest = times.iter().min().copied().unwrap_or_default();
    let m = median(times);
    let mb_s = |d: Duration| bytes as f64 / 1e6 / d.as_secs_f64();
    println!(
        "  {label:<26} {:>7.1} ms {:>5.0} MB/s   fastest {:>6.1} ms {:>5.0} MB/s   ({findings} findings)",
        m.as_secs_f64() * 1e3,
        mb_s(m),
        fastest.as_secs_f64() * 1e3,
        mb_s(fastest),
    );
}

fn main() {
    let t = Instant::now();
    let scanner = Scanner::builtin();
    // The shipped table compiles on first use.
    assert!(!scanner.kinds().is_empty());
    println!(
        "secret scanner, median of {RUNS} runs (table compiled in {:.1} ms):",
        t.elapsed().as_secs_f64() * 1e3
    );
    let corpora = [
        (
            "code, 1 line in 30 with a keyword, no secret",
            diff(Mix::FewKeywords),
        ),
        (
            "code, 7 lines in 25 with a keyword, no secret",
            diff(Mix::ManyKeywords),
        ),
        (
            "same + 1 line in 4 a look-alike, 20 secrets",
            diff(Mix::LookAlikes),
        ),
    ];
    for (name, text) in corpora {
        let mb = text.len() as f64 / 1e6;
        println!("{name} ({mb:.1} MB):");
        report("scan_diff", text.len(), || {
            scanner.scan_diff(text.as_bytes()).len()
        });
        report("redact_diff", text.len(), || {
            scanner.redact_diff(&text).1.len()
        });
        report("scan (one plain file)", text.len(), || {
            scanner.scan("packet.txt", text.as_bytes()).len()
        });
    }
}
