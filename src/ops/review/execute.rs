//! Running a prepared round's reviewers: at most `parallelism.limit` at once, each making at
//! most two reviewer calls in the round — one retry on a failure another call could mend
//! (never after a timeout, an authentication failure, or a vendor whose own retries ran
//! out), or one stricter re-ask when no verdict can be read (or a CHANGES_REQUESTED carries
//! no severity at all); an answer that still cannot be read is CHANGES_REQUESTED with a
//! `[process]` finding, never an approval. The timeout bounds a member's whole review: every
//! call gets what is left of it. Stores nothing: every attempt comes back as data.

use std::time::{Duration, Instant};

use super::plan::{Member, MemberResult, Plan, Settings, run_options};
use crate::model::{Finding, Verdict};
use crate::review::{self, Attempt, Outcome, prompt};

/// Runs every member that has not finished yet (in parallel, at most
/// `plan.parallelism.limit` at once: the next starts as soon as one ends) and returns every
/// member's result in the dispatch's order, the ones carried over from an interrupted
/// dispatch included. A realization whose `workdir` is `snapshot` runs in `dirs.snapshot`,
/// one whose `workdir` is `run-snapshot` in `dirs.run_snapshot`. `on_done` is told of each
/// member the moment it finishes, on the calling thread (to store it while its siblings still
/// run). Never fails: each member ends with an outcome.
pub fn execute(
    plan: &Plan,
    settings: &Settings,
    dirs: &SnapshotDirs<'_>,
    on_start: Option<crate::process::OnStart>,
    progress: &(dyn Fn(&str) + Sync),
    on_done: &mut dyn FnMut(usize, &MemberResult),
) -> Vec<MemberResult> {
    let mut options = run_options(settings);
    options.on_start = on_start;
    options.snapshot_dir = dirs.snapshot.map(std::path::Path::to_path_buf);
    options.run_snapshot_dir = dirs.run_snapshot.map(std::path::Path::to_path_buf);
    let limit = plan.parallelism.limit.max(1);
    let mut results: Vec<(usize, MemberResult)> = plan
        .carried
        .iter()
        .map(|c| (c.slot, c.result.clone()))
        .collect();
    std::thread::scope(|scope| {
        type Finished = (usize, std::thread::Result<MemberResult>);
        let (sender, finished) = std::sync::mpsc::channel::<Finished>();
        let mut waiting = plan.members.iter();
        let mut running = 0usize;
        loop {
            while running < limit
                && let Some(member) = waiting.next()
            {
                let (options, sender) = (options.clone(), sender.clone());
                scope.spawn(move || {
                    // A panic is sent too, so the loop below never waits for a dead thread.
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_member(plan, member, &options, progress)
                    }));
                    // The receiver outlives every sender: it is dropped after the loop.
                    let _ = sender.send((member.slot, result));
                });
                running += 1;
            }
            if running == 0 {
                break;
            }
            let (slot, result) = finished
                .recv()
                .expect("a reviewer thread sends its result before it ends");
            let result = result.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            running -= 1;
            on_done(slot, &result);
            results.push((slot, result));
        }
    });
    results.sort_by_key(|(slot, _)| *slot);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Where the round's reviewed snapshot lies for the reviewers that run in it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SnapshotDirs<'a> {
    /// A temporary directory (`workdir: snapshot`).
    pub snapshot: Option<&'a std::path::Path>,
    /// The run's stable directory (`workdir: run-snapshot`).
    pub run_snapshot: Option<&'a std::path::Path>,
}

/// Attempt numbers one member may use in one dispatch: the per-round calls, plus the fresh
/// call after a resumed session could not be used. Each call gets its own number, so each
/// call's vendor session is told apart by its marker.
pub const ATTEMPTS_PER_MEMBER: u32 = CALLS_PER_ROUND + 1;

/// Reviewer invocations one member may make in a round, across launch failures, timeouts and
/// re-asks together (SPEC §6.3, the design's invariant). A fresh session after a failed resume
/// starts a new count: the resumed session could not be used at all.
const CALLS_PER_ROUND: u32 = 2;

/// Why the next call re-asks instead of retrying.
enum Reask {
    /// No readable verdict.
    NoVerdict(String),
    /// CHANGES_REQUESTED with findings none of which has a severity: format drift.
    NoSeverity,
}

/// One member's review of every pass, in order: APPROVED only when every pass approved; the
/// findings of all passes; a pass that ends without a verdict (failed, timed out, cancelled)
/// ends the member's review there, with no verdict.
fn run_member(
    plan: &Plan,
    member: &Member,
    options: &review::RunOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> MemberResult {
    let count = plan.passes.len();
    // `--timeout` bounds the member's whole review: every pass and call, re-asks included.
    let deadline = Instant::now() + options.timeout;
    let run_pass = |pass| run_pass(plan, member, pass, options, deadline, progress);
    // The built-in reads the whole change at once, not the packets.
    if count <= 1 || member.bound.is_builtin() {
        return run_pass(0);
    }
    let mut all: Option<MemberResult> = None;
    for pass in 0..count {
        progress(&format!(
            "{}: pass {} of {count} (the change is larger than one packet)…",
            member.bound.name,
            pass + 1
        ));
        let mut result = run_pass(pass);
        let Some(so_far) = all.as_mut() else {
            let stop = result.verdict.is_none();
            all = Some(result);
            if stop {
                break;
            }
            continue;
        };
        so_far.attempts.append(&mut result.attempts);
        if result.session_id.is_some() {
            so_far.session_id = result.session_id;
        }
        so_far.outcome = result.outcome;
        so_far.error = result.error;
        if result.verdict.is_none() {
            so_far.verdict = None;
            break;
        }
        if result.verdict != Some(Verdict::Approved) {
            so_far.verdict = result.verdict;
        }
        so_far.findings.append(&mut result.findings);
    }
    all.expect("a change has at least one pass")
}

/// One member's review of pass `pass`: at most two reviewer calls, all before `deadline`.
fn run_pass(
    plan: &Plan,
    member: &Member,
    pass: usize,
    options: &review::RunOptions,
    deadline: Instant,
    progress: &(dyn Fn(&str) + Sync),
) -> MemberResult {
    let name = member.bound.label();
    let mut result = MemberResult {
        name: name.clone(),
        configured: member.report.configured.clone(),
        fallback_used: member.bound.fallback_used,
        outcome: Outcome::NotStarted,
        verdict: None,
        findings: Vec::new(),
        session_id: member.resume_session.clone(),
        attempts: Vec::new(),
        error: None,
    };
    let mut calls = 0u32;
    // Every try starts where the first did (the last completed review's session), never from
    // a session that just failed; after a failed resume, fresh.
    let mut resume = member.resume_session.clone();
    let mut reask: Option<Reask> = None;
    let mut drift_asked = false;
    while calls < CALLS_PER_ROUND {
        let left = deadline.saturating_duration_since(Instant::now());
        if left < MIN_CALL {
            if result.attempts.is_empty() {
                result.outcome = Outcome::TimedOut;
                result.error = Some(format!(
                    "reviewer {name} timed out: the review's {} s timeout ran out before it could be asked",
                    options.timeout.as_secs_f64()
                ));
            }
            break;
        }
        let call_options = review::RunOptions {
            timeout: left,
            ..options.clone()
        };
        // Every call has its own marker: the member's slot, the pass and its calls so far
        // number it.
        let attempt_no = plan.attempt_base
            + (member.slot * plan.passes.len().max(1) + pass) as u32 * ATTEMPTS_PER_MEMBER
            + result.attempts.len() as u32
            + 1;
        let prompt = match &reask {
            None => {
                progress(&format!(
                    "waiting for {name} (round {}, attempt {attempt_no}, {} s left of the review's {} s timeout)…",
                    plan.round,
                    left.as_secs_f64().ceil(),
                    options.timeout.as_secs_f64()
                ));
                plan.prompt(attempt_no, pass)
            }
            Some(why) => {
                let what = match why {
                    Reask::NoVerdict(reason) => format!("no readable verdict ({reason})"),
                    Reask::NoSeverity => {
                        "findings without a `[severity: …]` tag on any of them".to_owned()
                    }
                };
                progress(&format!(
                    "{name}'s answer had {what}; asking once more, strictly…"
                ));
                format!(
                    "{}\n\n{}\n\nYour previous answer had {what}.",
                    plan.prompt(attempt_no, pass),
                    plan.reask
                )
            }
        };
        let reasking = reask.take().is_some();
        let marker = prompt::attempt_marker(plan.run_id.as_str(), plan.round, attempt_no);
        let attempt = attempt_once(
            plan,
            member,
            &prompt,
            &marker,
            resume.as_deref(),
            &call_options,
            progress,
        );
        calls += 1;
        if !reasking
            && resume.is_some()
            && attempt.should_retry_fresh(&member.bound)
            && attempt.retry_may_help()
        {
            // The resumed session could not be used: a fresh one is a new count.
            result.attempts.push(attempt);
            resume = None;
            calls = 0;
            continue;
        }
        let retry_may_help = attempt.retry_may_help();
        result.take(attempt, options.timeout);
        match result.outcome {
            Outcome::Completed => {
                let drift = result.verdict == Some(Verdict::ChangesRequested)
                    && !result.findings.is_empty()
                    && result.findings.iter().all(|f| f.severity.is_none());
                if drift && !drift_asked && calls < CALLS_PER_ROUND {
                    // Format drift: asked once, then the answer is kept as it is.
                    drift_asked = true;
                    reask = Some(Reask::NoSeverity);
                    resume = None;
                    continue;
                }
                return result;
            }
            Outcome::FailedValidation => {
                let reason = match result.attempts.last().and_then(|a| a.parsed.as_ref()) {
                    Some(review::Parsed::NoVerdict { reason }) => reason.clone(),
                    _ => "no verdict".to_owned(),
                };
                if !reasking && calls < CALLS_PER_ROUND {
                    reask = Some(Reask::NoVerdict(reason));
                    resume = None;
                    continue;
                }
                // Fail closed: never an approval from an answer that cannot be read.
                result.outcome = Outcome::FailedValidation;
                result.verdict = Some(Verdict::ChangesRequested);
                result.findings = vec![Finding {
                    n: 1,
                    category: "process".to_owned(),
                    severity: None,
                    location: String::new(),
                    text: format!(
                        "reviewer {name} gave no readable verdict, even when asked again ({reason}); treated as CHANGES_REQUESTED"
                    ),
                }];
                result.error = Some(format!("{name}: no readable verdict ({reason})"));
                return result;
            }
            Outcome::Cancelled => break,
            _ if !retry_may_help => break,
            _ => {
                if calls < CALLS_PER_ROUND {
                    progress(&format!(
                        "{name} failed; retrying once with a new attempt marker…"
                    ));
                }
            }
        }
    }
    result
}

/// A call given less time than this is not started: the review's time is spent.
const MIN_CALL: Duration = Duration::from_millis(200);

impl MemberResult {
    /// Makes `attempt` the member's latest: its outcome, verdict, findings and session.
    /// `timeout` is the whole review's, for the message.
    fn take(&mut self, attempt: Attempt, timeout: Duration) {
        if attempt.session_id.is_some() {
            self.session_id = attempt.session_id.clone();
        }
        self.outcome = attempt.outcome;
        self.verdict = attempt.verdict();
        self.findings = attempt.findings().to_vec();
        self.error = (attempt.outcome != Outcome::Completed)
            .then(|| describe(&self.name, &attempt, timeout));
        self.attempts.push(attempt);
    }
}

fn attempt_once(
    plan: &Plan,
    member: &Member,
    prompt: &str,
    marker: &str,
    resume: Option<&str>,
    options: &review::RunOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Attempt {
    review::run_attempt_with_progress(
        &member.bound,
        &review::ReviewInput {
            prompt,
            files: &plan.files,
            secrets: &plan.file_secrets,
            resume_session_id: resume,
            marker: Some(marker),
            file_sizes: &plan.parts.file_sizes,
        },
        options,
        progress,
    )
}

/// A failed attempt as the member's error: what happened first (timed out, authentication
/// failed, server error (HTTP n), connection dropped), the vendor's words as detail, its
/// warnings last and only as warnings.
fn describe(name: &str, attempt: &Attempt, timeout: Duration) -> String {
    let clip = |text: &str| crate::util::first_line_clipped(text, 300);
    let mut text = match attempt.outcome {
        Outcome::TimedOut => {
            let mut text = format!(
                "reviewer {name} timed out: no answer within the review's {} s timeout (it bounds every call together); its process group was killed",
                timeout.as_secs_f64()
            );
            if let Some(what) = attempt.what_happened() {
                text.push_str(&format!("; it was retrying after: {what}"));
            }
            if let Some(vendor) = &attempt.vendor_message {
                text.push_str(&format!(" (last from the CLI: {})", clip(vendor)));
            }
            text
        }
        outcome => {
            let mut text = format!("reviewer {name} {outcome}");
            if let Some(message) = attempt.message.as_ref().or(attempt.vendor_message.as_ref()) {
                text.push_str(": ");
                text.push_str(&clip(message));
            }
            text
        }
    };
    // What the reviewer said on stderr is usually why: its last lines, on the one line.
    let stderr = String::from_utf8_lossy(&attempt.stderr_tail);
    let last: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if !last.is_empty() && attempt.vendor_message.is_none() {
        let tail = last[last.len().saturating_sub(3)..].join(" | ");
        text.push_str(&format!(" (stderr: {})", clip(&tail)));
    }
    if let Some(warning) = attempt.warnings.last() {
        text.push_str(&format!("; the CLI also warned: {}", clip(warning)));
    }
    text
}
