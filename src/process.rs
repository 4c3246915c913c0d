//! The one place that spawns processes — reviewers, their probes, `gh`, and `git` for
//! transport: an own process group (killed whole on timeout or Ctrl-C, and on Linux dying
//! with git pair), a prompt on stdin or a null stdin, stdout captured up to a cap, a stderr
//! tail, a bounded wait, `LC_ALL=C` for tools whose messages are read. A process's exit
//! status is data ([`Finished`]); nothing here interprets what a process printed, and
//! nothing here knows what a reviewer is.

use std::ffi::{OsStr, OsString};
use std::io::{IsTerminal as _, Read, Write};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use rustix::process::Signal;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Spawn {
    /// The executable (a resolved path, or a name looked up on `PATH`).
    pub program: PathBuf,
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Variables added to (or replacing in) the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// When set, only the variables of git pair's environment whose names match one of these
    /// patterns are inherited ([`env_allowed`]: an exact name, or a prefix ending in `*`);
    /// `env` is added after. `None` inherits the whole environment.
    pub env_allow: Option<Vec<String>>,
    /// Working directory; the caller's when `None`.
    pub cwd: Option<PathBuf>,
    /// Bytes written to stdin, which is then closed; `None` gives a null stdin.
    pub stdin: Option<Vec<u8>>,
    /// Stay in git pair's process group so the process can prompt on the terminal (git's
    /// credential and ssh prompts); a timeout then kills the process alone, not its children.
    pub share_terminal: bool,
}

/// The process a [`run_observed`] started, reported before the wait begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started {
    /// Its pid; also its process group id unless [`Spawn::share_terminal`].
    pub pid: u32,
    /// When it started, in the kernel's own units ([`start_time`]), to tell it from a later
    /// process that reuses the pid.
    pub start_time: Option<u64>,
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
    /// Told each complete stdout line while the process runs (a few times a second, in
    /// order): what a caller shows as progress.
    pub on_line: Option<OnLine>,
}

/// A callback told each complete stdout line of a running process ([`Limits::on_line`]).
#[derive(Clone)]
pub struct OnLine(pub Arc<LineFn>);

/// What an [`OnLine`] calls: one complete line, without its newline.
pub type LineFn = dyn Fn(&[u8]) + Send + Sync;

impl std::fmt::Debug for OnLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnLine(..)")
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout: Duration::from_secs(600),
            kill_grace: Duration::from_secs(3),
            stdout_cap: 64 * 1024 * 1024,
            stderr_tail: 64 * 1024,
            give_up: None,
            on_line: None,
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

/// A callback told about each process started (see [`run_observed`]), shareable across the
/// threads of a reviewer panel.
#[derive(Clone)]
pub struct OnStart(pub Arc<dyn Fn(Started) + Send + Sync>);

impl std::fmt::Debug for OnStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnStart(..)")
    }
}

/// Runs one process to its end under `limits`. Never fails: a spawn error, a non-zero exit,
/// a hang and a cancellation are all described by the returned [`Finished`].
pub fn run(spawn: &Spawn, limits: &Limits, cancel: &Cancel) -> Finished {
    run_observed(spawn, limits, cancel, &|_| {})
}

/// [`run`], telling `on_start` which process it started before waiting for it (callers that
/// record live processes, so a later command can tell alive from dead and clean up).
pub fn run_observed(
    spawn: &Spawn,
    limits: &Limits,
    cancel: &Cancel,
    on_start: &dyn Fn(Started),
) -> Finished {
    let _sigint = cancel.on_sigint.then(SigintGuard::install);
    let started = Instant::now();
    let mut child = match spawn_settled(&mut command_for(spawn)) {
        Ok(child) => child,
        Err(e) => return spawn_failed(spawn, &e, started),
    };
    let pid = child.id();
    on_start(Started {
        pid,
        start_time: start_time(pid),
    });
    let group = (!spawn.share_terminal).then_some(pid);
    let pipes = Pipes::start(&mut child, spawn, limits);
    let (end, status) = wait_for_end(
        &mut child,
        group,
        (&pipes.stdout, &pipes.done),
        limits,
        cancel,
        started,
    );
    let duration = started.elapsed();
    if end == End::Exited {
        // The reviewer is done; whatever it left running in its group (a daemon holding our
        // pipes open, a stray shell) goes with it. Its pid was reaped a moment ago and pids
        // are handed out cyclically, so the group id cannot name anyone else yet.
        if let Some(group) = group {
            signal_group(group, Signal::KILL);
        }
    }
    pipes.finish(limits, end, status, duration)
}

/// `command.spawn()`, tried again for up to about a second while the program is "busy"
/// (ETXTBSY): a script that was just written can be held open for writing for a moment by a
/// child another thread forked in between, until that child execs. Any other error is
/// returned at once.
pub fn spawn_settled(command: &mut Command) -> std::io::Result<Child> {
    let mut pause = Duration::from_millis(2);
    let mut waited = Duration::ZERO;
    loop {
        match command.spawn() {
            Err(e)
                if e.kind() == std::io::ErrorKind::ExecutableFileBusy
                    && waited < Duration::from_secs(1) =>
            {
                std::thread::sleep(pause);
                waited += pause;
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// The command for `spawn`: piped stdout and stderr, a null stdin unless there is input,
/// its own process group unless it shares the terminal, dying with git pair.
fn command_for(spawn: &Spawn) -> Command {
    let mut command = Command::new(&spawn.program);
    if let Some(allow) = &spawn.env_allow {
        command
            .env_clear()
            .envs(std::env::vars_os().filter(|(name, _)| env_allowed(name, allow)));
    }
    command
        .args(&spawn.args)
        .envs(spawn.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spawn.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !spawn.share_terminal {
        // A group of its own: a timeout or Ctrl-C can then kill the process and everything
        // it started, and a Ctrl-C typed at the terminal reaches git pair, not the child.
        command.process_group(0);
    }
    die_with_parent(&mut command);
    if let Some(cwd) = &spawn.cwd {
        command.current_dir(cwd);
    }
    command
}

/// Whether a variable named `name` passes `allow`: a pattern is an exact name, or a prefix
/// followed by `*` (`LC_*`). Names that are not UTF-8 never pass.
pub fn env_allowed(name: &OsStr, allow: &[String]) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    allow.iter().any(|pattern| match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    })
}

/// What a process that could not be started comes back as.
fn spawn_failed(spawn: &Spawn, error: &std::io::Error, started: Instant) -> Finished {
    Finished {
        end: End::SpawnFailed {
            message: format!("cannot run {}: {error}", spawn.program.display()),
        },
        status: None,
        stdout: Vec::new(),
        stdout_bytes: 0,
        stdout_truncated: false,
        stderr_tail: Vec::new(),
        stderr_bytes: 0,
        duration: started.elapsed(),
    }
}

/// A running process's pipes: stdout and stderr read into captures, stdin written, each on a
/// thread of its own.
struct Pipes {
    stdout: Arc<Mutex<Capture>>,
    stderr: Arc<Mutex<Capture>>,
    threads: Vec<JoinHandle<()>>,
    /// Rung by each pipe thread as it ends.
    done: Arc<Ended>,
}

/// How many pipe threads have ended, with a condition variable rung at each: a reader
/// reaching EOF is the child closing its output, which is (nearly always) the child exiting,
/// so the waits below wake on it instead of sleeping out a poll interval.
#[derive(Default)]
struct Ended {
    count: Mutex<usize>,
    rung: Condvar,
}

impl Ended {
    fn ring(&self) {
        *self.count.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.rung.notify_all();
    }

    fn count(&self) -> usize {
        *self.count.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits up to `pause` for the count to differ from `seen`; the count then.
    fn wait_past(&self, seen: usize, pause: Duration) -> usize {
        let count = self.count.lock().unwrap_or_else(|p| p.into_inner());
        let (count, _) = self
            .rung
            .wait_timeout_while(count, pause, |c| *c == seen)
            .unwrap_or_else(|p| p.into_inner());
        *count
    }
}

/// Rings [`Ended`] when the thread holding it ends, however it ends.
struct RingOnDrop(Arc<Ended>);

impl Drop for RingOnDrop {
    fn drop(&mut self) {
        self.0.ring();
    }
}

impl Pipes {
    fn start(child: &mut Child, spawn: &Spawn, limits: &Limits) -> Pipes {
        let stdout = Arc::new(Mutex::new(Capture::default()));
        let stderr = Arc::new(Mutex::new(Capture::default()));
        let done = Arc::new(Ended::default());
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        if let Some(out) = child.stdout.take() {
            threads.push(read_into(
                out,
                Arc::clone(&stdout),
                Keep::Head(limits.stdout_cap),
                RingOnDrop(Arc::clone(&done)),
            ));
        }
        if let Some(err) = child.stderr.take() {
            threads.push(read_into(
                err,
                Arc::clone(&stderr),
                Keep::Tail(limits.stderr_tail),
                RingOnDrop(Arc::clone(&done)),
            ));
        }
        if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), spawn.stdin.clone()) {
            // A reviewer that never reads its stdin must not block us: write from a thread and
            // ignore EPIPE.
            let ring = RingOnDrop(Arc::clone(&done));
            threads.push(std::thread::spawn(move || {
                let _ring = ring;
                let _ = pipe.write_all(&bytes);
            }));
        }
        Pipes {
            stdout,
            stderr,
            threads,
            done,
        }
    }

    /// Waits (bounded) for the readers to reach EOF, then takes what they captured into the
    /// process's [`Finished`].
    fn finish(
        self,
        limits: &Limits,
        end: End,
        status: Option<ExitInfo>,
        duration: Duration,
    ) -> Finished {
        // Pipes reach EOF once every holder is dead; one that escaped the group (setsid) must
        // not hold us forever.
        let drain_deadline = Instant::now() + limits.kill_grace.max(Duration::from_millis(500));
        loop {
            let ended = self.done.count();
            let now = Instant::now();
            if ended >= self.threads.len() || now >= drain_deadline {
                break;
            }
            self.done.wait_past(ended, drain_deadline - now);
        }
        for t in self.threads {
            if t.is_finished() {
                let _ = t.join();
            }
        }
        let (stdout, stdout_bytes, stdout_truncated) = take(&self.stdout, None);
        let (stderr_tail, stderr_bytes, _) = take(&self.stderr, Some(limits.stderr_tail));
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
}

/// Polls the child until it exits, gives up (its output shows a hopeless retry loop), is
/// cancelled or runs out of time; in all but the first case its group is terminated. Between
/// polls it waits on the pipe threads: one ending (the child closing its output, as it does
/// when it exits) wakes it at once and the polls start over fast, so an exit is seen within
/// about a millisecond rather than a poll interval later.
fn wait_for_end(
    child: &mut Child,
    group: Option<u32>,
    (stdout, ended): (&Mutex<Capture>, &Ended),
    limits: &Limits,
    cancel: &Cancel,
    started: Instant,
) -> (End, Option<ExitInfo>) {
    let deadline = started + limits.timeout;
    let mut pause = Duration::from_millis(1);
    let mut seen = ended.count();
    let mut watch = (limits.give_up.is_some() || limits.on_line.is_some()).then_some(Watch {
        rule: limits.give_up.as_ref(),
        on_line: limits.on_line.as_ref(),
        scanned: 0,
        seen: 0,
        next_check: started,
    });
    loop {
        if let Some(line) = watch.as_mut().and_then(|w| w.hopeless(stdout)) {
            return (
                End::GaveUp { line },
                terminate_group(group, child, limits.kill_grace),
            );
        }
        if cancel.is_cancelled() {
            return (
                End::Cancelled,
                terminate_group(group, child, limits.kill_grace),
            );
        }
        match child.try_wait() {
            Ok(Some(status)) => return (End::Exited, Some(ExitInfo::from_status(status))),
            Ok(None) => {}
            Err(_) => {
                return (
                    End::Exited,
                    terminate_group(group, child, limits.kill_grace),
                );
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return (
                End::TimedOut,
                terminate_group(group, child, limits.kill_grace),
            );
        }
        let count = ended.wait_past(seen, pause.min(deadline - now));
        if count == seen {
            pause = (pause * 2).min(Duration::from_millis(25));
        } else {
            seen = count;
            pause = Duration::from_millis(1);
        }
    }
}

/// Scans new complete stdout lines for a [`GiveUp`] rule and hands them to an [`OnLine`]
/// tap, a few times a second.
struct Watch<'a> {
    rule: Option<&'a GiveUp>,
    on_line: Option<&'a OnLine>,
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
        // Lines are copied out so the tap runs without holding the capture's lock.
        let fresh: Vec<u8> = {
            let capture = stdout.lock().unwrap_or_else(|p| p.into_inner());
            let fresh = capture.buf.get(self.scanned..)?;
            let complete = fresh.iter().rposition(|b| *b == b'\n')? + 1;
            fresh[..complete].to_vec()
        };
        self.scanned += fresh.len();
        let mut last = None;
        for line in fresh[..fresh.len() - 1].split(|b| *b == b'\n') {
            if let Some(tap) = self.on_line {
                (tap.0)(line);
            }
            if let Some(rule) = self.rule {
                let line = String::from_utf8_lossy(line);
                if rule.pattern.is_match(&line) {
                    self.seen += 1;
                    last = Some(line.into_owned());
                }
            }
        }
        let rule = self.rule?;
        (self.seen >= rule.after).then(|| last.unwrap_or_default())
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
/// Without a group of its own (`None`), the same to the process alone.
fn terminate_group(group: Option<u32>, child: &mut Child, grace: Duration) -> Option<ExitInfo> {
    let leader = child.id();
    let signal = |sig: Signal| match group {
        Some(group) => signal_group(group, sig),
        None => {
            if let Some(pid) = i32::try_from(leader)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, sig);
            }
        }
    };
    signal(Signal::TERM);
    let until = Instant::now() + grace;
    let mut status = None;
    while Instant::now() < until {
        if let Ok(Some(s)) = child.try_wait() {
            status = Some(ExitInfo::from_status(s));
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(Signal::KILL);
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

fn signal_group(group: u32, sig: Signal) {
    // 0 and 1 would address our own group or every process we may signal.
    if group <= 1 {
        return;
    }
    let Some(pgid) = i32::try_from(group)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    // The group `process_group(0)` created for our child (its pgid is its pid), never git
    // pair's own group. It may be gone already: nothing to do then.
    let _ = rustix::process::kill_process_group(pgid, sig);
}

/// Set by the SIGINT handler while a [`SigintGuard`] is alive.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// (live guards, the disposition to restore when the last one goes).
static SIGINT_STATE: Mutex<(usize, libc::sighandler_t)> = Mutex::new((0, libc::SIG_DFL));

extern "C" fn on_sigint(_signum: libc::c_int) {
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
            let handler: extern "C" fn(libc::c_int) = on_sigint;
            // SAFETY: installs a handler that only performs an atomic store, which is
            // async-signal-safe; `signal` itself has no memory-safety preconditions.
            let previous = unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
            state.1 = if previous == libc::SIG_ERR {
                libc::SIG_DFL
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
                libc::signal(libc::SIGINT, state.1);
            }
        }
    }
}

/// Finds an executable file: a name with a `/` is taken as a path, anything else is looked up
/// in `path_env` (the process's `PATH` when `None`).
pub fn find_executable(name: &str, path_env: Option<&OsStr>) -> Option<PathBuf> {
    if name.contains('/') {
        // Absolute, so a reviewer run in another working directory still finds it.
        let path = std::path::absolute(name).ok()?;
        return is_executable(&path).then_some(path);
    }
    let path_var = match path_env {
        Some(p) => p.to_os_string(),
        None => std::env::var_os("PATH")?,
    };
    std::env::split_paths(&path_var)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Asks the kernel to kill the child when git pair dies (Linux: the parent-death signal), so
/// a `git pair` killed with SIGKILL leaves no reviewer running; elsewhere a resumed review
/// kills the recorded group instead ([`kill_group_if_alive`]).
fn die_with_parent(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        let parent = std::process::id();
        // SAFETY: the closure runs in the forked child before exec and only makes two system
        // calls (prctl, getppid), both async-signal-safe; it allocates nothing.
        unsafe {
            command.pre_exec(move || {
                rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
                // The parent may have died between fork and prctl: then nobody would send the
                // signal, so leave now.
                if rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32)
                    != Some(parent)
                {
                    return Err(std::io::Error::other(
                        "git pair exited before the child started",
                    ));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// When process `pid` started, in clock ticks since boot (Linux `/proc/<pid>/stat` field 22);
/// `None` where that cannot be read (no such process, another OS).
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or parentheses: the
    // fields after it start after the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// This machine's host name, to tell whether a recorded process ran here.
pub fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// Whether the process `pid` that started at `start_time` is still running on this host.
/// A pid now held by a different process (another start time) is not alive.
pub fn is_alive(pid: u32, recorded_start: Option<u64>) -> bool {
    let Some(raw) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    if rustix::process::test_kill_process(raw).is_err() {
        // ESRCH: gone. (EPERM would mean alive but not ours: not a process git pair started.)
        return false;
    }
    match (recorded_start, start_time(pid)) {
        (Some(recorded), Some(now)) => recorded == now,
        // A zombie or a system without /proc: trust the pid.
        _ => true,
    }
}

/// Kills the process group led by `pid` when it is still the group that was recorded;
/// returns whether anything of it was alive. Used before re-running work whose earlier runner
/// died, so a resumed review never runs beside an orphan.
///
/// The group is ours when its leader is alive with the recorded start time, or when no
/// process holds the pid any more but the group still has members (the kernel never hands
/// out a pid that still names a process group, so such a group can only be the old one). A
/// pid now held by another process is left alone.
pub fn kill_group_if_alive(pid: u32, recorded_start: Option<u64>) -> bool {
    let Some(raw) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    let leader_exists = rustix::process::test_kill_process(raw).is_ok();
    let ours = if leader_exists {
        is_alive(pid, recorded_start)
    } else {
        rustix::process::test_kill_process_group(raw).is_ok()
    };
    if !ours {
        return false;
    }
    signal_group(pid, Signal::TERM);
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until && rustix::process::test_kill_process_group(raw).is_ok() {
        std::thread::sleep(Duration::from_millis(10));
    }
    signal_group(pid, Signal::KILL);
    true
}

/// A process git pair converses with over its stdin and stdout (a protocol client such as
/// the ACP reviewer's), started by [`spawn_duplex`]: its own process group, dying with git
/// pair, the environment and directory of its [`Spawn`], stderr's tail captured by a thread.
/// Reading and writing the pipes is the caller's; ending the process is this type's.
pub struct Duplex {
    child: Child,
    group: Option<u32>,
    /// The child's stdin, for the caller to write to (dropped to close it).
    pub stdin: Option<std::process::ChildStdin>,
    /// The child's stdout, for the caller to read from (on a thread of its own).
    pub stdout: Option<std::process::ChildStdout>,
    stderr: Arc<Mutex<Capture>>,
    stderr_thread: Option<JoinHandle<()>>,
    stderr_tail: usize,
    cancel: Cancel,
    _sigint: Option<SigintGuard>,
    started: Instant,
    /// [`Duplex::end`] ran: nothing is left for the drop to kill.
    ended: bool,
}

impl Drop for Duplex {
    fn drop(&mut self) {
        // A conversation abandoned without `end` (a panic, an early return) leaves no process.
        if !self.ended {
            self.stdin = None;
            let _ = terminate_group(self.group, &mut self.child, Duration::from_millis(200));
        }
    }
}

impl std::fmt::Debug for Duplex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Duplex")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

/// Starts `spawn` with piped stdin and stdout for a conversation ([`Duplex`]); `on_start` is
/// told its pid first. `Err` carries the operating system's reason it could not start.
pub fn spawn_duplex(
    spawn: &Spawn,
    stderr_tail: usize,
    cancel: &Cancel,
    on_start: &dyn Fn(Started),
) -> Result<Duplex, String> {
    let sigint = cancel.on_sigint.then(SigintGuard::install);
    let started = Instant::now();
    let mut command = command_for(&Spawn {
        stdin: Some(Vec::new()),
        ..spawn.clone()
    });
    let mut child = spawn_settled(&mut command)
        .map_err(|e| format!("cannot run {}: {e}", spawn.program.display()))?;
    let pid = child.id();
    on_start(Started {
        pid,
        start_time: start_time(pid),
    });
    let stderr = Arc::new(Mutex::new(Capture::default()));
    let stderr_thread = child.stderr.take().map(|err| {
        read_into(
            err,
            Arc::clone(&stderr),
            Keep::Tail(stderr_tail),
            RingOnDrop(Arc::new(Ended::default())),
        )
    });
    Ok(Duplex {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        group: (!spawn.share_terminal).then_some(pid),
        child,
        stderr,
        stderr_thread,
        stderr_tail,
        cancel: cancel.clone(),
        _sigint: sigint,
        started,
        ended: false,
    })
}

impl Duplex {
    /// Its pid (also its process group id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the caller's flag or Ctrl-C asked to cancel.
    pub fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Its exit status if it has exited (reaping it), without waiting.
    pub fn exited(&mut self) -> Option<ExitInfo> {
        self.child
            .try_wait()
            .ok()
            .flatten()
            .map(ExitInfo::from_status)
    }

    /// Waits up to `wait` for it to exit by itself (its stdin closed, say).
    pub fn wait_exit(&mut self, wait: Duration) -> Option<ExitInfo> {
        let until = Instant::now() + wait;
        loop {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Ends it: stdin closed, then SIGTERM to its group, `grace` for it to go, SIGKILL; and
    /// whatever it left running in its group goes too. Returns how it ended, the end of its
    /// stderr, the stderr bytes it wrote in all, and the time since it started.
    pub fn end(mut self, grace: Duration) -> (Option<ExitInfo>, Vec<u8>, u64, Duration) {
        self.stdin = None;
        let status = match self.exited() {
            Some(status) => {
                if let Some(group) = self.group {
                    signal_group(group, Signal::KILL);
                }
                Some(status)
            }
            None => terminate_group(self.group, &mut self.child, grace),
        };
        let duration = self.started.elapsed();
        // Bounded like [`Pipes::finish`]: a holder that escaped the group must not hold us.
        if let Some(thread) = self.stderr_thread.take() {
            let until = Instant::now() + grace.max(Duration::from_millis(500));
            while !thread.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        self.ended = true;
        let (tail, bytes, _) = take(&self.stderr, Some(self.stderr_tail));
        (status, tail, bytes, duration)
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
    ring: RingOnDrop,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let _ring = ring;
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

    #[test]
    fn a_pipe_thread_ending_wakes_the_wait_at_once() {
        let ended = Arc::new(Ended::default());
        let ring = RingOnDrop(Arc::clone(&ended));
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(ring);
        });
        let started = Instant::now();
        assert_eq!(ended.wait_past(0, Duration::from_secs(60)), 1);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "woken by the ring, not the timeout: {:?}",
            started.elapsed()
        );
        thread.join().expect("ringer");
        // Nothing new: the pause is waited out.
        let started = Instant::now();
        assert_eq!(ended.wait_past(1, Duration::from_millis(30)), 1);
        assert!(started.elapsed() >= Duration::from_millis(30));
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
    fn an_allow_list_passes_only_the_variables_it_names() {
        let allow = vec!["PATH".to_owned(), "LC_*".to_owned()];
        assert!(env_allowed(OsStr::new("PATH"), &allow));
        assert!(env_allowed(OsStr::new("LC_ALL"), &allow));
        assert!(!env_allowed(OsStr::new("PATHX"), &allow));
        assert!(!env_allowed(OsStr::new("GITHUB_TOKEN"), &allow));
        let out = run(
            &Spawn {
                env_allow: Some(allow),
                env: vec![("GIVEN".into(), "yes".into())],
                ..sh("env")
            },
            &limits(5_000),
            &Cancel::default(),
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("GIVEN=yes"), "{text}");
        assert!(
            text.lines().all(|l| l.starts_with("PATH=")
                || l.starts_with("LC_")
                || l.starts_with("GIVEN=")
                || l.starts_with("PWD=")),
            "{text}"
        );
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
                signal: Some(libc::SIGKILL)
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
        assert_eq!(f.status.and_then(|s| s.signal), Some(libc::SIGKILL));
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
    fn each_stdout_line_reaches_the_tap_while_the_process_runs() {
        let seen = Arc::new(Mutex::new(Vec::<(String, Duration)>::new()));
        let started = Instant::now();
        let tap = {
            let seen = Arc::clone(&seen);
            OnLine(Arc::new(move |line: &[u8]| {
                seen.lock().expect("lock").push((
                    String::from_utf8_lossy(line).into_owned(),
                    started.elapsed(),
                ));
            }))
        };
        let l = Limits {
            on_line: Some(tap),
            ..limits(10_000)
        };
        let f = run(
            &sh("echo one; echo two; sleep 1; echo three; sleep 1"),
            &l,
            &Cancel::default(),
        );
        assert_eq!(f.end, End::Exited);
        let seen = seen.lock().expect("lock");
        let lines: Vec<&str> = seen.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(lines, ["one", "two", "three"]);
        // Seen as it happened, not after the process ended.
        assert!(seen[0].1 < Duration::from_millis(900), "{:?}", seen[0].1);
        assert_eq!(f.stdout, b"one\ntwo\nthree\n", "the capture is whole");
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
    let path = find_executable(program, None).ok_or(ToolError::NotFound)?;
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
            share_terminal: false,
            env_allow: None,
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

/// How long a `git` transport command (fetch, push) may take before it is killed.
pub const GIT_TRANSPORT_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs `git args` in `dir` for network transport (what gix cannot do): `LC_ALL=C` so its
/// messages can be read, a null stdin, a bounded wait. When git pair runs at a terminal, git
/// stays in its process group so credential and ssh prompts still reach the user.
/// A non-zero exit is data ([`Finished::status`]); only a missing `git` is an error.
pub fn git(dir: &Path, args: &[String], timeout: Duration) -> Result<Finished, ToolError> {
    let program = find_executable("git", None).ok_or(ToolError::NotFound)?;
    let finished = run(
        &Spawn {
            program,
            args: args.to_vec(),
            env: vec![("LC_ALL".into(), "C".into())],
            cwd: Some(dir.to_path_buf()),
            stdin: None,
            share_terminal: std::io::stderr().is_terminal(),
            env_allow: None,
        },
        &Limits {
            timeout,
            stdout_cap: 256 * 1024 * 1024,
            ..Limits::default()
        },
        &Cancel {
            flag: None,
            on_sigint: false,
        },
    );
    match finished.end {
        End::SpawnFailed { .. } => Err(ToolError::NotFound),
        End::TimedOut => Err(ToolError::TimedOut {
            secs: timeout.as_secs(),
        }),
        _ => Ok(finished),
    }
}
