//! Benchmark: what `git pair review` adds to the reviewer CLI's own time, for the real pinned
//! `claude -p` and `codex exec` (`tests/e2e/package.json`) answering from the loopback model
//! server of the e2e tests (`tests/it/e2e/server.rs`), offline.
//!
//! Run: `cargo bench --bench reviewer` (release profile; optionally `ITERATIONS=15`,
//! `VENDORS=claude` or `VENDORS=codex`), or `tests/bench/reviewer.sh`. Needs
//! `npm ci --prefix tests/e2e` first.
//!
//! Per vendor, untimed: one capture review runs `git pair review` with a shim in front of the
//! CLI that records the exact argv, environment, working directory, schema file and prompt
//! git pair hands it. Then, interleaved (the order alternates every iteration, so load and
//! caches hit both alike), two things are timed on fresh repositories in the same state (one
//! coder round awaiting review, probe cache warm):
//!   direct:   the CLI itself, run with that captured argv, environment and prompt;
//!   git pair: `git pair review --json`, which builds its own prompt: the same text but for
//!             its run id and round marker (a fresh run each time) and the diff markers' nonce.
//! The server answers every model call with the same APPROVED JSON answer. Medians of both,
//! and the median of the per-iteration differences, are printed. Target: git pair adds at
//! most 50 ms to the CLI's own time; exit status 1 when missed. `GIT_PAIR_BIN=path` times
//! another build of git pair (an older one, for before/after figures) in the same harness.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a benchmark's output is its purpose

#[allow(dead_code)] // the tests' server: this benchmark uses only a fixed answer
#[path = "../tests/it/e2e/server.rs"]
mod server;

use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use server::{ModelServer, Reply};

/// What git pair may add to the CLI's own time.
const TARGET_MS: f64 = 50.0;

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "--list") {
        return ExitCode::SUCCESS;
    }
    let iterations = std::env::var("ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(11usize)
        .max(1);
    let vendors = std::env::var("VENDORS").unwrap_or_else(|_| "claude codex".to_owned());
    let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/node_modules/.bin");
    if !["claude", "codex"].iter().all(|b| cli.join(b).exists()) {
        eprintln!(
            "reviewer bench: the pinned CLIs are missing from {}: run npm ci --prefix tests/e2e",
            cli.display()
        );
        return ExitCode::from(2);
    }
    let server = ModelServer::start(
        Vec::new(),
        Some(Reply::Json(json!({"verdict": "APPROVED", "findings": []})).into()),
    );
    let bench = Bench::new(&cli, &server);
    println!(
        "git pair review vs the reviewer CLI alone, same answer from the loopback server; \
         {iterations} interleaved iterations, release build"
    );
    let mut met = true;
    for vendor in vendors.split_whitespace() {
        let figures = bench.vendor(vendor, iterations);
        met &= figures.report(vendor);
    }
    if met {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The hermetic home, the environment every command gets, and a counter for fresh repos.
struct Bench {
    root: tempfile::TempDir,
    home: PathBuf,
    path: OsString,
    cli: PathBuf,
    base_url: String,
    next: std::cell::Cell<usize>,
}

/// What git pair handed the CLI in the capture review.
struct Captured {
    argv: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    prompt: Vec<u8>,
    /// Arguments that named files git pair wrote (the schema), by index, with their copies.
    files: Vec<(usize, PathBuf)>,
    /// The index of the argument naming where codex writes its last message.
    output_file: Option<usize>,
    /// Where it ran, relative to the repository when inside it: the work tree itself (an
    /// empty path), or the run's snapshot directory under `.git/pair/reviewers/` (claude);
    /// `None` for a temporary snapshot outside any repository (codex).
    in_repo: Option<PathBuf>,
}

struct Figures {
    direct: Vec<Duration>,
    pair: Vec<Duration>,
    /// Each review's wall time less the reviewer's run as git pair timed it.
    own: Vec<Duration>,
}

impl Bench {
    fn new(cli: &Path, server: &ModelServer) -> Bench {
        let root = tempfile::tempdir().expect("temp dir");
        let home = root.path().join("home");
        std::fs::create_dir_all(home.join(".claude")).expect("claude config dir");
        std::fs::create_dir_all(home.join(".codex")).expect("codex home");
        std::fs::write(
            home.join(".codex/config.toml"),
            format!(
                "model_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
                server.url()
            ),
        )
        .expect("config.toml");
        let system = std::env::var_os("PATH").unwrap_or_default();
        let mut path = cli.as_os_str().to_owned();
        path.push(":");
        path.push(&system);
        Bench {
            home,
            path,
            cli: cli.to_owned(),
            base_url: server.url(),
            next: std::cell::Cell::new(0),
            root,
        }
    }

    /// A command with the hermetic environment and the given `PATH`.
    fn command(&self, program: &Path, dir: &Path, path: &OsString) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir).env_clear();
        if let Some(tmp) = std::env::var_os("TMPDIR") {
            cmd.env("TMPDIR", tmp);
        }
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Bench")
            .env("GIT_AUTHOR_EMAIL", "bench@example.com")
            .env("GIT_COMMITTER_NAME", "Bench")
            .env("GIT_COMMITTER_EMAIL", "bench@example.com")
            .env("CLAUDE_CONFIG_DIR", self.home.join(".claude"))
            .env("CODEX_HOME", self.home.join(".codex"))
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            .env("PATH", path)
            .env("ANTHROPIC_BASE_URL", &self.base_url)
            .env("ANTHROPIC_API_KEY", "test")
            .env("OPENAI_API_KEY", "test")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        cmd
    }

    fn pair(&self, repo: &Path, args: &[&str], path: &OsString) -> std::process::Output {
        let out = self
            .command(&pair_bin(), repo, path)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run git pair");
        assert!(
            out.status.success(),
            "git pair {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// `git args` in `repo`, its stdout.
    fn git_out(&self, repo: &Path, args: &[&str]) -> String {
        let out = self
            .command(Path::new("git"), repo, &self.path)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?} failed");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// How long the reviewer ran as git pair timed it (spawn to seen exit), read back from
    /// the round's review record with real git.
    fn recorded_cli_time(&self, repo: &Path) -> Duration {
        let run = self.git_out(
            repo,
            &["for-each-ref", "--format=%(refname)", "refs/pair/runs/"],
        );
        let run = run.trim();
        let names = self.git_out(repo, &["ls-tree", "--name-only", run, "records/"]);
        let review = names
            .lines()
            .rfind(|n| n.contains("-review-") && !n.contains("-review-dispatch-"))
            .expect("a review record");
        let record: serde_json::Value =
            serde_json::from_str(&self.git_out(repo, &["show", &format!("{run}:{review}")]))
                .expect("record JSON");
        let ms = record["reviewers"][0]["duration_ms"]
            .as_u64()
            .expect("duration_ms");
        Duration::from_millis(ms)
    }

    fn git(&self, repo: &Path, args: &[&str]) {
        let ok = self
            .command(Path::new("git"), repo, &self.path)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .expect("run git")
            .success();
        assert!(ok, "git {args:?} failed");
    }

    /// A fresh repository: one commit, a run reviewed by `vendor`, one coder round awaiting
    /// review, and the probe cache warm (a dry run).
    fn fresh(&self, vendor: &str) -> PathBuf {
        let n = self.next.get();
        self.next.set(n + 1);
        let repo = self.root.path().join(format!("repo-{vendor}-{n}"));
        std::fs::create_dir_all(&repo).expect("repo dir");
        self.git(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("README"), "hello\n").expect("README");
        self.git(&repo, &["add", "README"]);
        self.git(&repo, &["commit", "-q", "-m", "initial"]);
        self.pair(
            &repo,
            &["start", "--task", "add a greeting", "--reviewer", vendor],
            &self.path,
        );
        std::fs::write(repo.join("greet.txt"), "hello, world\n").expect("greet.txt");
        self.pair(
            &repo,
            &["coder-done", "--summary", "add a greeting"],
            &self.path,
        );
        self.pair(&repo, &["review", "--dry-run"], &self.path);
        repo
    }

    /// One untimed review through a shim that records what git pair hands the CLI.
    fn capture(&self, vendor: &str) -> Captured {
        let shim_dir = self.root.path().join(format!("shim-{vendor}"));
        let cap = self.root.path().join(format!("capture-{vendor}"));
        std::fs::create_dir_all(&shim_dir).expect("shim dir");
        std::fs::create_dir_all(&cap).expect("capture dir");
        let real = self.cli.join(vendor);
        let shim = shim_dir.join(vendor);
        std::fs::write(
            &shim,
            format!(
                "#!/bin/sh\ncap='{cap}'\nprintf '%s\\0' \"$@\" > \"$cap/argv\"\nenv -0 > \"$cap/env\"\npwd > \"$cap/pwd\"\ni=0\nfor a; do [ -f \"$a\" ] && cp \"$a\" \"$cap/file-$i\"; i=$((i+1)); done\ncat > \"$cap/stdin\"\nexec '{real}' \"$@\" < \"$cap/stdin\"\n",
                cap = cap.display(),
                real = real.display()
            ),
        )
        .expect("shim");
        std::process::Command::new("chmod")
            .args(["+x"])
            .arg(&shim)
            .status()
            .expect("chmod");
        let repo = self.fresh(vendor);
        let mut path = shim_dir.into_os_string();
        path.push(":");
        path.push(&self.path);
        // The dry run in `fresh` probed the real binary; the shim is probed now, untimed.
        self.pair(&repo, &["review", "--json"], &path);
        let split = |bytes: Vec<u8>| -> Vec<OsString> {
            bytes
                .split(|b| *b == 0)
                .filter(|s| !s.is_empty())
                .map(|s| OsString::from_vec(s.to_vec()))
                .collect()
        };
        let argv = split(std::fs::read(cap.join("argv")).expect("captured argv"));
        let env = split(std::fs::read(cap.join("env")).expect("captured env"))
            .into_iter()
            .filter_map(|kv| {
                let kv = kv.into_vec();
                let eq = kv.iter().position(|b| *b == b'=')?;
                Some((
                    OsString::from_vec(kv[..eq].to_vec()),
                    OsString::from_vec(kv[eq + 1..].to_vec()),
                ))
            })
            // The shim's own directory is not the CLI's.
            .map(|(k, v)| {
                if k == "PATH" {
                    (k, self.path.clone())
                } else {
                    (k, v)
                }
            })
            .filter(|(k, _)| k != "PWD" && k != "OLDPWD" && k != "SHLVL" && k != "_")
            .collect();
        let prompt = std::fs::read(cap.join("stdin")).expect("captured prompt");
        let pwd = std::fs::read_to_string(cap.join("pwd")).expect("captured pwd");
        let files = (0..argv.len())
            .filter_map(|i| {
                let copy = cap.join(format!("file-{i}"));
                copy.exists().then_some((i, copy))
            })
            .collect();
        let output_file = argv
            .iter()
            .position(|a| a == "--output-last-message")
            .map(|i| i + 1);
        Captured {
            argv,
            env,
            prompt,
            files,
            output_file,
            in_repo: Path::new(pwd.trim())
                .strip_prefix(&repo)
                .ok()
                .map(Path::to_path_buf),
        }
    }

    /// The CLI alone, as git pair ran it, on a repository in the same state; its wall time.
    fn direct(&self, vendor: &str, c: &Captured, repo: &Path) -> Duration {
        let dir = if let Some(relative) = &c.in_repo {
            // Where git pair ran it, in this repository: the CLI's own work there (claude
            // runs git where it starts) is the CLI's, not git pair's.
            let dir = repo.join(relative);
            if dir != repo {
                std::fs::create_dir_all(&dir).expect("snapshot dir");
                for f in ["README", "greet.txt"] {
                    std::fs::copy(repo.join(f), dir.join(f)).expect("copy");
                }
            }
            dir
        } else {
            // What git pair exports for codex: the snapshot's files, outside any repository.
            let dir = repo.with_extension("snapshot");
            std::fs::create_dir_all(&dir).expect("snapshot dir");
            for f in ["README", "greet.txt"] {
                std::fs::copy(repo.join(f), dir.join(f)).expect("copy");
            }
            dir
        };
        let mut argv = c.argv.clone();
        for (i, copy) in &c.files {
            argv[*i] = copy.clone().into_os_string();
        }
        if let Some(i) = c.output_file {
            argv[i] = dir.with_extension("last").into_os_string();
        }
        let mut cmd = Command::new(self.cli.join(vendor));
        cmd.args(&argv)
            .current_dir(&dir)
            .env_clear()
            .envs(c.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().expect("spawn the CLI");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&c.prompt).expect("write the prompt");
        drop(stdin);
        let out = child.wait_with_output().expect("wait for the CLI");
        let took = started.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("APPROVED"),
            "{vendor} alone failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        took
    }

    /// `git pair review --json` on a fresh repository; its wall time, and how much of it was
    /// git pair's own (the wall time less the reviewer's run as git pair timed it).
    fn review(&self, repo: &Path) -> (Duration, Duration) {
        let started = Instant::now();
        let out = self.pair(repo, &["review", "--json"], &self.path);
        let took = started.elapsed();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("review JSON");
        assert_eq!(v["verdict"], "APPROVED", "{v:#}");
        (took, took.saturating_sub(self.recorded_cli_time(repo)))
    }

    fn vendor(&self, vendor: &str, iterations: usize) -> Figures {
        eprintln!("{vendor}: capturing what git pair hands it, warming up…");
        let captured = self.capture(vendor);
        // Warm-up, untimed: node's and the disk's caches.
        let _ = self.direct(vendor, &captured, &self.fresh(vendor));
        let _ = self.review(&self.fresh(vendor));
        let mut figures = Figures {
            direct: Vec::new(),
            pair: Vec::new(),
            own: Vec::new(),
        };
        for i in 0..iterations {
            let (a, b) = (self.fresh(vendor), self.fresh(vendor));
            let direct = |f: &mut Figures| f.direct.push(self.direct(vendor, &captured, &a));
            let pair = |f: &mut Figures| {
                let (wall, own) = self.review(&b);
                f.pair.push(wall);
                f.own.push(own);
            };
            if i % 2 == 0 {
                direct(&mut figures);
                pair(&mut figures);
            } else {
                pair(&mut figures);
                direct(&mut figures);
            }
        }
        figures
    }
}

/// The git pair under test: this build's, unless `GIT_PAIR_BIN` names another.
fn pair_bin() -> PathBuf {
    std::env::var_os("GIT_PAIR_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_git-pair")),
        PathBuf::from,
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(v: Vec<f64>) -> f64 {
    quantile(v, 0.5)
}

/// The `q` quantile, interpolated between the two nearest samples.
fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let at = q * (v.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
}

impl Figures {
    /// Prints the medians and the verdict; whether the target holds.
    ///
    /// The CLI's own time varies by far more than 50 ms from one call to the next (a node
    /// process, a model turn, the machine's load), so the difference of the two medians is
    /// printed with its spread, and the target is judged on what git pair spends itself:
    /// each review's wall time less the reviewer's run as git pair timed it (spawn to seen
    /// exit), which holds everything git pair adds (probe lookup, snapshot, packet, records,
    /// the snapshot export, session lookup, the wait for the exit) and none of the CLI's noise.
    fn report(&self, vendor: &str) -> bool {
        let all = |v: &[Duration]| v.iter().copied().map(ms).collect::<Vec<_>>();
        let direct = median(all(&self.direct));
        let pair = median(all(&self.pair));
        let diffs: Vec<f64> = self
            .pair
            .iter()
            .zip(&self.direct)
            .map(|(p, d)| ms(*p) - ms(*d))
            .collect();
        let spread = quantile(diffs.clone(), 0.75) - quantile(diffs.clone(), 0.25);
        let own = median(all(&self.own));
        let met = own <= TARGET_MS;
        println!(
            "{vendor:<7} CLI alone median {direct:>7.1} ms | git pair review median {pair:>7.1} ms | \
             difference {:>6.1} ms (paired median {:>6.1} ms, IQR {spread:.0} ms)",
            pair - direct,
            median(diffs),
        );
        println!(
            "{vendor:<7} git pair's own time median {own:>5.1} ms (min {:.1}, max {:.1}): target <= {TARGET_MS:.0} ms: {}",
            quantile(all(&self.own), 0.0),
            quantile(all(&self.own), 1.0),
            if met { "met" } else { "MISSED" }
        );
        met
    }
}
