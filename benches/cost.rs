//! Benchmark driver for `src/cost` (run by `tests/bench/cost.sh` and `tests/bench/budget.sh`):
//! generates a realistic agent log corpus, prices one session the way `git pair cost --session
//! ID --json` does (cold process, no cache), and measures the cold parse throughput of one big
//! file.
//!
//! Usage:
//!   cost gen <dir> <bytes> [seed]        write <dir>/claude and <dir>/codex, print picks as JSON
//!   cost session <dir> <bytes> [seed]    write one Claude session (with subagents) of about
//!                                        <bytes> under <dir>/claude, print its id and files
//!   cost append <file> <bytes> [seed]    append about <bytes> of new turns to a Claude log
//!   cost price <session-id> [cache-dir]  price with CLAUDE_CONFIG_DIR / CODEX_HOME, print JSON
//!   cost throughput <file> [runs]        cold full parse of one Claude log, print MB/s
//!   cost timestamps [count]              ns per `Timestamp::parse` / format, per stamp shape

#![allow(clippy::print_stdout, clippy::print_stderr)] // a benchmark's output is its purpose

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use git_pair::cost::{Agent, LogRoots, Pricing, price_files, price_session};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let result = match args.first().map(String::as_str) {
        Some("gen") if args.len() >= 3 => generate(
            Path::new(&args[1]),
            args[2].parse().expect("bytes is a number"),
            args.get(3)
                .map_or(42, |s| s.parse().expect("seed is a number")),
        ),
        Some("price") if args.len() >= 2 => price(&args[1], args.get(2).map(Path::new)),
        Some("throughput") if args.len() >= 2 => throughput(
            Path::new(&args[1]),
            args.get(2).map_or(5, |s| s.parse().expect("runs")),
        ),
        Some("session") if args.len() >= 3 => one_session(
            Path::new(&args[1]),
            args[2].parse().expect("bytes is a number"),
            args.get(3)
                .map_or(42, |s| s.parse().expect("seed is a number")),
        ),
        Some("append") if args.len() >= 3 => append_turns(
            Path::new(&args[1]),
            args[2].parse().expect("bytes is a number"),
            args.get(3)
                .map_or(7, |s| s.parse().expect("seed is a number")),
        ),
        Some("timestamps") => timestamps(args.get(1).map_or(1_000_000, |s| {
            s.parse().expect("count is a number")
        })),
        // `cargo bench` without arguments: nothing to do.
        None => Ok(()),
        _ => Err(
            "usage: cost gen <dir> <bytes> [seed] | session <dir> <bytes> [seed] | append <file> <bytes> [seed] | price <id> [cache] | throughput <file> [runs] | timestamps [count]"
                .into(),
        ),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn price(session_id: &str, cache: Option<&Path>) -> Result<()> {
    let roots = LogRoots::from_env(|k| std::env::var(k).ok());
    let cost = price_session(&roots, session_id, &Pricing::builtin(), None, cache)?;
    println!("{}", serde_json::to_string(&cost)?);
    Ok(())
}

fn throughput(file: &Path, runs: usize) -> Result<()> {
    let bytes = std::fs::metadata(file)?.len() as f64;
    let pricing = Pricing::builtin();
    let mut best = f64::MAX;
    let mut total = 0.0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let cost = price_files(
            Agent::Claude,
            "bench",
            &[file.to_owned()],
            &pricing,
            None,
            None,
        )?;
        best = best.min(start.elapsed().as_secs_f64());
        total = cost.total_usd;
    }
    println!(
        "{{\"file\":{:?},\"mb\":{:.1},\"best_secs\":{:.4},\"mb_per_s\":{:.0},\"total_usd\":{}}}",
        file.display().to_string(),
        bytes / 1e6,
        best,
        bytes / 1e6 / best,
        total
    );
    Ok(())
}

/// Times `Timestamp::parse` on `count` distinct stamps of each shape the log readers meet
/// (Claude's `…:SS.mmmZ`, whole seconds, Codex-style offsets), and formatting; best of 5.
fn timestamps(count: usize) -> Result<()> {
    use git_pair::cost::Timestamp;
    let mut rng = Rng(7);
    let millis: Vec<i64> = (0..count)
        .map(|_| 1_700_000_000_000 + rng.below(200_000_000_000) as i64)
        .collect();
    type Shape = fn(i64) -> String;
    let shapes: [(&str, Shape); 3] = [
        ("millis_z", |ms| iso(ms - ms % 1000 + 1 + ms % 999)),
        ("seconds_z", |ms| iso(ms - ms % 1000)),
        ("offset", |ms| {
            let z = iso(ms - ms % 1000 + 1 + ms % 999);
            format!("{}+00:00", &z[..z.len() - 1])
        }),
    ];
    let best_ns = |f: &mut dyn FnMut() -> i64| {
        let mut best = f64::MAX;
        let mut check = 0;
        for _ in 0..5 {
            let start = Instant::now();
            check = std::hint::black_box(f());
            best = best.min(start.elapsed().as_secs_f64());
        }
        (best * 1e9 / count as f64, check)
    };
    let mut out = String::from("{");
    for (name, shape) in shapes {
        let texts: Vec<String> = millis.iter().map(|&ms| shape(ms)).collect();
        let (ns, sum) = best_ns(&mut || {
            texts
                .iter()
                .map(|t| Timestamp::parse(std::hint::black_box(t)).map_or(0, |t| t.0 & 1))
                .sum()
        });
        assert!(Timestamp::parse(&texts[0]).is_some(), "{name}");
        write!(out, "\"parse_{name}_ns\":{ns:.1},\"{name}_odd\":{sum},")?;
    }
    // The general ISO 8601 parser the calendar comes from, on the hot shape, for reference.
    let texts: Vec<String> = millis.iter().map(|&ms| shapes[0].1(ms)).collect();
    let (ns, _) = best_ns(&mut || {
        texts
            .iter()
            .map(|t| {
                std::hint::black_box(t)
                    .parse::<jiff::Timestamp>()
                    .map_or(0, |t| t.as_millisecond() & 1)
            })
            .sum()
    });
    write!(out, "\"jiff_parse_millis_z_ns\":{ns:.1},")?;
    let (ns, _) = best_ns(&mut || {
        millis
            .iter()
            .map(|&ms| Timestamp(std::hint::black_box(ms)).to_string().len() as i64)
            .sum()
    });
    write!(out, "\"format_ns\":{ns:.1},\"count\":{count}}}")?;
    println!("{out}");
    Ok(())
}

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Log-normal with the given median, for heavy-tailed sizes.
    fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        let (u1, u2) = (self.unit().max(1e-12), self.unit());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        median * (sigma * z).exp()
    }
    fn hex(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b"0123456789abcdef"[self.below(16) as usize]))
            .collect()
    }
    fn alnum(&mut self, n: usize) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..n)
            .map(|_| char::from(A[self.below(A.len() as u64) as usize]))
            .collect()
    }
    fn uuid(&mut self) -> String {
        format!(
            "{}-{}-4{}-8{}-{}",
            self.hex(8),
            self.hex(4),
            self.hex(3),
            self.hex(3),
            self.hex(12)
        )
    }
}

const WORDS: &[&str] = &[
    "fn",
    "let",
    "the",
    "error",
    "path",
    "config",
    "return",
    "match",
    "Some(x)",
    "None",
    "impl",
    "struct",
    "cargo",
    "test",
    "passed",
    "failed",
    "warning:",
    "src/lib.rs",
    "→",
    "résumé",
    "0x1f",
    "{",
    "}",
    "=>",
    "assert_eq!",
    "ok",
    "use",
    "std::io",
    "pub",
    "mod",
    "self",
    "review",
    "diff",
    "--git",
    "a/b",
    "✓",
];

/// JSON-string-safe text of about `len` bytes, with escaped newlines, quotes and tabs.
fn text(rng: &mut Rng, len: usize) -> String {
    let mut s = String::with_capacity(len + 16);
    while s.len() < len {
        s.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
        match rng.below(20) {
            0 => s.push_str("\\n"),
            1 => s.push_str("\\\""),
            2 => s.push_str("\\t"),
            _ => s.push(' '),
        }
    }
    s
}

struct Claude<'a> {
    rng: &'a mut Rng,
    session: String,
    cwd: String,
    model: &'static str,
    at_ms: i64,
    parent: String,
    context: u64,
    one_hour: bool,
    seen: Vec<(String, String)>,
}

const CLAUDE_MODELS: &[&str] = &[
    "claude-sonnet-4-5-20250929",
    "claude-opus-4-5-20251101",
    "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5-20251001",
    "claude-opus-4-1-20250805",
    "claude-sonnet-4-20250514",
];

fn iso(ms: i64) -> String {
    git_pair::cost::Timestamp(ms).to_string()
}

impl Claude<'_> {
    fn head(&mut self, kind: &str, sidechain: bool) -> String {
        let uuid = self.rng.uuid();
        self.at_ms += 500 + self.rng.below(20_000) as i64;
        let parent = std::mem::replace(&mut self.parent, uuid.clone());
        format!(
            r#""parentUuid":"{parent}","isSidechain":{sidechain},"userType":"external","cwd":"{}","sessionId":"{}","version":"2.0.76","gitBranch":"main","type":"{kind}","uuid":"{uuid}","timestamp":"{}""#,
            self.cwd,
            self.session,
            iso(self.at_ms)
        )
    }

    fn user_prompt(&mut self, out: &mut String) {
        let head = self.head("user", false);
        let body = {
            let n = 40 + self.rng.below(600) as usize;
            text(self.rng, n)
        };
        let _ = writeln!(
            out,
            r#"{{{head},"message":{{"role":"user","content":"{body}"}}}}"#
        );
    }

    fn tool_result(&mut self, out: &mut String, sidechain: bool) {
        let head = self.head("user", sidechain);
        let size = if self.rng.chance(0.05) {
            self.rng.lognormal(60_000.0, 0.8)
        } else {
            self.rng.lognormal(1_500.0, 1.2)
        } as usize;
        let body = text(self.rng, size.min(400_000));
        let id = self.rng.alnum(24);
        let stdout = text(self.rng, 150);
        let _ = writeln!(
            out,
            r#"{{{head},"message":{{"role":"user","content":[{{"tool_use_id":"toolu_{id}","type":"tool_result","content":"{body}","is_error":false}}]}},"toolUseResult":{{"stdout":"{stdout}","stderr":"","interrupted":false,"isImage":false}}}}"#
        );
    }

    /// A Task tool result: its `toolUseResult` carries the subagent's own `usage` (a user line
    /// the usage marker selects, but with nothing to price).
    fn task_result(&mut self, out: &mut String) {
        let head = self.head("user", false);
        let body = text(self.rng, 800);
        let _ = writeln!(
            out,
            r#"{{{head},"message":{{"role":"user","content":[{{"tool_use_id":"toolu_{}","type":"tool_result","content":[{{"type":"text","text":"{body}"}}]}}]}},"toolUseResult":{{"status":"completed","content":[{{"type":"text","text":"done"}}],"totalDurationMs":51234,"totalTokens":48211,"totalToolUseCount":7,"usage":{{"input_tokens":5,"cache_creation_input_tokens":1500,"cache_read_input_tokens":45000,"output_tokens":1200,"service_tier":"standard"}}}}}}"#,
            self.rng.alnum(24)
        );
    }

    /// One API response, written as one line per content block sharing `message.id` and
    /// `requestId`; the streamed lines carry a partial `output_tokens`, the last the full one.
    fn assistant(&mut self, out: &mut String, sidechain: bool, agent_id: Option<&str>) {
        let msg = format!("msg_01{}", self.rng.alnum(22));
        let req = format!("req_011{}", self.rng.alnum(21));
        let added = 500 + self.rng.below(12_000);
        self.context += added;
        if self.context > 170_000 {
            self.context = 20_000 + self.rng.below(10_000); // compaction
        }
        let (w1, w5) = if self.one_hour {
            (added, 0)
        } else {
            (0, added)
        };
        let output = 20 + self.rng.lognormal(300.0, 1.0) as u64;
        let input = 1 + self.rng.below(9);
        let read = self.context - added;
        let mut blocks: Vec<String> = Vec::new();
        if self.rng.chance(0.6) {
            let thinking = {
                let n = self.rng.lognormal(600.0, 0.8) as usize;
                text(self.rng, n)
            };
            let signature = {
                let n = 300 + self.rng.below(1500) as usize;
                self.rng.alnum(n)
            };
            blocks.push(format!(
                r#"{{"type":"thinking","thinking":"{thinking}","signature":"{signature}"}}"#
            ));
        }
        if self.rng.chance(0.7) {
            blocks.push(format!(r#"{{"type":"text","text":"{}"}}"#, {
                let n = self.rng.lognormal(300.0, 1.0) as usize;
                text(self.rng, n)
            }));
        }
        if blocks.is_empty() || self.rng.chance(0.7) {
            let input_json = if self.rng.chance(0.1) {
                format!(r#"{{"file_path":"/w/src/x.rs","content":"{}"}}"#, {
                    let n = self.rng.lognormal(8_000.0, 1.0) as usize;
                    text(self.rng, n)
                })
            } else {
                format!(
                    r#"{{"command":"{}","description":"run"}}"#,
                    text(self.rng, 60)
                )
            };
            blocks.push(format!(
                r#"{{"type":"tool_use","id":"toolu_{}","name":"Bash","input":{input_json}}}"#,
                self.rng.alnum(24)
            ));
        }
        let agent = agent_id
            .map(|a| format!(r#","agentId":"{a}""#))
            .unwrap_or_default();
        let n = blocks.len();
        for (i, block) in blocks.iter().enumerate() {
            let head = self.head("assistant", sidechain);
            let out_tokens = if i + 1 == n {
                output
            } else {
                1 + self.rng.below(30)
            };
            let stop = if i + 1 == n { r#""tool_use""# } else { "null" };
            let line = format!(
                r#"{{{head}{agent},"message":{{"id":"{msg}","type":"message","role":"assistant","model":"{}","content":[{block}],"stop_reason":{stop},"stop_sequence":null,"usage":{{"input_tokens":{input},"cache_creation_input_tokens":{added},"cache_read_input_tokens":{read},"cache_creation":{{"ephemeral_5m_input_tokens":{w5},"ephemeral_1h_input_tokens":{w1}}},"output_tokens":{out_tokens},"service_tier":"standard"}}}},"requestId":"{req}"}}"#,
                self.model
            );
            out.push_str(&line);
            out.push('\n');
            // Remember final lines (small ones) for sidechain/resume replays.
            if i + 1 == n && !sidechain && line.len() < 4096 {
                self.seen.push((msg.clone(), line));
            }
        }
    }

    fn extras(&mut self, out: &mut String) {
        match self.rng.below(40) {
            0 => {
                let head = self.head("system", false);
                let _ = writeln!(
                    out,
                    r#"{{{head},"subtype":"compact_boundary","content":"Conversation compacted","level":"info"}}"#
                );
            }
            1 => {
                let _ = writeln!(
                    out,
                    r#"{{"type":"file-history-snapshot","messageId":"{}","snapshot":{{"trackedFileBackups":{{"src/lib.rs":{{"backupFileName":"{}@v2","version":2}}}},"timestamp":"{}"}},"isSnapshotUpdate":false}}"#,
                    self.rng.uuid(),
                    self.rng.hex(16),
                    iso(self.at_ms)
                );
            }
            2 => {
                let head = self.head("assistant", false);
                let _ = writeln!(
                    out,
                    r#"{{{head},"message":{{"id":"{}","type":"message","role":"assistant","model":"<synthetic>","content":[{{"type":"text","text":"API Error: 529 overloaded"}}],"stop_reason":"stop_sequence","usage":{{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}},"isApiErrorMessage":true}}"#,
                    self.rng.uuid()
                );
            }
            _ => {}
        }
    }
}

struct ClaudeSession {
    main: String,
    subagents: Vec<(String, String)>,
}

fn claude_session(
    rng: &mut Rng,
    session: &str,
    cwd: &str,
    bytes: usize,
    subagents: bool,
    replays: bool,
) -> ClaudeSession {
    let model = CLAUDE_MODELS[rng.below(CLAUDE_MODELS.len() as u64) as usize];
    let one_hour = rng.chance(0.3);
    let start = 1_767_225_600_000 + rng.below(300 * 86_400_000) as i64; // during 2026
    let mut c = Claude {
        rng,
        session: session.to_owned(),
        cwd: cwd.to_owned(),
        model,
        at_ms: start,
        parent: String::new(),
        context: 15_000,
        one_hour,
        seen: Vec::new(),
    };
    let mut main = String::with_capacity(bytes + 64 * 1024);
    let mut subs = Vec::new();
    let _ = writeln!(
        main,
        r#"{{"type":"summary","summary":"Session {session}","leafUuid":"{}"}}"#,
        c.rng.uuid()
    );
    while main.len() < bytes {
        c.user_prompt(&mut main);
        for _ in 0..1 + c.rng.below(6) {
            c.assistant(&mut main, false, None);
            c.tool_result(&mut main, false);
            c.extras(&mut main);
        }
        if subagents && c.rng.chance(0.15) && subs.len() < 8 {
            let agent_id = c.rng.hex(8);
            let mut sub = String::new();
            let saved = c.parent.clone();
            for _ in 0..2 + c.rng.below(10) {
                c.assistant(&mut sub, true, Some(&agent_id));
                c.tool_result(&mut sub, true);
            }
            c.parent = saved;
            subs.push((format!("agent-{agent_id}.jsonl"), sub));
            c.task_result(&mut main);
        }
        if replays && c.rng.chance(0.2) && !c.seen.is_empty() {
            // A sidechain replays an earlier response under a new request id.
            // It is written later, under a new line uuid and request id.
            let (_, line) = c.seen[c.rng.below(c.seen.len() as u64) as usize].clone();
            c.at_ms += 1000;
            let stamp = |line: &str| {
                let from = line.find(r#""timestamp":""#).map_or(0, |i| i + 13);
                let to = line[from..].find('"').map_or(from, |i| from + i);
                (from, to)
            };
            let (from, to) = stamp(&line);
            let replay = format!("{}{}{}", &line[..from], iso(c.at_ms), &line[to..])
                .replacen(r#""isSidechain":false"#, r#""isSidechain":true"#, 1)
                .replacen(r#""uuid":""#, r#""uuid":"r"#, 1)
                .replacen(r#""requestId":"req_011"#, r#""requestId":"req_099"#, 1);
            main.push_str(&replay);
            main.push('\n');
        }
        c.assistant(&mut main, false, None);
    }
    ClaudeSession {
        main,
        subagents: subs,
    }
}

fn codex_rollout(rng: &mut Rng, id: &str, bytes: usize) -> (i64, String) {
    let models = [
        "gpt-5-codex",
        "gpt-5.1-codex",
        "gpt-5.1-codex-max",
        "gpt-5.2",
        "gpt-5.1-codex-mini",
    ];
    let model = models[rng.below(models.len() as u64) as usize];
    let start = 1_767_225_600_000 + rng.below(300 * 86_400_000) as i64;
    let mut at = start;
    let mut out = String::with_capacity(bytes + 64 * 1024);
    let instructions = text(rng, 12_000);
    let _ = writeln!(
        out,
        r#"{{"timestamp":"{}","type":"session_meta","payload":{{"id":"{id}","timestamp":"{}","cwd":"/w/repo","originator":"codex_cli_rs","cli_version":"0.63.0","instructions":null,"source":"cli","model_provider":"openai","base_instructions":{{"text":"{instructions}"}},"git":{{"commit_hash":"{}","branch":"main"}}}}}}"#,
        iso(at),
        iso(at),
        rng.hex(40)
    );
    let (mut input, mut cached, mut output, mut reasoning) = (0u64, 0u64, 0u64, 0u64);
    while out.len() < bytes {
        at += 1000 + rng.below(30_000) as i64;
        let _ = writeln!(
            out,
            r#"{{"timestamp":"{}","type":"turn_context","payload":{{"cwd":"/w/repo","approval_policy":"on-request","sandbox_policy":{{"type":"workspace-write"}},"model":"{model}","effort":"medium","summary":"auto"}}}}"#,
            iso(at)
        );
        let _ = writeln!(
            out,
            r#"{{"timestamp":"{}","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{}"}}]}}}}"#,
            iso(at),
            text(rng, 200)
        );
        for _ in 0..1 + rng.below(8) {
            at += 500 + rng.below(10_000) as i64;
            let _ = writeln!(
                out,
                r#"{{"timestamp":"{}","type":"response_item","payload":{{"type":"reasoning","summary":[{{"type":"summary_text","text":"**Checking**"}}],"content":null,"encrypted_content":"{}"}}}}"#,
                iso(at),
                {
                    let n = 1000 + rng.below(5000) as usize;
                    rng.alnum(n)
                }
            );
            let call = rng.alnum(24);
            let _ = writeln!(
                out,
                r#"{{"timestamp":"{}","type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"command\":[\"bash\",\"-lc\",\"rg foo\"]}}","call_id":"call_{call}"}}}}"#,
                iso(at)
            );
            let size = rng.lognormal(2_000.0, 1.3) as usize;
            let _ = writeln!(
                out,
                r#"{{"timestamp":"{}","type":"response_item","payload":{{"type":"function_call_output","call_id":"call_{call}","output":"{}"}}}}"#,
                iso(at),
                text(rng, size.min(300_000))
            );
            let prompt = 8_000 + rng.below(60_000);
            let hit = prompt * (50 + rng.below(50)) / 100;
            let out_tokens = 50 + rng.below(2_000);
            let r = out_tokens / 2;
            let (li, lc, lo, lr) = (prompt, hit, out_tokens, r);
            input += li;
            cached += lc;
            output += lo;
            reasoning += lr;
            let usage = |i: u64, c: u64, o: u64, r: u64| {
                format!(
                    r#"{{"input_tokens":{i},"cached_input_tokens":{c},"output_tokens":{o},"reasoning_output_tokens":{r},"total_tokens":{}}}"#,
                    i + o
                )
            };
            let line = format!(
                r#"{{"timestamp":"{}","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{},"last_token_usage":{},"model_context_window":272000}},"rate_limits":{{"primary":{{"used_percent":12.0,"window_minutes":300}}}}}}}}"#,
                iso(at),
                usage(input, cached, output, reasoning),
                usage(li, lc, lo, lr)
            );
            out.push_str(&line);
            out.push('\n');
            if rng.chance(0.3) {
                out.push_str(&line); // re-emitted unchanged
                out.push('\n');
            }
        }
        let _ = writeln!(
            out,
            r#"{{"timestamp":"{}","type":"event_msg","payload":{{"type":"agent_message","message":"{}"}}}}"#,
            iso(at),
            text(rng, 300)
        );
    }
    (start, out)
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)?;
    Ok(())
}

struct Corpus {
    claude: PathBuf,
    codex: PathBuf,
    projects: Vec<String>,
    written: u64,
    files: u64,
}

impl Corpus {
    fn put(&mut self, path: &Path, text: &str) -> Result<()> {
        write(path, text)?;
        self.written += text.len() as u64;
        self.files += 1;
        Ok(())
    }

    /// Writes one Claude session (main log and subagents); returns its id and size.
    fn claude(
        &mut self,
        rng: &mut Rng,
        bytes: usize,
        subagents: bool,
        replays: bool,
    ) -> Result<(String, u64)> {
        let id = rng.uuid();
        let cwd = self.projects[rng.below(self.projects.len() as u64) as usize].clone();
        let project = self.claude.join(cwd.replace(['/', '_', '.'], "-"));
        let s = claude_session(rng, &id, &cwd, bytes, subagents, replays);
        let mut total = s.main.len() as u64;
        self.put(&project.join(format!("{id}.jsonl")), &s.main)?;
        for (name, text) in &s.subagents {
            total += text.len() as u64;
            self.put(&project.join(&id).join("subagents").join(name), text)?;
        }
        Ok((id, total))
    }

    fn codex(&mut self, rng: &mut Rng, bytes: usize) -> Result<String> {
        let id = format!(
            "019a{}-{}-7{}-8{}-{}",
            rng.hex(4),
            rng.hex(4),
            rng.hex(3),
            rng.hex(3),
            rng.hex(12)
        );
        let (start, text) = codex_rollout(rng, &id, bytes);
        let day = iso(start);
        let (y, m, d) = (&day[0..4], &day[5..7], &day[8..10]);
        let stamp = day[..19].replace(':', "-");
        let path = self
            .codex
            .join(y)
            .join(m)
            .join(d)
            .join(format!("rollout-{stamp}-{id}.jsonl"));
        self.put(&path, &text)?;
        Ok(id)
    }
}

/// Writes a corpus of at least `target` bytes and prints the sessions the benchmark uses.
fn generate(dir: &Path, target: u64, seed: u64) -> Result<()> {
    let mut rng = Rng(seed.max(1));
    let mut corpus = Corpus {
        claude: dir.join("claude/projects"),
        codex: dir.join("codex/sessions"),
        projects: (0..60)
            .map(|i| format!("/home/dev/work/project_{i}"))
            .collect(),
        written: 0,
        files: 0,
    };
    // The sessions the benchmark prices: a large one (~100 MB main log, used for the
    // throughput figure too), a typical one, and one with sidechain replays.
    let (large, large_bytes) = corpus.claude(&mut rng, 100_000_000, true, false)?;
    let (typical, typical_bytes) = corpus.claude(&mut rng, 400_000, true, false)?;
    let (replayed, _) = corpus.claude(&mut rng, 400_000, true, true)?;
    for _ in 0..4 {
        let bytes = 20_000_000 + rng.below(40_000_000) as usize;
        let replays = rng.chance(0.5);
        corpus.claude(&mut rng, bytes, true, replays)?;
    }
    let codex = corpus.codex(&mut rng, 2_000_000)?;
    for _ in 0..900 {
        let bytes = rng.lognormal(70_000.0, 1.0).min(8e6) as usize;
        corpus.codex(&mut rng, bytes)?;
    }
    while corpus.written < target {
        let bytes = rng.lognormal(70_000.0, 1.0).min(8e6) as usize;
        let (subagents, replays) = (rng.chance(0.1), rng.chance(0.1));
        corpus.claude(&mut rng, bytes, subagents, replays)?;
    }
    let main_file = find_main(&corpus.claude, &large)?;
    println!(
        "{{\"bytes\":{},\"files\":{},\"large\":\"{large}\",\"large_bytes\":{large_bytes},\"large_main\":{:?},\"typical\":\"{typical}\",\"typical_bytes\":{typical_bytes},\"replayed\":\"{replayed}\",\"codex\":\"{codex}\"}}",
        corpus.written,
        corpus.files,
        main_file.display().to_string(),
    );
    Ok(())
}

/// Writes one Claude session of about `bytes` (main log plus subagents) under
/// `<dir>/claude/projects`, and prints its id, main file and size.
fn one_session(dir: &Path, bytes: usize, seed: u64) -> Result<()> {
    let mut rng = Rng(seed.max(1));
    let mut corpus = Corpus {
        claude: dir.join("claude/projects"),
        codex: dir.join("codex/sessions"),
        projects: vec!["/home/dev/work/budget".to_owned()],
        written: 0,
        files: 0,
    };
    let (id, total) = corpus.claude(&mut rng, bytes, true, false)?;
    let main_file = find_main(&corpus.claude, &id)?;
    println!(
        "{{\"id\":\"{id}\",\"bytes\":{total},\"files\":{},\"main\":{:?}}}",
        corpus.files,
        main_file.display().to_string()
    );
    Ok(())
}

/// Appends about `bytes` of new turns (assistant responses and tool results, fresh message
/// ids) to the Claude log `file`, as an agent does between two rounds.
fn append_turns(file: &Path, bytes: usize, seed: u64) -> Result<()> {
    use std::io::Write as _;
    let mut rng = Rng(seed.max(1) ^ std::time::UNIX_EPOCH.elapsed()?.as_nanos() as u64);
    let mut c = Claude {
        rng: &mut rng,
        session: "appended".to_owned(),
        cwd: "/home/dev/work/budget".to_owned(),
        model: CLAUDE_MODELS[0],
        at_ms: 1_800_000_000_000,
        parent: String::new(),
        context: 15_000,
        one_hour: false,
        seen: Vec::new(),
    };
    let mut out = String::new();
    while out.len() < bytes {
        c.assistant(&mut out, false, None);
        let head = c.head("user", false);
        let _ = writeln!(
            out,
            r#"{{{head},"message":{{"role":"user","content":[{{"type":"tool_result","content":"{}"}}]}}}}"#,
            text(c.rng, 300)
        );
    }
    std::fs::OpenOptions::new()
        .append(true)
        .open(file)?
        .write_all(out.as_bytes())?;
    Ok(())
}

fn find_main(projects: &Path, id: &str) -> Result<PathBuf> {
    for entry in std::fs::read_dir(projects)? {
        let candidate = entry?.path().join(format!("{id}.jsonl"));
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(format!("session {id} not written").into())
}
