//! End to end through the real, pinned vendor CLIs (`tests/e2e/package.json`): `git pair`
//! drives `claude -p`, `codex exec`, `gemini -p`, `qwen`, `opencode run` and `copilot`,
//! which talk to the loopback [`server::ModelServer`]. Each test gets its own HOME (and so
//! its own Claude config dir, Codex home, `~/.gemini`, `~/.qwen`, OpenCode data dir and
//! `~/.copilot`); nothing leaves 127.0.0.1.
//! Without the pinned CLIs a test says so on one line and passes, unless
//! `PAIR_E2E_REQUIRED=1` (CI), where a missing CLI fails it.

mod acp;
mod claude;
mod codex;
mod compaction;
mod copilot;
mod gemini;
mod hooks;
mod opencode;
mod probe;
mod qwen;
pub mod server;

use std::path::{Path, PathBuf};

use crate::common::{Output, TestEnv, pair_bin, run, system_bin};
use server::{ModelServer, Step};

/// The directory holding the pinned `claude` and `codex`, or `None` (after saying why) when
/// they are not installed and not required.
pub fn cli_dir() -> Option<PathBuf> {
    cli_dir_with(&["claude", "codex"])
}

/// [`cli_dir`] for the pinned CLIs named.
pub fn cli_dir_with(binaries: &[&str]) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/node_modules/.bin");
    let present = binaries.iter().all(|b| dir.join(b).exists());
    if present {
        return Some(dir);
    }
    if std::env::var("PAIR_E2E_REQUIRED").is_ok_and(|v| v == "1") {
        panic!(
            "e2e: the pinned CLIs are missing from {} (PAIR_E2E_REQUIRED=1): run npm ci --prefix tests/e2e",
            dir.display()
        );
    }
    // Said once per test process, uncaptured, so a local run shows it.
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "e2e: npm ci --prefix tests/e2e first; skipped"
        );
    });
    None
}

/// Which vendor a test drives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Vendor {
    Claude,
    Codex,
    Gemini,
    Qwen,
    OpenCode,
    Copilot,
}

impl Vendor {
    /// The realization's name, which is also its binary's.
    pub fn name(self) -> &'static str {
        match self {
            Vendor::Claude => "claude",
            Vendor::Codex => "codex",
            Vendor::Gemini => "gemini",
            Vendor::Qwen => "qwen",
            Vendor::OpenCode => "opencode",
            Vendor::Copilot => "copilot",
        }
    }
}

/// The OpenCode configuration the tests give it (`OPENCODE_CONFIG_CONTENT`): one
/// OpenAI-compatible provider at the server, its model the default.
pub fn opencode_config(url: &str) -> String {
    serde_json::json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "mock",
            "options": {"baseURL": format!("{url}/v1"), "apiKey": "test"},
            "models": {"mock-model": {"name": "mock-model"}}}},
        "model": "mock/mock-model",
        "autoupdate": false,
        "share": "disabled"
    })
    .to_string()
}

/// A hermetic repository, a model server, and the pinned CLIs on `PATH`.
pub struct E2e {
    pub env: TestEnv,
    pub server: ModelServer,
    pub vendor: Vendor,
    path: String,
    extra: Vec<(String, String)>,
}

impl E2e {
    /// A repository with one commit, a run started with `--reviewer <vendor>`, and a server
    /// playing `script` (then `fallback`). `None` when the CLIs are not installed.
    pub fn new(vendor: Vendor, script: Vec<Step>, fallback: Option<Step>) -> Option<E2e> {
        let cli = match vendor {
            Vendor::Claude | Vendor::Codex => cli_dir()?,
            other => cli_dir_with(&[other.name()])?,
        };
        let env = TestEnv::new();
        let server = ModelServer::start(script, fallback);
        let path = format!(
            "{}:{}:{}",
            cli.display(),
            pair_bin().display(),
            system_bin().display()
        );
        let codex_home = env.home.join(".codex");
        std::fs::create_dir_all(&codex_home).expect("codex home");
        std::fs::create_dir_all(env.home.join(".claude")).expect("claude config dir");
        // Gemini CLI and Qwen Code take their auth type from the user's settings: an API key
        // (Gemini's at GOOGLE_GEMINI_BASE_URL, Qwen's OpenAI-compatible one at OPENAI_BASE_URL).
        for (dir, auth) in [(".gemini", "gemini-api-key"), (".qwen", "openai")] {
            std::fs::create_dir_all(env.home.join(dir)).expect("settings dir");
            let settings = serde_json::json!({"security": {"auth": {"selectedType": auth}}});
            std::fs::write(
                env.home.join(dir).join("settings.json"),
                settings.to_string(),
            )
            .expect("settings.json");
        }
        let e2e = E2e {
            env,
            server,
            vendor,
            path,
            extra: Vec::new(),
        };
        e2e.codex_config(4, 4, 300_000);
        Some(e2e)
    }

    /// Writes `$CODEX_HOME/config.toml`: the mock provider at this server, with Codex's own
    /// retry counts and stream idle timeout.
    pub fn codex_config(&self, request_retries: u32, stream_retries: u32, idle_ms: u64) {
        self.codex_config_with_model(request_retries, stream_retries, idle_ms, None);
    }

    /// [`Self::codex_config`] with `model = …` set (Codex's own default otherwise).
    pub fn codex_config_with_model(
        &self,
        request_retries: u32,
        stream_retries: u32,
        idle_ms: u64,
        model: Option<&str>,
    ) {
        let model = model.map_or(String::new(), |m| format!("model = \"{m}\"\n"));
        let text = format!(
            "{model}model_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = {request_retries}\nstream_max_retries = {stream_retries}\nstream_idle_timeout_ms = {idle_ms}\n",
            self.server.url()
        );
        std::fs::write(self.env.home.join(".codex/config.toml"), text).expect("config.toml");
    }

    /// Adds an environment variable to every later `git pair` command.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.extra.push((key.to_owned(), value.to_owned()));
    }

    /// Runs `git pair args` with the pinned CLIs and the server's environment.
    pub fn pair(&self, args: &[&str]) -> Output {
        let mut cmd = self.env.pair_cmd(args);
        self.server_env(&mut cmd);
        run(cmd)
    }

    /// [`Self::pair`] with stdin, stdout and stderr on a terminal (util-linux `script`, its
    /// output both streams together); `None` when `script` is not installed.
    pub fn pair_on_terminal(&self, args: &[&str]) -> Option<Output> {
        let script = ["/usr/bin/script", "/bin/script"]
            .into_iter()
            .map(Path::new)
            .find(|p| p.exists())?;
        let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        let mut line = quote(crate::common::bin());
        for arg in args {
            line.push(' ');
            line.push_str(&quote(arg));
        }
        let mut cmd = std::process::Command::new(script);
        cmd.args(["-qefc", &line, "/dev/null"])
            .current_dir(&self.env.repo)
            .stdin(std::process::Stdio::null());
        self.env.configure(&mut cmd);
        self.server_env(&mut cmd);
        Some(run(cmd))
    }

    fn server_env(&self, cmd: &mut std::process::Command) {
        let url = self.server.url();
        cmd.env("PATH", &self.path)
            .env("ANTHROPIC_BASE_URL", &url)
            .env("ANTHROPIC_API_KEY", "test")
            .env("OPENAI_API_KEY", "test")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        if self.vendor != Vendor::Codex {
            // Codex reads its provider from config.toml; the others from their environment.
            cmd.env("OPENAI_BASE_URL", format!("{url}/v1"));
        }
        cmd.env("GOOGLE_GEMINI_BASE_URL", &url)
            .env("GEMINI_API_KEY", "test")
            .env("COPILOT_PROVIDER_BASE_URL", format!("{url}/v1"))
            .env("COPILOT_PROVIDER_API_KEY", "test")
            .env("COPILOT_MODEL", "gpt-5.4")
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("OPENCODE_CONFIG_CONTENT", opencode_config(&url))
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_SHARE", "1");
        for (k, v) in &self.extra {
            cmd.env(k, v);
        }
    }

    /// `git pair args --json`, any exit status, stdout parsed.
    pub fn pair_json(&self, args: &[&str]) -> (Output, serde_json::Value) {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.pair(&all);
        let v = serde_json::from_str(out.stdout.trim())
            .unwrap_or_else(|e| panic!("git pair {args:?}: stdout is not JSON ({e}):\n{out}"));
        (out, v)
    }

    /// Starts a run with this vendor as the reviewer; returns the run id.
    pub fn start(&self) -> String {
        let (out, v) = self.pair_json(&[
            "start",
            "--task",
            "add a greeting",
            "--reviewer",
            self.vendor.name(),
        ]);
        assert_eq!(out.code, 0, "start failed:\n{out}");
        v["run_id"].as_str().expect("run_id").to_owned()
    }

    /// Changes the work tree and records a coder round.
    pub fn code(&self, file: &str, content: &str, summary: &str) {
        self.env.write(file, content);
        let out = self.pair(&["coder-done", "--summary", summary]);
        assert_eq!(out.code, 0, "coder-done failed:\n{out}");
    }

    /// `git pair review --json [extra]`.
    pub fn review(&self, extra: &[&str]) -> (Output, serde_json::Value) {
        let mut args = vec!["review"];
        args.extend_from_slice(extra);
        self.pair_json(&args)
    }
}

impl E2e {
    /// Asserts a review ended fail-closed: exit 1, no verdict, an error, and the run's state
    /// (read back with `status`) holding no approval.
    pub fn assert_fail_closed(&self, out: &Output, v: &serde_json::Value) {
        assert_eq!(out.code, 1, "a failed review exits 1:\n{out}");
        assert!(
            v["verdict"].is_null(),
            "a failed review has no verdict:\n{out}"
        );
        assert!(
            v["error"].as_str().is_some_and(|m| !m.is_empty()),
            "a failed review says why:\n{out}"
        );
        assert_ne!(v["outcome"], "completed", "{out}");
        let (_, status) = self.pair_json(&["status"]);
        assert_ne!(status["last_verdict"], "APPROVED", "{status:#}");
        assert_eq!(status["next_action"], "review", "no round used: {status:#}");
    }

    /// Every file under `dir` (recursively) whose name contains `needle`.
    pub fn files_named(dir: &Path, needle: &str) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return found;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                found.extend(Self::files_named(&path, needle));
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains(needle))
            {
                found.push(path);
            }
        }
        found
    }

    /// The text of every model call the server saw, in order.
    pub fn call_texts(&self) -> Vec<String> {
        self.server
            .model_calls()
            .iter()
            .map(server::Request::all_text)
            .collect()
    }

    /// The reviewer session id of the review report `v`.
    pub fn session_of(v: &serde_json::Value) -> String {
        v["outcomes"][0]["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no session id in {v:#}"))
            .to_owned()
    }

    /// The record names stored at the run's tip, read with real git.
    pub fn records(&self, run: &str) -> Vec<String> {
        self.env.records(run)
    }
}

impl E2e {
    /// Runs a pinned CLI directly (as a coder agent would run) in the repository, with the
    /// server's environment and `input` on stdin.
    pub fn run_cli(&self, program: &Path, args: &[&str], input: &str) -> Output {
        use std::io::Write as _;
        use std::process::{Command, Stdio};
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(&self.env.repo);
        self.env.configure(&mut cmd);
        self.server_env(&mut cmd);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn the CLI");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write the prompt");
        let out = child.wait_with_output().expect("wait for the CLI");
        Output {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code().unwrap_or(-1),
        }
    }
}

/// The model the pinned CLI asked for by default (its first recorded model call) has a price
/// in the shipped `src/cost/pricing.json`.
pub fn assert_default_model_priced(e: &E2e) {
    let calls = e.server.model_calls();
    let model = calls
        .first()
        .and_then(server::Request::model)
        .expect("the CLI named a model");
    let pricing = git_pair::cost::Pricing::builtin();
    assert!(
        pricing.lookup(model).is_some(),
        "{} asks for {model} by default, which src/cost/pricing.json does not price",
        e.vendor.name()
    );
}

/// Asserts a run's one reviewer session cost exactly `usd` (`cost --json`), and that the
/// totals `cost` and `status` show are that figure (rounded as they print it).
pub fn assert_spend(cost: &serde_json::Value, status: &serde_json::Value, usd: f64) {
    let session = &cost["runs"][0]["sessions"][0];
    assert_eq!(session["role"], "reviewer", "{cost:#}");
    let exact = session["usd"]
        .as_f64()
        .unwrap_or_else(|| panic!("{cost:#}"));
    assert!(
        (exact - usd).abs() < 1e-9,
        "session {exact} != {usd}: {cost:#}"
    );
    let rounded = (usd * 1e4).round() / 1e4;
    let total = cost["total_usd"]
        .as_f64()
        .unwrap_or_else(|| panic!("{cost:#}"));
    assert!(
        (total - rounded).abs() < 1e-9,
        "total {total} != {rounded}: {cost:#}"
    );
    let spent = status["spent_usd"]
        .as_f64()
        .unwrap_or_else(|| panic!("{status:#}"));
    assert!(
        (spent - usd).abs() < 1e-4,
        "status {spent} != {usd}: {status:#}"
    );
}

impl E2e {
    /// Commits the work tree, finishes the run, and returns the `refs/notes/pair` note on
    /// HEAD, read with real git.
    pub fn commit_finish_and_note(&self) -> String {
        self.env.git(&["add", "-A"]);
        self.env.git(&["commit", "-q", "-m", "greeting"]);
        let (out, v) = self.pair_json(&["finish"]);
        assert_eq!(out.code, 0, "finish failed:\n{out}");
        assert_eq!(v["verdict"], "APPROVED", "{v:#}");
        self.env
            .git(&["notes", "--ref=refs/notes/pair", "show", "HEAD"])
    }
}

/// The review answers the agents' tests script: the finding they request changes with.
pub const FINDING: &str = "the greeting misses its name";

/// A JSON CHANGES_REQUESTED answer with [`FINDING`].
pub fn changes() -> Step {
    server::Reply::Json(
        serde_json::json!({"verdict": "CHANGES_REQUESTED", "findings": [
        {"category": "bug", "severity": "high", "location": "greet.txt:1", "text": FINDING}]}),
    )
    .into()
}

/// A JSON APPROVED answer.
pub fn approve() -> Step {
    server::Reply::Json(serde_json::json!({"verdict": "APPROVED", "findings": []})).into()
}

/// A run reviewed by `vendor` with its first coder round recorded.
pub fn round_one(
    vendor: Vendor,
    script: Vec<Step>,
    fallback: Option<Step>,
) -> Option<(E2e, String)> {
    let e = E2e::new(vendor, script, fallback)?;
    let run = e.start();
    e.code("greet.txt", "hello\n", "add a greeting");
    Some((e, run))
}

/// Two reviewed rounds through `vendor`'s real CLI: CHANGES_REQUESTED (the finding read
/// back), then APPROVED, each a model call whose prompt names the round. Returns the env,
/// the run and the two reviews' session ids.
pub fn two_rounds(vendor: Vendor) -> Option<(E2e, String, String, String)> {
    let (e, run) = round_one(vendor, vec![changes(), approve()], None)?;
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v:#}");
    assert_eq!(v["findings"][0]["text"], FINDING, "{v:#}");
    assert_eq!(v["outcomes"][0]["reviewer"], vendor.name(), "{v:#}");
    let first = E2e::session_of(&v);
    let texts = e.call_texts();
    assert_eq!(texts.len(), 1, "one model turn for one answer");
    assert!(
        texts[0].contains(&format!("git-pair: {run}/1/")),
        "{}",
        texts[0]
    );
    assert!(texts[0].contains("greet.txt"), "{}", texts[0]);

    e.code("greet.txt", "hello, name\n", "name the greeting");
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(v["next_action"], "finish", "{v:#}");
    let second = E2e::session_of(&v);
    let texts = e.call_texts();
    assert_eq!(texts.len(), 2, "one model turn per round");
    assert!(
        texts[1].contains(&format!("git-pair: {run}/2/")),
        "{}",
        texts[1]
    );
    let status = e.env.pair_json(&["status"]);
    assert_eq!(status["last_verdict"], "APPROVED", "{status:#}");
    assert_eq!(status["round"], 2, "{status:#}");
    Some((e, run, first, second))
}

/// Asserts that the second round resumed the first one's session: the same id, and the
/// resumed turn resends round 1's prompt.
pub fn assert_resumed(e: &E2e, run: &str, first: &str, second: &str) {
    assert_eq!(first, second, "round 2 resumed round 1's session");
    let texts = e.call_texts();
    assert!(
        texts[1].contains(&format!("git-pair: {run}/1/")),
        "the resumed turn carries round 1's prompt:\n{}",
        texts[1]
    );
}

/// A review whose every model call gets `reply`: never approval, and when the review fails
/// it fails closed (exit 1, no verdict, no round used).
pub fn assert_never_approves(vendor: Vendor, reply: server::Reply) -> Option<E2e> {
    let (e, _run) = round_one(vendor, Vec::new(), Some(reply.into()))?;
    let (out, v) = e.review(&["--timeout", "60"]);
    assert_ne!(v["verdict"], "APPROVED", "{out}");
    if out.code == 0 {
        assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{out}");
        assert_eq!(v["findings"][0]["category"], "process", "{out}");
    } else {
        e.assert_fail_closed(&out, &v);
    }
    Some(e)
}

impl E2e {
    /// Points `pair.surfaceFile` at the shipped surfaces document with this vendor's
    /// realization changed by `edit`: a control case takes one isolation out.
    pub fn edit_realization(&self, edit: impl FnOnce(&mut serde_json::Value)) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/surfaces.json");
        let text = std::fs::read_to_string(path).expect("data/surfaces.json");
        let mut surfaces: serde_json::Value = serde_json::from_str(&text).expect("json");
        edit(&mut surfaces["realizations"][self.vendor.name()]);
        let file = self.env.home.join("surfaces-edited.json");
        std::fs::write(&file, surfaces.to_string()).expect("write surfaces");
        self.env.git(&[
            "config",
            "pair.surfaceFile",
            file.to_str().expect("utf-8 path"),
        ]);
    }
}

/// The model a hostile project configuration asks for.
pub const EVIL_MODEL: &str = "evil-model";

/// The snapshot under review carries a hostile project configuration for `vendor` (`files`,
/// given the marker path a command it starts would create; it also asks for
/// [`EVIL_MODEL`]): the review still reaches the loopback server with the reviewer's own
/// settings, and the marker never appears. Then the control: the same configuration in a
/// later round, with the realization changed by `without_isolation`, does take effect
/// (`took_effect`), so the first half can fail.
pub fn assert_project_config_ignored(
    vendor: Vendor,
    files: impl Fn(&Path) -> Vec<(&'static str, String)>,
    prepare: impl FnOnce(&mut E2e),
    without_isolation: impl FnOnce(&mut serde_json::Value),
    took_effect: impl Fn(&E2e, &Path) -> bool,
) {
    let Some(mut e) = E2e::new(vendor, Vec::new(), Some(approve())) else {
        return;
    };
    prepare(&mut e);
    let marker = e.env.home.join("hostile-config-ran");
    e.start();
    for (path, text) in files(&marker) {
        e.env.write(path, &text);
    }
    e.code(
        "greet.txt",
        "hello\n",
        "add a greeting and project settings",
    );
    let (out, v) = e.review(&[]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    let calls = e.server.model_calls();
    assert!(!calls.is_empty(), "the review reached the loopback server");
    assert!(
        calls.iter().all(|c| c.model() != Some(EVIL_MODEL)),
        "the snapshot chose the reviewer's model: {:?}",
        calls.iter().map(|c| c.model()).collect::<Vec<_>>()
    );
    assert!(
        !marker.exists(),
        "a command from the snapshot's project configuration ran inside the reviewer"
    );

    e.edit_realization(without_isolation);
    e.code("greet.txt", "hello, name\n", "name the greeting");
    let (out, _) = e.review(&[]);
    assert!(
        took_effect(&e, &marker),
        "control: without the isolation the same configuration should take effect:\n{out}"
    );
}

/// Whether a hostile command ran (its marker exists) or a model call asked for
/// [`EVIL_MODEL`].
pub fn marker_or_evil_model(e: &E2e, marker: &Path) -> bool {
    marker.exists()
        || e.server
            .model_calls()
            .iter()
            .any(|c| c.model() == Some(EVIL_MODEL))
}

/// A review with `--model model` (and `--effort effort`) through `vendor`: the chosen model
/// reaches the server's request; returns the env for more checks.
pub fn assert_chosen_model_reaches_the_server(
    vendor: Vendor,
    model: &str,
    wire_model: &str,
    effort: Option<&str>,
) -> Option<E2e> {
    let (e, _) = round_one(vendor, Vec::new(), Some(approve()))?;
    let mut args = vec!["--model", model];
    if let Some(effort) = effort {
        args.extend(["--effort", effort]);
    }
    let (out, v) = e.review(&args);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(v["verdict"], "APPROVED", "{v:#}");
    assert_eq!(v["model"], model, "{v:#}");
    let calls = e.server.model_calls();
    assert!(
        calls.iter().any(|c| c.model() == Some(wire_model)),
        "{:?}",
        calls.iter().map(|c| c.model()).collect::<Vec<_>>()
    );
    Some(e)
}
