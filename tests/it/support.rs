//! Hermetic git helpers: isolated config and HOME, fixed dates, fixture scripts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// Isolated config and HOME (the repository's parent), fixed identity and dates.
fn isolate(cmd: &mut Command, dir: &Path) {
    let home = dir.parent().unwrap_or(dir);
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .env("GIT_AUTHOR_DATE", "@1700000000 +0000")
        .env("GIT_COMMITTER_DATE", "@1700000000 +0000");
}

/// Runs git and returns its output, whatever the exit status.
pub fn git(dir: &Path, args: &[&str]) -> Output {
    git_command(dir)
        .args(args)
        .output()
        .expect("git can be spawned")
}

/// Runs git, asserts success, returns stdout.
pub fn git_ok(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = git(dir, args);
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
