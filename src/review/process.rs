//! The one spawn builder for reviewer (and probe) processes: own process group, prompt on
//! stdin or a null stdin, stdout captured whole up to a cap, stderr tail, bounded wait that
//! kills the whole group, Ctrl-C turned into a cancellation. A process's exit status is data
//! ([`Finished`]); nothing here returns `Err` or interprets what the process printed.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

const SIGINT: i32 = 2;
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;
const SIG_DFL: usize = 0;
const SIG_ERR: usize = usize::MAX;

unsafe extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
    fn signal(signum: i32, handler: usize) -> usize;
}

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Spawn {
    /// The executable (a resolved path, or a name looked up on `PATH`).
    pub program: PathBuf,
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Variables added to (or replacing in) the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory; the caller's when `None`.
    pub cwd: Option<PathBuf>,
    /// Bytes written to stdin, which is then closed; `None` gives a null stdin.
    pub stdin: Option<Vec<u8>>,
}

/// Bounds on one process.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Wall-clock bound from spawn to exit; then the group is terminated.
    pub timeout: Duration,
    /// How long the group has between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Stdout bytes kept; the rest is read and counted, not kept.
    pub stdout_cap: usize,
    /// Stderr bytes kept from the end.
    pub stderr_tail: usize,
    /// Give up early on output that shows a hopeless retry loop.
    pub give_up: Option<GiveUp>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(600),
            kill_grace: Duration::from_secs(3),
            stdout_cap: 64 * 1024 * 1024,
            stderr_tail: 64 * 1024,
            give_up: None,
        }
    }
}

/// What can cancel a wait: a caller's flag and/or Ctrl-C.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    /// Set by the caller (another thread, a test) to cancel.
    pub flag: Option<Arc<AtomicBool>>,
    /// Catch SIGINT while waiting, turning Ctrl-C into a cancellation of the reviewer.
    pub on_sigint: bool,
}

/// How the wait ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "kebab-case")]
pub enum End {
    /// The process exited (any status) or was killed by someone else.
    Exited,
    /// The timeout passed; the group was killed.
    TimedOut,
    /// Cancelled (flag or Ctrl-C); the group was killed.
    Cancelled,
    /// The process could not be started.
    SpawnFailed {
        /// The operating system's reason.
        message: String,
    },
    /// Its output showed it retrying something it cannot do (no network, say) often enough
    /// to give up ([`GiveUp`]); the group was killed.
    GaveUp {
        /// The last output line that matched.
        line: String,
    },
}

/// Ends a process early whose stdout keeps showing a failure it is retrying forever (an
/// offline vendor CLI reconnecting): `after` lines matching `pattern`. From realization data.
#[derive(Debug, Clone)]
pub struct GiveUp {
    pub pattern: regex::Regex,
    pub after: usize,
}

/// Exit status as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitInfo {
    /// Exit code, when it exited.
    pub code: Option<i32>,
    /// Terminating signal, when a signal ended it.
    pub signal: Option<i32>,
}

impl ExitInfo {
    fn from_status(s: ExitStatus) -> ExitInfo {
        ExitInfo {
            code: s.code(),
            signal: s.signal(),
        }
    }

    /// Exit code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exit status {c}"),
            (None, Some(s)) => write!(f, "killed by signal {s}"),
            (None, None) => f.write_str("unknown exit status"),
        }
    }
}

/// Everything observed about one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// How the wait ended.
    pub end: End,
    /// Exit status, once reaped.
    pub status: Option<ExitInfo>,
    /// Stdout, up to the cap.
    pub stdout: Vec<u8>,
    /// Total stdout bytes the process wrote.
    pub stdout_bytes: u64,
    /// Stdout went over the cap.
    pub stdout_truncated: bool,
    /// The last bytes of stderr.
    pub stderr_tail: Vec<u8>,
    /// Total stderr bytes the process wrote.
    pub stderr_bytes: u64,
    /// Spawn to end of wait.
    pub duration: Duration,
}

/// Runs one process to its end under `limits`. Never fails: a spawn error, a non-zero exit,
/// a hang and a cancellation are all described by the returned [`Finished`].
pub fn run(spawn: &Spawn, limits: &Limits, cancel: &Cancel) -> Finished {
    let _sigint = cancel.on_sigint.then(SigintGuard::install);
    let started = Instant::now();
    let mut command = Command::new(&spawn.program);
    command
        .args(&spawn.args)
        .envs(spawn.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spawn.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A group of its own: a timeout or Ctrl-C can then kill the reviewer and everything
        // it started, and a Ctrl-C typed at the terminal reaches git pair, not the reviewer.
        .process_group(0);
    if let Some(cwd) = &spawn.cwd {
        command.current_dir(cwd);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Finished {
                end: End::SpawnFailed {
                    message: format!("cannot run {}: {e}", spawn.program.display()),
                },
                status: None,
                stdout: Vec::new(),
                stdout_bytes: 0,
                stdout_truncated: false,
                stderr_tail: Vec::new(),
                stderr_bytes: 0,
                duration: started.elapsed(),
            };
        }
    };
    let group = child.id();
    let stdout = Arc::new(Mutex::new(Capture::default()));
    let stderr = Arc::new(Mutex::new(Capture::default()));
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    if let Some(out) = child.stdout.take() {
        threads.push(read_into(
            out,
            Arc::clone(&stdout),
            Keep::Head(limits.stdout_cap),
        ));
    }
    if let Some(err) = child.stderr.take() {
        threads.push(read_into(
            err,
            Arc::clone(&stderr),
            Keep::Tail(limits.stderr_tail),
        ));
    }
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), spawn.stdin.clone()) {
        // A reviewer that never reads its stdin must not block us: write from a thread and
        // ignore EPIPE.
        threads.push(std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        }));
    }

    let deadline = started + limits.timeout;
    let mut pause = Duration::from_millis(1);
    let mut watch = limits.give_up.as_ref().map(|g| Watch {
        rule: g,
        scanned: 0,
        seen: 0,
        next_check: started,
    });
    let (end, status) = loop {
        if let Some(line) = watch.as_mut().and_then(|w| w.hopeless(&stdout)) {
            break (
                End::GaveUp { line },
                terminate_group(group, &mut child, limits.kill_grace),
            );
        }
        if cancel.is_cancelled() {
            break (
                End::Cancelled,
                terminate_group(group, &mut child, limits.kill_grace),
            );
        }
        match child.try_wait() {
            Ok(Some(status)) => break (End::Exited, Some(ExitInfo::from_status(status))),
            Ok(None) => {}
            Err(_) => {
                break (
                    End::Exited,
                    terminate_group(group, &mut child, limits.kill_grace),
                );
            }
        }
        let now = Instant::now();
        if now >= deadline {
            break (
                End::TimedOut,
                terminate_group(group, &mut child, limits.kill_grace),
            );
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(25));
    };
    let duration = started.elapsed();
    if end == End::Exited {
        // The reviewer is done; whatever it left running in its group (a daemon holding our
        // pipes open, a stray shell) goes with it. Its pid was reaped a moment ago and pids
        // are handed out cyclically, so the group id cannot name anyone else yet.
        signal_group(group, SIGKILL);
    }
    // Pipes reach EOF once every holder is dead; one that escaped the group (setsid) must
    // not hold us forever.
    let drain_deadline = Instant::now() + limits.kill_grace.max(Duration::from_millis(500));
    while threads.iter().any(|t| !t.is_finished()) && Instant::now() < drain_deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    for t in threads {
        if t.is_finished() {
            let _ = t.join();
        }
    }
    let (stdout, stdout_bytes, stdout_truncated) = take(&stdout, None);
    let (stderr_tail, stderr_bytes, _) = take(&stderr, Some(limits.stderr_tail));
    Finished {
        end,
        status,
        stdout,
        stdout_bytes,
        stdout_truncated,
        stderr_tail,
        stderr_bytes,
        duration,
    }
}

/// Scans new complete stdout lines for a [`GiveUp`] rule, a few times a second.
struct Watch<'a> {
    rule: &'a GiveUp,
    scanned: usize,
    seen: usize,
    next_check: Instant,
}

impl Watch<'_> {
    fn hopeless(&mut self, stdout: &Mutex<Capture>) -> Option<String> {
        let now = Instant::now();
        if now < self.next_check {
            return None;
        }
        self.next_check = now + Duration::from_millis(200);
        let capture = stdout.lock().unwrap_or_else(|p| p.into_inner());
        let fresh = capture.buf.get(self.scanned..)?;
        let complete = fresh.iter().rposition(|b| *b == b'\n')? + 1;
        let mut last = None;
        for line in fresh[..complete].split(|b| *b == b'\n') {
            let line = String::from_utf8_lossy(line);
            if self.rule.pattern.is_match(&line) {
                self.seen += 1;
                last = Some(line.into_owned());
            }
        }
        self.scanned += complete;
        (self.seen >= self.rule.after).then(|| last.unwrap_or_default())
    }
}

impl Cancel {
    fn is_cancelled(&self) -> bool {
        self.flag.as_ref().is_some_and(|f| f.load(Ordering::SeqCst))
            || (self.on_sigint && INTERRUPTED.load(Ordering::SeqCst))
    }
}

/// SIGTERM to the group, up to `grace` for the leader to exit, then SIGKILL to the group
/// (even if the leader exited: a child ignoring SIGTERM may remain), then reap the leader.
fn terminate_group(group: u32, child: &mut Child, grace: Duration) -> Option<ExitInfo> {
    signal_group(group, SIGTERM);
    let until = Instant::now() + grace;
    let mut status = None;
    while Instant::now() < until {
        if let Ok(Some(s)) = child.try_wait() {
            status = Some(ExitInfo::from_status(s));
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    signal_group(group, SIGKILL);
    if status.is_none() {
        // SIGKILL cannot be ignored; bound the reap anyway (a process stuck in the kernel).
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Ok(Some(s)) = child.try_wait() {
                status = Some(ExitInfo::from_status(s));
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    status
}

fn signal_group(group: u32, sig: i32) {
    let Ok(pgid) = i32::try_from(group) else {
        return;
    };
    // 0 and 1 would address our own group or every process we may signal.
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) takes two integers and touches no memory of ours. The negative pid
    // addresses exactly the process group `process_group(0)` created for our child (its
    // pgid is its pid), never git pair's own group.
    unsafe {
        kill(-pgid, sig);
    }
}

/// Set by the SIGINT handler while a [`SigintGuard`] is alive.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// (live guards, the disposition to restore when the last one goes).
static SIGINT_STATE: Mutex<(usize, usize)> = Mutex::new((0, SIG_DFL));

extern "C" fn on_sigint(_signum: i32) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Catches SIGINT while at least one wait that asked for it is running (panels wait on
/// several reviewers at once), restoring the previous disposition afterwards.
struct SigintGuard;

impl SigintGuard {
    fn install() -> SigintGuard {
        let mut state = SIGINT_STATE.lock().unwrap_or_else(|p| p.into_inner());
        if state.0 == 0 {
            INTERRUPTED.store(false, Ordering::SeqCst);
            let handler: extern "C" fn(i32) = on_sigint;
            // SAFETY: installs a handler that only performs an atomic store, which is
            // async-signal-safe; `signal` itself has no memory-safety preconditions.
            let previous = unsafe { signal(SIGINT, handler as usize) };
            state.1 = if previous == SIG_ERR {
                SIG_DFL
            } else {
                previous
            };
        }
        state.0 += 1;
        SigintGuard
    }
}

impl Drop for SigintGuard {
    fn drop(&mut self) {
        let mut state = SIGINT_STATE.lock().unwrap_or_else(|p| p.into_inner());
        state.0 -= 1;
        if state.0 == 0 {
            // SAFETY: restores the disposition `signal` returned when the first guard was
            // installed (or the default one), which was valid then and still is.
            unsafe {
                signal(SIGINT, state.1);
            }
        }
    }
}

#[derive(Default)]
struct Capture {
    buf: Vec<u8>,
    total: u64,
    truncated: bool,
}

#[derive(Clone, Copy)]
enum Keep {
    Head(usize),
    Tail(usize),
}

fn read_into<R: Read + Send + 'static>(
    mut source: R,
    into: Arc<Mutex<Capture>>,
    keep: Keep,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let n = match source.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let mut c = into.lock().unwrap_or_else(|p| p.into_inner());
            c.total += n as u64;
            match keep {
                Keep::Head(cap) => {
                    let room = cap.saturating_sub(c.buf.len());
                    c.buf.extend_from_slice(&chunk[..n.min(room)]);
                    if n > room {
                        c.truncated = true;
                    }
                }
                Keep::Tail(tail) => {
                    c.buf.extend_from_slice(&chunk[..n]);
                    // Trim in batches so a chatty stderr costs amortized O(1) per byte.
                    if c.buf.len() > tail.saturating_mul(2).max(64 * 1024) {
                        let cut = c.buf.len() - tail;
                        c.buf.drain(..cut);
                        c.truncated = true;
                    }
                }
            }
        }
    })
}

fn take(capture: &Mutex<Capture>, tail: Option<usize>) -> (Vec<u8>, u64, bool) {
    let mut c = capture.lock().unwrap_or_else(|p| p.into_inner());
    let mut buf = std::mem::take(&mut c.buf);
    if let Some(tail) = tail
        && buf.len() > tail
    {
        buf.drain(..buf.len() - tail);
    }
    let truncated = c.truncated || c.total > buf.len() as u64;
    (buf, c.total, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn stub(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/reviewers")
            .join(name)
    }

    fn limits(timeout_ms: u64) -> Limits {
        Limits {
            timeout: Duration::from_millis(timeout_ms),
            kill_grace: Duration::from_millis(300),
            ..Limits::default()
        }
    }

    fn sh(script: &str) -> Spawn {
        Spawn {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            ..Spawn::default()
        }
    }

    /// Polls `cond` until it holds or `within` passes.
    fn eventually(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
        let until = Instant::now() + within;
        loop {
            if cond() {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Alive means present in /proc and not a zombie waiting for its reaper.
    fn alive(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next())
                .is_some_and(|state| state != 'Z' && state != 'X'),
            Err(_) => false,
        }
    }

    fn read_pid(path: &Path) -> Option<u32> {
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    }

    #[test]
    fn stdin_reaches_the_process_and_stdout_comes_back_whole() {
        let mut s = sh("cat; echo done >&2; exit 3");
        s.stdin = Some(b"prompt text\n".to_vec());
        let f = run(&s, &limits(10_000), &Cancel::default());
        assert_eq!(f.end, End::Exited);
        assert_eq!(
            f.status,
            Some(ExitInfo {
                code: Some(3),
                signal: None
            })
        );
        assert_eq!(f.stdout, b"prompt text\n");
        assert_eq!(f.stderr_tail, b"done\n");
    }

    #[test]
    fn no_prompt_means_a_null_stdin() {
        let f = run(&sh("cat"), &limits(10_000), &Cancel::default());
        assert_eq!((f.end, f.stdout), (End::Exited, vec![]));
    }

    #[test]
    fn spawn_failure_is_data() {
        let s = Spawn {
            program: "/nonexistent/reviewer".into(),
            ..Spawn::default()
        };
        let f = run(&s, &limits(1000), &Cancel::default());
        let End::SpawnFailed { message } = f.end else {
            panic!("{:?}", f.end)
        };
        assert!(message.contains("/nonexistent/reviewer"), "{message}");
    }

    #[test]
    fn stdout_is_capped_and_stderr_keeps_its_tail() {
        let s = sh(
            "head -c 300000 /dev/zero; i=0; while [ $i -lt 2000 ]; do echo line$i >&2; i=$((i+1)); done",
        );
        let l = Limits {
            stdout_cap: 100_000,
            stderr_tail: 1000,
            ..limits(20_000)
        };
        let f = run(&s, &l, &Cancel::default());
        assert_eq!(
            (f.stdout.len(), f.stdout_bytes, f.stdout_truncated),
            (100_000, 300_000, true)
        );
        assert_eq!(f.stderr_tail.len(), 1000);
        assert!(f.stderr_tail.ends_with(b"line1999\n"));
        assert!(f.stderr_bytes > 10_000);
    }

    #[test]
    fn signal_death_is_reported() {
        let f = run(&sh("kill -KILL $$"), &limits(10_000), &Cancel::default());
        assert_eq!(
            f.status,
            Some(ExitInfo {
                code: None,
                signal: Some(SIGKILL)
            })
        );
    }

    #[test]
    fn timeout_kills_the_whole_group_including_a_grandchild() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("grandchild.pid");
        let s = Spawn {
            program: stub("fork-and-hang.sh"),
            env: vec![("STUB_PID_FILE".into(), pid_file.clone().into())],
            ..Spawn::default()
        };
        let f = run(&s, &limits(1500), &Cancel::default());
        assert_eq!(f.end, End::TimedOut);
        let grandchild = read_pid(&pid_file).expect("stub wrote the grandchild pid");
        assert!(
            eventually(Duration::from_secs(5), || !alive(grandchild)),
            "grandchild {grandchild} survived the timeout"
        );
        assert!(f.duration < Duration::from_secs(10), "{:?}", f.duration);
    }

    #[test]
    fn a_child_ignoring_sigterm_is_killed_after_the_grace() {
        let s = Spawn {
            program: stub("hang.sh"),
            env: vec![("STUB_IGNORE_TERM".into(), "1".into())],
            ..Spawn::default()
        };
        let f = run(&s, &limits(300), &Cancel::default());
        assert_eq!(f.end, End::TimedOut);
        assert_eq!(f.status.and_then(|s| s.signal), Some(SIGKILL));
    }

    #[test]
    fn leftovers_of_an_exited_reviewer_do_not_hold_the_wait() {
        // The leader exits at once; its background child keeps stdout open and would block
        // a naive reader until it ends.
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("bg.pid");
        let script = format!(
            "sleep 300 & echo $! > '{}'; echo answer",
            pid_file.display()
        );
        let f = run(&sh(&script), &limits(60_000), &Cancel::default());
        assert_eq!(f.end, End::Exited);
        assert_eq!(f.stdout, b"answer\n");
        assert!(f.duration < Duration::from_secs(30));
        let bg = read_pid(&pid_file).expect("pid");
        assert!(eventually(Duration::from_secs(5), || !alive(bg)));
    }

    #[test]
    fn cancel_flag_kills_the_group_and_reports_cancelled() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("grandchild.pid");
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = Arc::clone(&flag);
            let pid_file = pid_file.clone();
            std::thread::spawn(move || {
                eventually(Duration::from_secs(10), || pid_file.exists());
                flag.store(true, Ordering::SeqCst);
            })
        };
        let s = Spawn {
            program: stub("fork-and-hang.sh"),
            env: vec![("STUB_PID_FILE".into(), pid_file.clone().into())],
            ..Spawn::default()
        };
        let cancel = Cancel {
            flag: Some(flag),
            on_sigint: false,
        };
        let f = run(&s, &limits(60_000), &cancel);
        setter.join().expect("setter");
        assert_eq!(f.end, End::Cancelled);
        let grandchild = read_pid(&pid_file).expect("pid");
        assert!(eventually(Duration::from_secs(5), || !alive(grandchild)));
    }

    #[test]
    fn exit_info_reads_as_text() {
        let code = ExitInfo {
            code: Some(2),
            signal: None,
        };
        let sig = ExitInfo {
            code: None,
            signal: Some(15),
        };
        assert_eq!(
            (code.to_string(), sig.to_string()),
            ("exit status 2".into(), "killed by signal 15".into())
        );
        assert!(!code.success());
    }
}

/// Why a helper tool (`gh`, `git` for transport) did not do its job.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("not installed")]
    NotFound,
    #[error("timed out after {secs} s")]
    TimedOut { secs: u64 },
    #[error("{status}: {stderr}")]
    Failed { status: String, stderr: String },
}

/// Runs a helper tool (not a reviewer) through the same spawn path: null stdin, its own
/// process group, a bounded wait, `LC_ALL=C` so its messages can be matched. Returns stdout
/// on success.
pub fn run_tool(
    program: &str,
    args: &[&str],
    cwd: &std::path::Path,
    timeout: Duration,
) -> Result<String, ToolError> {
    let output = run_tool_raw(program, args, cwd, timeout, &[])?;
    if output.status.is_some_and(|s| s.success()) {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(ToolError::Failed {
            status: output
                .status
                .map_or_else(|| "no exit status".to_owned(), |s| s.to_string()),
            stderr: String::from_utf8_lossy(&output.stderr_tail)
                .trim()
                .to_owned(),
        })
    }
}

/// Like [`run_tool`] but hands back the whole [`Finished`] whatever the exit status, with
/// extra environment variables.
pub fn run_tool_raw(
    program: &str,
    args: &[&str],
    cwd: &std::path::Path,
    timeout: Duration,
    env: &[(&str, &str)],
) -> Result<Finished, ToolError> {
    let path = crate::review::probe::find_executable(program, None).ok_or(ToolError::NotFound)?;
    let mut vars: Vec<(OsString, OsString)> = vec![("LC_ALL".into(), "C".into())];
    vars.extend(
        env.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    let finished = run(
        &Spawn {
            program: path,
            args: args.iter().map(|s| s.to_string()).collect(),
            env: vars,
            cwd: Some(cwd.to_path_buf()),
            stdin: None,
        },
        &Limits {
            timeout,
            ..Limits::default()
        },
        &Cancel {
            flag: None,
            on_sigint: true,
        },
    );
    match finished.end {
        End::TimedOut => Err(ToolError::TimedOut {
            secs: timeout.as_secs(),
        }),
        End::SpawnFailed { .. } => Err(ToolError::NotFound),
        _ => Ok(finished),
    }
}
