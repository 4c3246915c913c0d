//! The hermetic test environment: a temporary repository with isolated HOME and git config,
//! fixed dates and clock, stub reviewers on PATH, and helpers that read state with real git.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The fixed clock (unix seconds) every test runs at: 2026-11-29T23:15:00Z.
pub const NOW: i64 = 1_795_994_100;
pub const GIT_DATE: &str = "2026-11-29T23:15:00Z";

/// A temporary home + repository.
pub struct TestEnv {
    _root: tempfile::TempDir,
    pub home: PathBuf,
    pub repo: PathBuf,
}

/// The result of running a command: prints as stdout, stderr and `[exit status: N]`.
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}[exit status: {}]",
            self.stdout, self.stderr, self.code
        )
    }
}

impl Output {
    /// Parses stdout as one JSON object.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{self}"))
    }
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_git-pair")
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

impl TestEnv {
    /// A repository on branch `main` with one commit (`README`).
    pub fn new() -> Self {
        let env = Self::empty();
        env.git(&["init", "-q", "-b", "main"]);
        env.write("README", "hello\n");
        env.git(&["add", "README"]);
        env.git(&["commit", "-q", "-m", "initial"]);
        env
    }

    /// A home directory and an empty (not yet initialised) repository directory.
    pub fn empty() -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        let home = root.path().join("home");
        let repo = root.path().join("repo");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&repo).expect("repo");
        TestEnv {
            _root: root,
            home,
            repo,
        }
    }

    /// Applies the hermetic environment to a command. `PATH` holds the stub reviewers and
    /// the system's tools minus the real AI CLIs (see [`system_bin`]).
    pub fn configure(&self, cmd: &mut Command) {
        let path = format!(
            "{}:{}",
            fixtures().join("reviewers").display(),
            system_bin().display()
        );
        hermetic(cmd, &self.home, &path);
    }

    /// A `git-pair` command in the repository, hermetic.
    pub fn pair_cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        cmd.args(args).current_dir(&self.repo).stdin(Stdio::null());
        self.configure(&mut cmd);
        cmd
    }

    /// Runs `git-pair args` with extra environment variables.
    pub fn pair_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = self.pair_cmd(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        run(cmd)
    }

    /// Runs `git-pair args` with the fake vendor CLIs first on `PATH`.
    pub fn pair_with_vendors(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let path = format!(
            "{}:{}:{}",
            fake_vendor_bin().display(),
            fixtures().join("reviewers").display(),
            system_bin().display()
        );
        let mut all: Vec<(&str, &str)> = vec![("PATH", path.as_str())];
        all.extend_from_slice(env);
        self.pair_env(args, &all)
    }

    /// Runs `git-pair args` and returns its output, whatever the exit status.
    pub fn pair(&self, args: &[&str]) -> Output {
        run(self.pair_cmd(args))
    }

    /// Runs `git-pair args --json`, asserts success and returns the JSON.
    pub fn pair_json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.pair(&all);
        assert_eq!(out.code, 0, "git pair {args:?} failed:\n{out}");
        out.json()
    }

    /// Runs real git in the repository and returns stdout; panics on failure.
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_out(args);
        assert_eq!(out.code, 0, "git {args:?} failed:\n{out}");
        out.stdout
    }

    /// Runs real git and returns its output, whatever the exit status.
    pub fn git_out(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(&self.repo).stdin(Stdio::null());
        self.configure(&mut cmd);
        run(cmd)
    }

    /// Runs real git with extra environment variables; its output whatever the exit status.
    pub fn git_env(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(&self.repo).stdin(Stdio::null());
        self.configure(&mut cmd);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        run(cmd)
    }

    /// Runs real git with `input` on stdin and returns stdout; panics on failure.
    pub fn git_stdin(&self, args: &[&str], input: &str) -> String {
        use std::io::Write as _;
        let mut cmd = Command::new("git");
        cmd.args(args)
            .current_dir(&self.repo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        self.configure(&mut cmd);
        let mut child = cmd.spawn().expect("spawn git");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        let out = child.wait_with_output().expect("wait git");
        assert!(out.status.success(), "git {args:?} failed");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Writes a file in the work tree (creating directories).
    pub fn write(&self, path: &str, content: &str) {
        let full = self.repo.join(path);
        if let Some(dir) = full.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(full, content).expect("write");
    }

    /// Reads a file of the work tree.
    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.repo.join(path)).expect("read")
    }

    /// `git for-each-ref` over everything git pair owns: the state fingerprint tests compare.
    pub fn pair_refs(&self) -> String {
        self.git(&["for-each-ref", "refs/pair", "refs/notes"])
    }

    /// Starts a run and returns its id.
    pub fn start(&self, task: &str) -> String {
        let v = self.pair_json(&["start", "--replace", "--task", task]);
        v["run_id"].as_str().expect("run_id").to_owned()
    }

    /// The manifest stored at a run's tip, read with real git.
    pub fn manifest(&self, run_id: &str) -> serde_json::Value {
        let text = self.git(&["show", &format!("refs/pair/runs/{run_id}:manifest.json")]);
        serde_json::from_str(&text).expect("manifest.json is JSON")
    }

    /// Record file names at a run's tip (in their buckets), read with real git.
    pub fn records(&self, run_id: &str) -> Vec<String> {
        self.git(&[
            "ls-tree",
            "-r",
            "--name-only",
            &format!("refs/pair/runs/{run_id}:records"),
        ])
        .lines()
        .map(|path| path.rsplit('/').next().unwrap_or(path).to_owned())
        .collect()
    }

    /// Asserts `git fsck` finds nothing wrong.
    pub fn assert_fsck_clean(&self) {
        let out = self.git_out(&["fsck", "--strict", "--no-dangling"]);
        assert_eq!(out.code, 0, "git fsck failed:\n{out}");
        assert!(
            !out.stdout.contains("error") && !out.stderr.contains("error"),
            "git fsck complained:\n{out}"
        );
    }
}

/// Where the record file `name` lives in a run's tree: `records/<bucket>/<name>`, the bucket
/// its seq / 256, four digits.
pub fn record_path(name: &str) -> String {
    let seq: u64 = name
        .split('-')
        .next()
        .and_then(|s| s.parse().ok())
        .expect("a record file name starts with its seq");
    format!("records/{:04}/{name}", seq / 256)
}

/// The hermetic environment of every command a test runs: nothing inherited but `TMPDIR`;
/// `HOME` and git configuration isolated (but `pair.reviewerEnv=STUB_* FAKE_*`, so the stub
/// reviewers get their switches); fixed identity, dates and clock; C locale, UTC;
/// `PATH` as given (never the real AI CLIs, see [`system_bin`]).
pub fn hermetic(cmd: &mut Command, home: &Path, path: &str) {
    cmd.env_clear();
    if let Some(tmp) = std::env::var_os("TMPDIR") {
        cmd.env("TMPDIR", tmp);
    }
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .env("GIT_AUTHOR_DATE", GIT_DATE)
        .env("GIT_COMMITTER_DATE", GIT_DATE)
        .env("GIT_PAIR_NOW", NOW.to_string())
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("CODEX_HOME", home.join(".codex"))
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        // Reviewers inherit only what their realization declares (SECURITY.md); the stubs'
        // and fakes' switches are let through as a user would with pair.reviewerEnv.
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "pair.reviewerEnv")
        .env("GIT_CONFIG_VALUE_0", "STUB_* FAKE_*")
        .env("PATH", path);
}

/// A directory linking every program on the test process's `PATH` except the real AI CLIs
/// (`codex`, `claude`, `gh`), so no test can reach a live vendor CLI installed on the machine,
/// and except an installed `git-pair`, so the hook shims find only the binary under test, and
/// only where a test puts it (see [`pair_bin`]).
/// Made once per test process.
pub fn system_bin() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("git-pair-test-bin-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir sysbin");
        let path = std::env::var_os("PATH").unwrap_or_default();
        for source in std::env::split_paths(&path) {
            let Ok(entries) = std::fs::read_dir(&source) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if matches!(
                    name.to_str(),
                    Some(
                        "codex"
                            | "claude"
                            | "gemini"
                            | "qwen"
                            | "opencode"
                            | "copilot"
                            | "gh"
                            | "git-pair"
                    )
                ) {
                    continue;
                }
                let link = dir.join(&name);
                if !link.exists() {
                    let _ = std::os::unix::fs::symlink(entry.path(), link);
                }
            }
        }
        dir
    })
}

/// A directory holding only `git-pair`, a link to the binary under test: put it on a `PATH`
/// to make `git pair …` (the hook shims' command) reach it. Made once per test process.
pub fn pair_bin() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("git-pair-test-pair-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir pair bin");
        std::os::unix::fs::symlink(bin(), dir.join("git-pair")).expect("link git-pair");
        dir
    })
}

/// The fake vendor CLIs (`codex`, `claude`) that print what the real ones print.
pub fn fake_vendor_bin() -> PathBuf {
    fixtures().join("reviewers").join("bin")
}

/// Runs a command to completion and captures its output.
pub fn run(mut cmd: Command) -> Output {
    let out = cmd.output().expect("spawn");
    Output {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// Asserts a failure is exactly one `error:` line (plus an optional `hint:` line).
pub fn assert_one_error_line(out: &Output, code: i32, needle: &str) {
    assert_eq!(out.code, code, "unexpected exit status:\n{out}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines.first().is_some_and(|l| l.starts_with("error: ")),
        "first stderr line is not an error line:\n{out}"
    );
    assert!(
        lines.iter().skip(1).all(|l| l.starts_with("hint: ")),
        "more than one error line:\n{out}"
    );
    assert!(
        lines[0].contains(needle),
        "error line lacks {needle:?}:\n{out}"
    );
}

impl TestEnv {
    /// Writes a file in the test's home directory (outside the work tree).
    pub fn write_outside(&self, name: &str, content: &str) {
        std::fs::write(self.home.join(name), content).expect("write");
    }
}

/// A temporary directory that holds one repository (at `path`).
pub struct TempRepo {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

/// A `git` command in `dir`, isolated from the user's configuration.
pub fn git_command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    isolate(&mut cmd, dir);
    cmd
}

/// Runs a bash `script` in `dir` with the same isolated environment as [`git_command`].
pub fn sh(dir: &Path, script: &str) {
    let mut cmd = Command::new("bash");
    isolate(&mut cmd, dir);
    let out = cmd
        .args(["-euo", "pipefail", "-c", script])
        .output()
        .expect("bash can be spawned");
    assert!(
        out.status.success(),
        "script failed: {script}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Isolated config and HOME (the repository's parent), as every test command gets.
fn isolate(cmd: &mut Command, dir: &Path) {
    let home = dir.parent().unwrap_or(dir);
    cmd.current_dir(dir);
    hermetic(cmd, home, &system_bin().display().to_string());
}

/// Runs git and returns its output, whatever the exit status.
pub fn git_raw(dir: &Path, args: &[&str]) -> std::process::Output {
    git_command(dir)
        .args(args)
        .output()
        .expect("git can be spawned")
}

/// Runs git, asserts success, returns stdout.
pub fn git_ok(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = git_raw(dir, args);
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Like [`git_ok`], as a trimmed string.
pub fn git_str(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(git_ok(dir, args))
        .expect("git output is UTF-8")
        .trim()
        .to_owned()
}

/// Runs `fixtures/repos/<name>.sh` into a new temporary directory.
pub fn fixture(name: &str, args: &[&str]) -> TempRepo {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("repo");
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/repos")
        .join(format!("{name}.sh"));
    let out = Command::new("bash")
        .arg(&script)
        .arg(&path)
        .args(args)
        .env("HOME", dir.path())
        .output()
        .expect("bash can be spawned");
    assert!(
        out.status.success(),
        "fixture {name} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    TempRepo { _dir: dir, path }
}

/// An empty repository with isolated configuration.
pub fn empty_repo() -> TempRepo {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("repo");
    std::fs::create_dir(&path).expect("create repo dir");
    git_ok(&path, &["init", "-q", "-b", "main"]);
    TempRepo { _dir: dir, path }
}

/// Opens a repository with gix, ignoring system and global configuration like the git runs.
pub fn open(path: &Path) -> gix::Repository {
    gix::open_opts(path, gix::open::Options::isolated()).expect("open repository")
}

/// Parses a hex id.
pub fn oid(hex: &str) -> gix::ObjectId {
    gix::ObjectId::from_hex(hex.as_bytes()).expect("valid hex id")
}

/// Panics with the first differing line of two byte strings, with context.
pub fn assert_same_bytes(ours: &[u8], git: &[u8], what: &str) {
    if ours == git {
        return;
    }
    let ours_lines: Vec<&[u8]> = ours.split_inclusive(|&b| b == b'\n').collect();
    let git_lines: Vec<&[u8]> = git.split_inclusive(|&b| b == b'\n').collect();
    let first = ours_lines
        .iter()
        .zip(&git_lines)
        .position(|(a, b)| a != b)
        .unwrap_or(ours_lines.len().min(git_lines.len()));
    let show = |lines: &[&[u8]]| {
        lines[first.saturating_sub(3)..(first + 4).min(lines.len())]
            .iter()
            .map(|l| format!("    {:?}", String::from_utf8_lossy(l)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    panic!(
        "{what}: output differs from git at line {} ({} vs {} bytes)\nours:\n{}\ngit:\n{}",
        first + 1,
        ours.len(),
        git.len(),
        show(&ours_lines),
        show(&git_lines)
    );
}

/// Polls `cond` every 20 ms until it holds (true) or `within` passes (false): the one way a
/// test waits for another process, instead of sleeping a fixed time.
pub fn eventually(within: std::time::Duration, mut cond: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether process `pid` is alive; a zombie (state `Z`) or dead one (`X`) is not.
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        !matches!(after.trim_start().chars().next(), Some('Z' | 'X') | None)
    })
}

/// A pid a test stub wrote to `path`, once it is there.
pub fn read_pid(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A small deterministic generator (xorshift64*, no rand crate), so a failing seed can be
/// replayed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// git's own answer for the work tree as a tree object: `git add -A` into a scratch copy of
/// the index (the real one is untouched), then `git write-tree`.
pub fn git_worktree_tree(repo: &Path) -> String {
    let git_dir = repo.join(".git");
    let tmp = git_dir.join("scratch-test-index");
    let real = git_dir.join("index");
    if real.exists() {
        std::fs::copy(&real, &tmp).expect("copy index");
    } else {
        let _ = std::fs::remove_file(&tmp);
    }
    let run = |args: &[&str]| {
        let out = git_command(repo)
            .env("GIT_INDEX_FILE", &tmp)
            .args(args)
            .output()
            .expect("git can be spawned");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("UTF-8")
            .trim()
            .to_owned()
    };
    run(&["add", "-A"]);
    let tree = run(&["write-tree"]);
    std::fs::remove_file(&tmp).expect("remove the scratch index");
    tree
}
