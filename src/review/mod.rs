//! Running reviewers and reading their answers (SPEC §6): realizations as data
//! ([`surface`]), capability probing ([`mod@probe`]), the one spawn builder ([`process`]),
//! fail-closed parsing ([`parse`], [`schema`]), the built-in reviewer ([`builtin`]), panel
//! arithmetic ([`panel`]) and which vendor session an attempt ran in ([`session`]). [`run_attempt`] ties them into one attempt → one [`Attempt`].
//! Stores nothing and prints nothing: dispatch records, retries, re-asks and rounds belong to
//! the caller.

pub mod acp;
pub mod binding;
pub mod builtin;
mod error;
pub mod panel;
pub mod parse;
pub mod probe;
pub mod probe_cache;
pub mod prompt;
pub mod schema;
pub mod session;
pub mod surface;
pub mod vendor_config;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use binding::{BoundRealization, Candidate, ProbeReport};
pub use builtin::{BuiltinOptions, BuiltinReview};
pub use error::Error;
pub use panel::{Parallelism, panel_parallelism, panel_verdict};
pub use parse::{Finding, Parsed, Severity, Verdict, parse_answer};
pub use probe::{ProbeRequest, probe};
pub use probe_cache::ProbeCache;
pub use session::SessionIdSource;
pub use surface::{RealizationKind, Surfaces};

use crate::process::{self, Cancel, End, Limits, Spawn};
use surface::{ArgvValues, PromptVia};

/// The one terminal outcome of a reviewer attempt (SPEC §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// It answered with a readable verdict.
    Completed,
    /// It ended normally but its answer holds no readable verdict (re-ask once).
    FailedValidation,
    /// It did not finish in time; its process group was killed.
    TimedOut,
    /// It crashed, was killed, exited non-zero, or the vendor reported its own failure.
    Died,
    /// Ctrl-C (or the caller) cancelled it; its process group was killed.
    Cancelled,
    /// It could not be started.
    NotStarted,
}

impl Outcome {
    /// The contract spelling (`completed`, `failed-validation`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::FailedValidation => "failed-validation",
            Outcome::TimedOut => "timed-out",
            Outcome::Died => "died",
            Outcome::Cancelled => "cancelled",
            Outcome::NotStarted => "not-started",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one attempt is asked to review.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReviewInput<'a> {
    /// The full prompt (packet, instructions, answer contract).
    pub prompt: &'a str,
    /// Resume this vendor session (a later round) when the realization can.
    pub resume_session_id: Option<&'a str>,
    /// Every changed file's diff, complete and unredacted (not the budget-cut packet): what
    /// the built-in reviewer reads. Only filled when the built-in is a reviewer of the round.
    pub files: &'a [crate::diff::FileDiff],
    /// What the scanner found in `files` (each as it reports a scan of its file's text): the
    /// built-in reviewer quotes no line without redacting them.
    pub secrets: &'a [crate::secrets::Finding],
    /// This attempt's marker line (`<!-- git-pair: <run>/<round>/<attempt> -->`), which the
    /// prompt carries: how the vendor's session file is told apart when the output names no
    /// session.
    pub marker: Option<&'a str>,
    /// Each added or modified file's size in the reviewed snapshot (a diff does not show a
    /// file whole, a binary one not at all); what the built-in reviewer's size check judges.
    pub file_sizes: &'a [(String, u64)],
}

/// How to run an attempt.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Bound on the reviewer (`--timeout`, `pair.reviewTimeout`; default 600 s).
    pub timeout: Duration,
    /// SIGTERM → SIGKILL grace for the reviewer's process group.
    pub kill_grace: Duration,
    /// Stdout bytes kept (the rest is counted and dropped).
    pub stdout_cap: usize,
    /// Stderr bytes kept from the end.
    pub stderr_tail: usize,
    /// Reviewer working directory for a realization that runs in the work tree (the
    /// caller's when `None`).
    pub cwd: Option<PathBuf>,
    /// The directory holding only the reviewed snapshot, where a realization whose `workdir`
    /// is `snapshot` runs (`cwd` when `None`).
    pub snapshot_dir: Option<PathBuf>,
    /// The directory holding only the reviewed snapshot at the run's stable path, where a
    /// realization whose `workdir` is `run-snapshot` runs (`snapshot_dir`, then `cwd`, when
    /// `None`).
    pub run_snapshot_dir: Option<PathBuf>,
    /// Variables added to the reviewer's environment.
    pub env: Vec<(OsString, OsString)>,
    /// Names the reviewer inherits besides the realization's own `env` list
    /// (`pair.reviewerEnv`; exact names, or prefixes ending in `*`).
    pub env_allow: Vec<String>,
    /// Ask for schema-constrained answers when the realization can.
    pub structured_output: bool,
    /// Set to cancel from another thread.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Turn Ctrl-C during the wait into a `cancelled` outcome.
    pub handle_sigint: bool,
    /// Built-in reviewer settings.
    pub builtin: BuiltinOptions,
    /// Told the pid of every reviewer process started, so a later command can kill one that
    /// outlived a killed `git pair`.
    pub on_start: Option<process::OnStart>,
    /// Where agents keep their session logs: searched for the attempt marker when the output
    /// names no session (none: the second tier is not tried).
    pub session_logs: Option<crate::cost::LogRoots>,
    /// How often a running reviewer's elapsed time is told to the progress callback.
    pub heartbeat: Duration,
    /// The reviewer choices set (`model`, `effort` → value): each reaches the argv through
    /// the group its realization declares, checked against its shape first.
    pub choices: std::collections::BTreeMap<&'static str, String>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        let limits = Limits::default();
        RunOptions {
            timeout: limits.timeout,
            kill_grace: limits.kill_grace,
            stdout_cap: limits.stdout_cap,
            stderr_tail: limits.stderr_tail,
            cwd: None,
            snapshot_dir: None,
            run_snapshot_dir: None,
            env: Vec::new(),
            env_allow: Vec::new(),
            structured_output: true,
            cancel: None,
            handle_sigint: true,
            builtin: BuiltinOptions::default(),
            on_start: None,
            session_logs: None,
            heartbeat: Duration::from_secs(30),
            choices: std::collections::BTreeMap::new(),
        }
    }
}

/// Everything about one reviewer attempt, whatever happened. Raw stdout is kept in
/// `stdout` for the caller to store as a blob; it is not part of the serialized form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Realization name.
    pub realization: String,
    /// The terminal outcome.
    pub outcome: Outcome,
    /// The resume argv was used.
    pub resumed: bool,
    /// Schema-constrained output was requested.
    pub structured_output: bool,
    /// Program and arguments as run (`["builtin"]` for the built-in reviewer).
    pub argv: Vec<String>,
    /// Exit code, when the process exited.
    pub exit_code: Option<i32>,
    /// Terminating signal, when one ended it.
    pub signal: Option<i32>,
    /// Raw stdout (up to the cap).
    #[serde(skip)]
    pub stdout: Vec<u8>,
    /// Total stdout bytes written.
    pub stdout_bytes: u64,
    /// Stdout went over the cap.
    pub stdout_truncated: bool,
    /// The end of stderr.
    #[serde(with = "lossy")]
    pub stderr_tail: Vec<u8>,
    /// Total stderr bytes written.
    pub stderr_bytes: u64,
    /// Spawn to end.
    pub duration_ms: u64,
    /// The vendor session id, for cost and resuming; it fits the realization's shape.
    pub session_id: Option<String>,
    /// The vendor's own figure for its session's cost in USD (a finite, non-negative number),
    /// when its output carries one (`claude -p`'s `total_cost_usd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Which tier found `session_id`: the reviewer's `output`, or the vendor's
    /// `session-file` holding the attempt marker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id_from: Option<SessionIdSource>,
    /// Why a session id that was found was refused (it did not fit the declared shape, or
    /// several session files held the marker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id_refused: Option<String>,
    /// The answer text read from the realization's answer source.
    pub answer: Option<String>,
    /// The parsed answer (completed and failed-validation attempts).
    pub parsed: Option<Parsed>,
    /// Why the attempt ended as it did, for the user.
    pub message: Option<String>,
    /// The vendor's own words when it reported its failure (error event, `is_error`, stderr).
    pub vendor_message: Option<String>,
    /// What kind of failure the vendor reported (from its HTTP status, else its words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<surface::FailureKind>,
    /// The HTTP status of the vendor's failure, when it printed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// The vendor already retried on its own before this attempt ended (it reported a final
    /// failure, or kept retrying what it cannot do): git pair does not retry on top.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cli_retried: bool,
    /// The vendor's warnings (never its failure, never the answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The token usage the reviewer reported for its turn, as it reported it (an ACP agent's
    /// prompt response `usage`): kept, not priced (it names no model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<serde_json::Value>,
}

impl Attempt {
    /// The verdict, for a completed attempt only.
    pub fn verdict(&self) -> Option<Verdict> {
        match (&self.outcome, &self.parsed) {
            (Outcome::Completed, Some(Parsed::Verdict { verdict, .. })) => Some(*verdict),
            _ => None,
        }
    }

    /// The findings, for a completed attempt only.
    pub fn findings(&self) -> &[Finding] {
        match (&self.outcome, &self.parsed) {
            (Outcome::Completed, Some(Parsed::Verdict { findings, .. })) => findings,
            _ => &[],
        }
    }

    /// A resumed attempt that died or could not start, on a realization whose data says to
    /// fall back: the caller should now run a fresh attempt (no `resume_session_id`).
    pub fn should_retry_fresh(&self, bound: &BoundRealization) -> bool {
        self.resumed
            && bound.resume_falls_back_to_fresh()
            && matches!(self.outcome, Outcome::Died | Outcome::NotStarted)
    }

    fn new(bound: &BoundRealization) -> Attempt {
        Attempt {
            realization: bound.name.clone(),
            outcome: Outcome::NotStarted,
            resumed: false,
            structured_output: false,
            argv: Vec::new(),
            exit_code: None,
            signal: None,
            stdout: Vec::new(),
            stdout_bytes: 0,
            stdout_truncated: false,
            stderr_tail: Vec::new(),
            stderr_bytes: 0,
            duration_ms: 0,
            session_id: None,
            cost_usd: None,
            session_id_from: None,
            session_id_refused: None,
            answer: None,
            parsed: None,
            message: None,
            vendor_message: None,
            failure: None,
            http_status: None,
            cli_retried: false,
            warnings: Vec::new(),
            usage: None,
        }
    }

    /// Whether another call could end differently: not after a timeout (the review's time is
    /// spent) or a cancellation, not after an authentication failure, and not after the
    /// vendor's own retry chain already ran out.
    pub fn retry_may_help(&self) -> bool {
        match self.outcome {
            Outcome::Died | Outcome::NotStarted => {
                !self.cli_retried && self.failure != Some(surface::FailureKind::Auth)
            }
            _ => false,
        }
    }

    /// What happened, in words: `authentication failed (HTTP 401)`, `server error`, ….
    pub fn what_happened(&self) -> Option<String> {
        let kind = self.failure?.says();
        Some(match self.http_status {
            Some(status) => format!("{kind} (HTTP {status})"),
            None => kind.to_owned(),
        })
    }
}

/// Runs one reviewer attempt: renders argv from the realization's data, spawns it through
/// [`process::run`] (bounded, own process group, Ctrl-C aware), reads the answer and session
/// id the way the data says, and parses the answer fail-closed. Never returns an error: every
/// failure is an [`Outcome`] with a message.
pub fn run_attempt(
    bound: &BoundRealization,
    input: &ReviewInput<'_>,
    options: &RunOptions,
) -> Attempt {
    run_attempt_with_progress(bound, input, options, &|_| {})
}

/// [`run_attempt`], telling `progress` of the vendor's own retries as it prints them (its
/// `retry_events`), each as `<reviewer>: <the vendor's words>`.
pub fn run_attempt_with_progress(
    bound: &BoundRealization,
    input: &ReviewInput<'_>,
    options: &RunOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Attempt {
    let mut attempt = Attempt::new(bound);
    if bound.realization.kind == RealizationKind::Builtin {
        let started = Instant::now();
        let review = builtin::review(
            input.files,
            input.secrets,
            input.file_sizes,
            &options.builtin,
        );
        attempt.argv = vec![bound.name.clone()];
        attempt.outcome = Outcome::Completed;
        attempt.stdout = review.text.clone().into_bytes();
        attempt.stdout_bytes = attempt.stdout.len() as u64;
        attempt.parsed = Some(Parsed::Verdict {
            verdict: review.verdict,
            findings: review.findings,
            notes: Vec::new(),
        });
        attempt.answer = Some(review.text);
        attempt.duration_ms = millis(started.elapsed());
        return attempt;
    }
    if bound.realization.kind == RealizationKind::Acp {
        return acp_attempt(bound, input, options, progress);
    }
    let prepared = match prepare(bound, input, options) {
        Ok(p) => p,
        Err(message) => {
            attempt.message = Some(message);
            return attempt;
        }
    };
    attempt.resumed = prepared.resumed;
    attempt.structured_output = prepared.structured;
    attempt.argv = prepared.argv();

    let spawned_at = std::time::SystemTime::now();
    // The vendor's own retries, bounded by the time this attempt has.
    let mut env = options.env.clone();
    // The realization's fixed switches (project configuration off) win over anything
    // inherited or added.
    env.extend(
        bound
            .realization
            .env_set
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    env.extend(
        bound
            .realization
            .own_retry_env(options.timeout)
            .into_iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    // Retry events go through a channel to a thread of this scope (the tap runs on the
    // waiting thread and must own what it holds); between them, the thread says how long
    // the reviewer has been running.
    let (lines, retries) = std::sync::mpsc::channel::<String>();
    let on_line = (!bound.realization.failure.retry_events.is_empty()).then(|| {
        let realization = bound.realization.clone();
        let lines = Mutex::new(lines.clone());
        process::OnLine(Arc::new(move |line: &[u8]| {
            if let Some(said) = realization.retry_event(line) {
                let _ = lines.lock().unwrap_or_else(|p| p.into_inner()).send(said);
            }
        }))
    });
    let finished = std::thread::scope(|scope| {
        let label = bound.label();
        let heartbeat = options.heartbeat;
        scope.spawn(move || {
            let started = Instant::now();
            loop {
                match retries.recv_timeout(heartbeat.max(Duration::from_millis(100))) {
                    Ok(said) => progress(&format!(
                        "{label}: {}",
                        crate::util::first_line_clipped(&said, 200)
                    )),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => progress(&format!(
                        "{label}: still running ({} s)…",
                        started.elapsed().as_secs()
                    )),
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        });
        let finished = spawn_reviewer(bound, input, options, &prepared, env, on_line);
        drop(lines);
        finished
    });
    finish_attempt(
        attempt, bound, input, options, &prepared, finished, spawned_at,
    )
}

/// Spawns the prepared reviewer and waits for it (bounded, its own group, Ctrl-C aware).
fn spawn_reviewer(
    bound: &BoundRealization,
    input: &ReviewInput<'_>,
    options: &RunOptions,
    prepared: &Prepared,
    env: Vec<(OsString, OsString)>,
    on_line: Option<process::OnLine>,
) -> process::Finished {
    let on_start = |started: process::Started| {
        if let Some(hook) = &options.on_start {
            (hook.0)(started);
        }
    };
    process::run_observed(
        &Spawn {
            program: prepared.program.clone(),
            args: prepared.args.clone(),
            env,
            // Only what the realization declares it needs (and the user added): never the
            // caller's tokens and cloud credentials.
            env_allow: Some(reviewer_env_allow(bound, options)),
            cwd: reviewer_cwd(bound, options),
            stdin: (bound.realization.prompt == PromptVia::Stdin)
                .then(|| input.prompt.as_bytes().to_vec()),
            share_terminal: false,
        },
        &Limits {
            timeout: options.timeout,
            kill_grace: options.kill_grace,
            stdout_cap: options.stdout_cap,
            stderr_tail: options.stderr_tail,
            give_up: bound.realization.failure.give_up_rule(),
            on_line,
        },
        &Cancel {
            flag: options.cancel.clone(),
            on_sigint: options.handle_sigint,
        },
        &on_start,
    )
}

/// One attempt through an ACP agent ([`acp::review`]): the conversation's end as an outcome.
/// Only a turn that ended with `end_turn` is read, by the one parser.
fn acp_attempt(
    bound: &BoundRealization,
    input: &ReviewInput<'_>,
    options: &RunOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Attempt {
    let mut attempt = Attempt::new(bound);
    let Some(program) = bound.program.clone() else {
        attempt.message = Some("no ACP agent command is configured (pair.acpCommand)".into());
        return attempt;
    };
    attempt.argv = std::iter::once(program.display().to_string())
        .chain(bound.command_args.iter().cloned())
        .collect();
    let on_start = |started: process::Started| {
        if let Some(hook) = &options.on_start {
            (hook.0)(started);
        }
    };
    let fits = |id: &str| bound.realization.session_id_fits(id);
    let seen = acp::review(&acp::Call {
        spawn: Spawn {
            program,
            args: bound.command_args.clone(),
            env: options.env.clone(),
            env_allow: Some(reviewer_env_allow(bound, options)),
            cwd: reviewer_cwd(bound, options),
            stdin: None,
            share_terminal: false,
        },
        prompt: input.prompt,
        resume_session_id: input.resume_session_id,
        session_id_fits: &fits,
        timeout: options.timeout,
        kill_grace: options.kill_grace,
        stderr_tail: options.stderr_tail,
        transcript_cap: options.stdout_cap.min(16 * 1024 * 1024),
        cancel: Cancel {
            flag: options.cancel.clone(),
            on_sigint: options.handle_sigint,
        },
        on_start: &on_start,
        heartbeat: options.heartbeat,
        label: bound.label(),
        progress,
    });
    attempt.resumed = seen.resumed;
    attempt.exit_code = seen.status.and_then(|s| s.code);
    attempt.signal = seen.status.and_then(|s| s.signal);
    attempt.stdout_bytes = seen.transcript_bytes;
    attempt.stdout_truncated = seen.transcript_bytes > seen.transcript.len() as u64;
    attempt.stdout = seen.transcript;
    attempt.stderr_bytes = seen.stderr_bytes;
    attempt.stderr_tail = seen.stderr_tail;
    attempt.duration_ms = millis(seen.duration);
    attempt.session_id_from = seen.session_id.as_ref().map(|_| SessionIdSource::Output);
    attempt.session_id = seen.session_id;
    attempt.session_id_refused = seen.session_id_refused;
    attempt.cost_usd = seen.cost_usd;
    attempt.warnings = seen.warnings;
    match seen.turn {
        acp::Turn::NotStarted(message) => attempt.message = Some(message),
        acp::Turn::Answered { stop, usage } => {
            attempt.usage = usage;
            acp_answered(&mut attempt, stop, seen.answer, seen.answer_cut);
        }
        acp::Turn::Refused { call, error } => {
            let words = acp::clip(&error.message);
            let (status, kind) = bound.realization.classify_failure(&words);
            attempt.http_status = status;
            attempt.failure =
                if error.code == agent_client_protocol_schema::v1::ErrorCode::AuthRequired {
                    Some(surface::FailureKind::Auth)
                } else {
                    kind
                };
            let what = attempt
                .what_happened()
                .unwrap_or_else(|| format!("the agent refused {call}"));
            attempt.outcome = Outcome::Died;
            attempt.message = Some(format!("{what}: {words}"));
            attempt.vendor_message = Some(words);
        }
        acp::Turn::Stopped { during, stop } => {
            attempt.outcome = match stop {
                acp::Stop::TimedOut => Outcome::TimedOut,
                acp::Stop::Cancelled => Outcome::Cancelled,
                _ => Outcome::Died,
            };
            attempt.message = Some(match &stop {
                acp::Stop::TimedOut => format!(
                    "timed out: no answer within {} s; session/cancel was sent and the agent's process group was killed",
                    options.timeout.as_secs_f64()
                ),
                acp::Stop::Cancelled => {
                    "cancelled; session/cancel was sent and the agent's process group was killed"
                        .into()
                }
                other => {
                    let exit = seen.status.map(|s| format!(" ({s})")).unwrap_or_default();
                    format!("{} during {during}{exit}", other.says())
                }
            });
            if stop == acp::Stop::Closed {
                let tail = String::from_utf8_lossy(&attempt.stderr_tail).into_owned();
                attempt.vendor_message = tail
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .map(acp::clip);
            }
        }
    }
    attempt
}

/// The outcome of an ACP prompt turn that ended: only `end_turn` carries an answer to read.
fn acp_answered(
    attempt: &mut Attempt,
    stop: agent_client_protocol_schema::v1::StopReason,
    answer: String,
    cut: bool,
) {
    use agent_client_protocol_schema::v1::StopReason;
    let no_verdict = |attempt: &mut Attempt, reason: String| {
        attempt.outcome = Outcome::FailedValidation;
        attempt.message = Some(reason.clone());
        attempt.parsed = Some(Parsed::NoVerdict { reason });
    };
    attempt.answer = (!answer.is_empty()).then(|| answer.clone());
    match stop {
        StopReason::EndTurn if cut => no_verdict(
            attempt,
            format!(
                "the agent's answer went over the {}-byte limit and was cut; a cut answer is never read",
                acp::MAX_ANSWER_BYTES
            ),
        ),
        StopReason::EndTurn if answer.trim().is_empty() => {
            no_verdict(attempt, "the agent's answer is empty".into());
        }
        StopReason::EndTurn => {
            let parsed = parse_answer(answer.as_bytes());
            match &parsed {
                Parsed::Verdict { .. } => attempt.outcome = Outcome::Completed,
                Parsed::NoVerdict { reason } => {
                    attempt.outcome = Outcome::FailedValidation;
                    attempt.message = Some(reason.clone());
                }
            }
            attempt.parsed = Some(parsed);
        }
        StopReason::Cancelled => {
            attempt.outcome = Outcome::Died;
            attempt.message = Some("the agent cancelled its turn (stop reason cancelled)".into());
        }
        other => {
            let reason = serde_json::to_value(other)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "unknown".into());
            no_verdict(
                attempt,
                format!(
                    "the agent stopped before finishing its answer (stop reason {reason}); an unfinished answer is never read"
                ),
            );
        }
    }
}

/// The only names of git pair's environment a reviewer inherits: its realization's, and the
/// user's additions (`pair.reviewerEnv`); never the caller's tokens and cloud credentials.
fn reviewer_env_allow(bound: &BoundRealization, options: &RunOptions) -> Vec<String> {
    bound
        .realization
        .env
        .iter()
        .chain(&options.env_allow)
        .cloned()
        .collect()
}

/// Where a reviewer runs, by its realization's `workdir`.
fn reviewer_cwd(bound: &BoundRealization, options: &RunOptions) -> Option<PathBuf> {
    match bound.realization.workdir {
        surface::Workdir::Snapshot => options.snapshot_dir.clone().or_else(|| options.cwd.clone()),
        surface::Workdir::RunSnapshot => options
            .run_snapshot_dir
            .clone()
            .or_else(|| options.snapshot_dir.clone())
            .or_else(|| options.cwd.clone()),
        surface::Workdir::WorkTree => options.cwd.clone(),
    }
}

/// Reads a finished reviewer's output into its attempt: answer, session, outcome.
fn finish_attempt(
    mut attempt: Attempt,
    bound: &BoundRealization,
    input: &ReviewInput<'_>,
    options: &RunOptions,
    prepared: &Prepared,
    finished: process::Finished,
    spawned_at: std::time::SystemTime,
) -> Attempt {
    let output_file_bytes = std::fs::read(&prepared.output_file).ok();
    let seen = bound.realization.interpret(
        &finished.stdout,
        &finished.stderr_tail,
        output_file_bytes.as_deref(),
    );

    attempt.exit_code = finished.status.and_then(|s| s.code);
    attempt.signal = finished.status.and_then(|s| s.signal);
    attempt.stdout_bytes = finished.stdout_bytes;
    attempt.stdout_truncated = finished.stdout_truncated;
    attempt.stderr_bytes = finished.stderr_bytes;
    attempt.duration_ms = millis(finished.duration);
    if !matches!(finished.end, End::SpawnFailed { .. }) {
        let session = session::resolve(
            &bound.realization,
            seen.session_id.clone(),
            input.marker,
            options.session_logs.as_ref(),
            spawned_at,
        );
        attempt.session_id = session.id;
        attempt.session_id_from = session.from;
        attempt.session_id_refused = session.refused;
    }
    attempt.cost_usd = seen
        .cost_usd
        .as_deref()
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|usd| usd.is_finite() && *usd >= 0.0);
    attempt.answer = seen.answer.clone();
    decide(&mut attempt, &finished.end, finished.status, &seen, options);
    attempt.cli_retried = matches!(finished.end, End::GaveUp { .. })
        || (attempt.outcome == Outcome::Died
            && seen.fatal.is_some()
            && !seen.before_request
            && bound.realization.failure.fatal_after_own_retries);
    attempt.stdout = finished.stdout;
    attempt.stderr_tail = finished.stderr_tail;
    attempt
}

/// The command line [`run_attempt`] would run for these inputs (program first), for
/// `review --dry-run`. Temporary file paths in it are examples: each attempt gets its own.
pub fn planned_argv(
    bound: &BoundRealization,
    input: &ReviewInput<'_>,
    options: &RunOptions,
) -> Result<Vec<String>, String> {
    if bound.realization.kind == RealizationKind::Builtin {
        return Ok(vec![bound.name.clone()]);
    }
    if bound.realization.kind == RealizationKind::Acp {
        let program = bound
            .program
            .as_deref()
            .ok_or_else(|| "no ACP agent command is configured (pair.acpCommand)".to_owned())?;
        return Ok(std::iter::once(program.display().to_string())
            .chain(bound.command_args.iter().cloned())
            .collect());
    }
    prepare(bound, input, options).map(|p| p.argv())
}

/// An attempt ready to spawn; its scratch directory (output, schema and prompt files) lives
/// as long as it does.
struct Prepared {
    _scratch: tempfile::TempDir,
    program: PathBuf,
    args: Vec<String>,
    output_file: PathBuf,
    resumed: bool,
    structured: bool,
}

impl Prepared {
    fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect()
    }
}

fn prepare(
    bound: &BoundRealization,
    input: &ReviewInput<'_>,
    options: &RunOptions,
) -> Result<Prepared, String> {
    let program = bound
        .program
        .clone()
        .ok_or_else(|| format!("realization `{}` has no program to run", bound.name))?;
    // A session id from a record reaches the argv only in the realization's declared shape:
    // anything else means a fresh review.
    let resume = match (input.resume_session_id, &bound.realization.resume) {
        (Some(id), Some(spec))
            if bound.supports_resume() && bound.realization.session_id_fits(id) =>
        {
            Some((id, spec))
        }
        _ => None,
    };
    let template = resume.map_or(&bound.realization.argv, |(_, spec)| &spec.argv);
    let structured = options.structured_output && bound.supports_structured_output();
    let scratch = tempfile::Builder::new()
        .prefix("git-pair-review-")
        .tempdir()
        .map_err(|e| format!("cannot create a temporary directory for the reviewer: {e}"))?;
    let uses = |name: &str| {
        bound
            .realization
            .uses_placeholder(template, structured, name)
    };
    let mut values = ArgvValues {
        structured_output: structured,
        command_args: bound.command_args.clone(),
        capabilities: bound.capabilities.clone(),
        ..ArgvValues::default()
    };
    // Tables of the vendor's own config an isolation group is repeated for (its MCP
    // servers), read as the reviewer will see its environment.
    for each in bound.realization.each_tables(template, &bound.capabilities) {
        let env = |name: &str| reviewer_env_var(bound, options, name);
        let names = match (
            vendor_config::resolve(&each.file, &env),
            regex::Regex::new(&each.name_shape),
        ) {
            (Some(path), Ok(shape)) => vendor_config::table_names(&path, &each.table, &shape),
            _ => Vec::new(),
        };
        values.table_names.insert(each.clone(), names);
    }
    for (&choice, value) in &options.choices {
        bound
            .realization
            .check_choice(&bound.label(), choice, value, &bound.capabilities)?;
        values.choices.insert(choice, value.clone());
    }
    let output_file = scratch.path().join("last-message.txt");
    values
        .scalars
        .insert("output_file", output_file.display().to_string());
    if let Some((id, _)) = resume {
        values.scalars.insert("session_id", id.to_owned());
    }
    if uses("schema_json") {
        values
            .scalars
            .insert("schema_json", schema::review_schema_compact());
    }
    if bound.realization.prompt == PromptVia::Argument {
        values.scalars.insert("prompt", input.prompt.to_owned());
    }
    let mut files: Vec<(PathBuf, &[u8])> = Vec::new();
    if uses("schema_file") {
        let path = scratch.path().join("review.schema.json");
        values
            .scalars
            .insert("schema_file", path.display().to_string());
        files.push((path, schema::REVIEW_SCHEMA_TEXT.as_bytes()));
    }
    if bound.realization.prompt == PromptVia::File {
        let path = scratch.path().join("prompt.md");
        values
            .scalars
            .insert("prompt_file", path.display().to_string());
        files.push((path, input.prompt.as_bytes()));
    }
    for (path, bytes) in files {
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let args = bound
        .realization
        .render_argv(template, &values)
        .map_err(|e| format!("cannot build the `{}` command line: {e}", bound.name))?;
    Ok(Prepared {
        _scratch: scratch,
        program,
        args,
        output_file,
        resumed: resume.is_some(),
        structured,
    })
}

/// The value the reviewer's environment will hold for `name`: what git pair adds, else
/// what it inherits through the realization's allow-list (and `pair.reviewerEnv`).
fn reviewer_env_var(bound: &BoundRealization, options: &RunOptions, name: &str) -> Option<String> {
    if let Some((_, value)) = options.env.iter().rev().find(|(k, _)| k == name) {
        return value.to_str().map(str::to_owned);
    }
    let allow: Vec<String> = bound
        .realization
        .env
        .iter()
        .chain(&options.env_allow)
        .cloned()
        .collect();
    process::env_allowed(std::ffi::OsStr::new(name), &allow)
        .then(|| std::env::var(name).ok())
        .flatten()
}

/// The attempt's outcome and message from how its process ended and what it printed. A
/// message says what happened first (timed out, authentication failed, server error (HTTP
/// n), connection dropped), the vendor's words after it; a vendor warning is never either.
fn decide(
    attempt: &mut Attempt,
    end: &End,
    status: Option<process::ExitInfo>,
    seen: &surface::Interpretation,
    options: &RunOptions,
) {
    let vendor = seen.fatal.clone().or_else(|| seen.hint.clone());
    attempt.warnings = seen.warnings.clone();
    attempt.http_status = seen.status;
    attempt.failure = seen.kind;
    let what = attempt.what_happened();
    // "<what happened>: <vendor's words>", or `fallback` before the words when the kind of
    // failure is not known.
    let said = |fallback: &str, words: &str| match &what {
        Some(what) => format!("{what}: {words}"),
        None => format!("{fallback}: {words}"),
    };
    match end {
        End::SpawnFailed { message } => {
            attempt.outcome = Outcome::NotStarted;
            attempt.message = Some(message.clone());
        }
        End::TimedOut => {
            attempt.outcome = Outcome::TimedOut;
            let mut message = format!(
                "timed out: no answer within {} s; the reviewer's process group was killed",
                options.timeout.as_secs_f64()
            );
            if let Some(what) = &what {
                message.push_str(&format!(" (it was retrying: {what})"));
            }
            attempt.message = Some(message);
            attempt.vendor_message = vendor;
        }
        End::GaveUp { line } => {
            let words = seen
                .hint
                .clone()
                .or_else(|| seen.fatal.clone())
                .unwrap_or_else(|| line.clone());
            attempt.outcome = Outcome::Died;
            attempt.message = Some(format!(
                "{}; stopped it: the reviewer kept retrying something it cannot do: {words}",
                what.as_deref().unwrap_or("no connection")
            ));
            attempt.vendor_message = Some(words);
        }
        End::Cancelled => {
            attempt.outcome = Outcome::Cancelled;
            attempt.message = Some("cancelled; the reviewer's process group was killed".into());
        }
        End::Exited => {
            let exit =
                status.map_or_else(|| "an unknown exit status".to_owned(), |s| s.to_string());
            if let Some(fatal) = &seen.fatal {
                attempt.outcome = Outcome::Died;
                attempt.message = Some(said(
                    &format!("the reviewer reported a failure ({exit})"),
                    fatal,
                ));
                attempt.vendor_message = Some(fatal.clone());
            } else if !status.is_some_and(|s| s.success()) {
                attempt.outcome = Outcome::Died;
                attempt.message = Some(match &vendor {
                    Some(v) => said(&format!("the reviewer failed ({exit})"), v),
                    None => format!("the reviewer failed ({exit})"),
                });
                attempt.vendor_message = vendor;
            } else if attempt.stdout_truncated {
                // Output cut at the capture limit is no answer (SPEC §6.3): its head can end
                // anywhere, on a line the reviewer quoted as well as on its own.
                let reason = format!(
                    "the reviewer's output went over the {}-byte capture limit and was cut; a cut answer is never read",
                    options.stdout_cap
                );
                attempt.outcome = Outcome::FailedValidation;
                attempt.message = Some(reason.clone());
                attempt.parsed = Some(Parsed::NoVerdict { reason });
            } else {
                match &seen.answer {
                    None => {
                        // Silence plus a vendor error is the vendor failing, not a review.
                        if let Some(v) = vendor {
                            attempt.outcome = Outcome::Died;
                            attempt.message = Some(said("the reviewer gave no answer", &v));
                            attempt.vendor_message = Some(v);
                        } else {
                            attempt.outcome = Outcome::FailedValidation;
                            attempt.message = Some("the reviewer printed no answer".into());
                            attempt.parsed = Some(Parsed::NoVerdict {
                                reason: "the answer is empty".into(),
                            });
                        }
                    }
                    Some(answer) => {
                        let parsed = parse_answer(answer.as_bytes());
                        match &parsed {
                            Parsed::Verdict { .. } => attempt.outcome = Outcome::Completed,
                            Parsed::NoVerdict { reason } => {
                                attempt.outcome = Outcome::FailedValidation;
                                attempt.message = Some(reason.clone());
                            }
                        }
                        attempt.parsed = Some(parsed);
                    }
                }
            }
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Bytes serialized as (lossily decoded) text.
mod lossy {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&String::from_utf8_lossy(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        Ok(String::deserialize(d)?.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use process::ExitInfo;
    use surface::Interpretation;

    fn exit(code: i32) -> Option<ExitInfo> {
        Some(ExitInfo {
            code: Some(code),
            signal: None,
        })
    }

    fn seen(answer: Option<&str>, fatal: Option<&str>, hint: Option<&str>) -> Interpretation {
        Interpretation {
            answer: answer.map(str::to_owned),
            session_id: None,
            cost_usd: None,
            fatal: fatal.map(str::to_owned),
            hint: hint.map(str::to_owned),
            ..Interpretation::default()
        }
    }

    #[test]
    fn outcome_decision_table() {
        let approve = Some("VERDICT: APPROVED");
        let killed = Some(ExitInfo {
            code: None,
            signal: Some(9),
        });
        type Row<'a> = (
            &'a str,
            End,
            Option<ExitInfo>,
            Interpretation,
            Outcome,
            Option<&'a str>,
        );
        let cases: Vec<Row> = vec![
            (
                "verdict despite a transient reconnect",
                End::Exited,
                exit(0),
                seen(approve, None, Some("Reconnecting... 1/5")),
                Outcome::Completed,
                None,
            ),
            (
                "silence with a vendor error is the vendor failing",
                End::Exited,
                exit(0),
                seen(None, None, Some("waiting for network")),
                Outcome::Died,
                Some("waiting for network"),
            ),
            (
                "silence alone",
                End::Exited,
                exit(0),
                seen(None, None, None),
                Outcome::FailedValidation,
                None,
            ),
            (
                "prose without verdict",
                End::Exited,
                exit(0),
                seen(Some("fine"), None, None),
                Outcome::FailedValidation,
                None,
            ),
            (
                "non-zero exit never approves",
                End::Exited,
                exit(1),
                seen(approve, None, None),
                Outcome::Died,
                None,
            ),
            (
                "fatal event beats an approving answer",
                End::Exited,
                exit(0),
                seen(approve, Some("turn failed"), None),
                Outcome::Died,
                Some("turn failed"),
            ),
            (
                "killed by a signal",
                End::Exited,
                killed,
                seen(None, None, None),
                Outcome::Died,
                None,
            ),
            (
                "timed out keeps the last vendor words",
                End::TimedOut,
                killed,
                seen(approve, None, Some("reconnecting")),
                Outcome::TimedOut,
                Some("reconnecting"),
            ),
            (
                "cancelled",
                End::Cancelled,
                killed,
                seen(approve, None, None),
                Outcome::Cancelled,
                None,
            ),
            (
                "spawn failed",
                End::SpawnFailed {
                    message: "no such file".into(),
                },
                None,
                seen(None, None, None),
                Outcome::NotStarted,
                None,
            ),
        ];
        let bound = command_bound();
        for (name, end, status, interpretation, outcome, vendor) in cases {
            let mut a = Attempt::new(&bound);
            decide(
                &mut a,
                &end,
                status,
                &interpretation,
                &RunOptions::default(),
            );
            assert_eq!(a.outcome, outcome, "{name}");
            assert_eq!(a.vendor_message.as_deref(), vendor, "{name}");
            assert!(
                a.message.is_some() || outcome == Outcome::Completed,
                "{name}"
            );
            assert_eq!(
                a.verdict().is_some(),
                outcome == Outcome::Completed,
                "{name}"
            );
        }
    }

    /// The shipped `command` realization, bound to nothing: what a decision test judges.
    fn command_bound() -> BoundRealization {
        BoundRealization {
            name: "t".into(),
            realization: Surfaces::shipped()
                .expect("shipped")
                .get("command")
                .expect("command")
                .clone(),
            program: None,
            command_args: vec![],
            capabilities: Default::default(),
            fallback_used: false,
        }
    }

    #[test]
    fn failure_messages_say_what_happened_before_the_vendors_words() {
        let bound = command_bound();
        let mut auth = seen(None, Some("Invalid API key · Please run /login"), None);
        auth.status = Some(401);
        auth.kind = Some(surface::FailureKind::Auth);
        let mut a = Attempt::new(&bound);
        decide(&mut a, &End::Exited, exit(1), &auth, &RunOptions::default());
        assert_eq!(
            a.message.as_deref(),
            Some("authentication failed (HTTP 401): Invalid API key · Please run /login")
        );
        assert!(!a.retry_may_help(), "a 401 is not retried");
        // A warning is kept as a warning: never the vendor's message of a timeout.
        let mut warned = seen(None, None, None);
        warned.warnings = vec!["Model metadata for `gpt-5-codex` not found".into()];
        let mut t = Attempt::new(&bound);
        decide(
            &mut t,
            &End::TimedOut,
            None,
            &warned,
            &RunOptions::default(),
        );
        assert_eq!(t.outcome, Outcome::TimedOut);
        assert!(
            t.message
                .as_deref()
                .is_some_and(|m| m.starts_with("timed out"))
        );
        assert_eq!(t.vendor_message, None);
        assert_eq!(t.warnings, warned.warnings);
        assert!(!t.retry_may_help(), "the review's time is spent");
        // A crash with no word from the vendor may be retried; one after its own retries not.
        let mut crash = Attempt::new(&bound);
        decide(
            &mut crash,
            &End::Exited,
            exit(3),
            &seen(None, None, None),
            &RunOptions::default(),
        );
        assert!(crash.retry_may_help());
        crash.cli_retried = true;
        assert!(!crash.retry_may_help());
    }

    #[test]
    fn only_a_finished_acp_turn_is_read() {
        use agent_client_protocol_schema::v1::StopReason;
        let mut bound = command_bound();
        bound.realization = Surfaces::shipped()
            .expect("shipped")
            .get("acp")
            .expect("acp")
            .clone();
        let run = |stop, text: &str, cut| {
            let mut a = Attempt::new(&bound);
            acp_answered(&mut a, stop, text.to_owned(), cut);
            a
        };
        let ok = "1. [bug] [severity: high] a.rs:1 — x\nVERDICT: CHANGES_REQUESTED";
        assert_eq!(
            run(StopReason::EndTurn, ok, false).outcome,
            Outcome::Completed
        );
        for (stop, text, cut) in [
            (StopReason::EndTurn, ok, true),
            (StopReason::EndTurn, "  ", false),
            (StopReason::EndTurn, "looks fine", false),
            (StopReason::MaxTokens, "VERDICT: APPROVED", false),
            (StopReason::MaxTurnRequests, "VERDICT: APPROVED", false),
            (StopReason::Refusal, "VERDICT: APPROVED", false),
        ] {
            let a = run(stop, text, cut);
            assert_eq!(
                a.outcome,
                Outcome::FailedValidation,
                "{stop:?} {text:?} {cut}"
            );
            assert_eq!(a.verdict(), None);
        }
        let a = run(StopReason::Cancelled, "VERDICT: APPROVED", false);
        assert_eq!(a.outcome, Outcome::Died);
        assert_eq!(a.verdict(), None);
    }

    #[test]
    fn killed_message_names_the_signal() {
        let bound = command_bound();
        let mut a = Attempt::new(&bound);
        let status = Some(ExitInfo {
            code: None,
            signal: Some(9),
        });
        decide(
            &mut a,
            &End::Exited,
            status,
            &seen(None, None, None),
            &RunOptions::default(),
        );
        assert_eq!(
            a.message.as_deref(),
            Some("the reviewer failed (killed by signal 9)")
        );
    }
}
