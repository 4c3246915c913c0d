//! Running a prepared round's reviewers: at most `parallelism.limit` at once, each making at
//! most two reviewer calls in the round — one retry on failure, or one stricter re-ask when no
//! verdict can be read (or a CHANGES_REQUESTED carries no severity at all); an answer that
//! still cannot be read is CHANGES_REQUESTED with a `[process]` finding, never an approval.
//! Stores nothing: every attempt comes back as data.

use super::plan::{Member, MemberResult, Plan, Settings, run_options};
use crate::model::{Finding, Verdict};
use crate::review::{self, Attempt, Outcome};

/// Runs every member (in parallel, at most `plan.parallelism.limit` at once). Never fails:
/// each member ends with an outcome.
pub fn execute(
    plan: &Plan,
    settings: &Settings,
    on_start: Option<crate::process::OnStart>,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<MemberResult> {
    let mut options = run_options(settings);
    options.on_start = on_start;
    let limit = plan.parallelism.limit.max(1);
    let mut results: Vec<Option<MemberResult>> = vec![None; plan.members.len()];
    for (chunk_index, chunk) in plan.members.chunks(limit).enumerate() {
        let chunk_results: Vec<MemberResult> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|member| {
                    let options = options.clone();
                    scope.spawn(move || run_member(plan, member, &options, progress))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a reviewer thread does not panic"))
                .collect()
        });
        for (i, result) in chunk_results.into_iter().enumerate() {
            results[chunk_index * limit + i] = Some(result);
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every member ran"))
        .collect()
}

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

fn run_member(
    plan: &Plan,
    member: &Member,
    options: &review::RunOptions,
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
    let mut tries = 0u32;
    // Every try starts where the first did (the last completed review's session), never from
    // a session that just failed; after a failed resume, fresh.
    let mut resume = member.resume_session.clone();
    let mut reask: Option<Reask> = None;
    let mut drift_asked = false;
    while calls < CALLS_PER_ROUND {
        let attempt_no = plan.attempt_base + tries + 1;
        let prompt = match &reask {
            None => {
                progress(&format!(
                    "waiting for {name} (round {}, attempt {attempt_no}, timeout {} s)…",
                    plan.round,
                    options.timeout.as_secs()
                ));
                plan.prompt(attempt_no)
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
                    plan.prompt(attempt_no),
                    plan.reask
                )
            }
        };
        let reasking = reask.take().is_some();
        let attempt = attempt_once(plan, member, &prompt, resume.as_deref(), options);
        calls += 1;
        if !reasking && resume.is_some() && attempt.should_retry_fresh(&member.bound) {
            // The resumed session could not be used: a fresh one is a new count.
            result.attempts.push(attempt);
            resume = None;
            calls = 0;
            continue;
        }
        result.take(attempt);
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
            _ => {
                tries += 1;
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

impl MemberResult {
    /// Makes `attempt` the member's latest: its outcome, verdict, findings and session.
    fn take(&mut self, attempt: Attempt) {
        if attempt.session_id.is_some() {
            self.session_id = attempt.session_id.clone();
        }
        self.outcome = attempt.outcome;
        self.verdict = attempt.verdict();
        self.findings = attempt.findings().to_vec();
        self.error =
            (attempt.outcome != Outcome::Completed).then(|| describe(&self.name, &attempt));
        self.attempts.push(attempt);
    }
}

fn attempt_once(
    plan: &Plan,
    member: &Member,
    prompt: &str,
    resume: Option<&str>,
    options: &review::RunOptions,
) -> Attempt {
    review::run_attempt(
        &member.bound,
        &review::ReviewInput {
            prompt,
            diff: &plan.diff,
            resume_session_id: resume,
            file_sizes: &plan.parts.file_sizes,
        },
        options,
    )
}

fn describe(name: &str, attempt: &Attempt) -> String {
    let mut text = format!("reviewer {name} {}", attempt.outcome);
    if let Some(message) = attempt.vendor_message.as_ref().or(attempt.message.as_ref()) {
        text.push_str(": ");
        text.push_str(&crate::util::first_line_clipped(message, 300));
    }
    // What the reviewer said on stderr is usually why: its last lines, on the one line.
    let stderr = String::from_utf8_lossy(&attempt.stderr_tail);
    let last: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if !last.is_empty() && attempt.vendor_message.is_none() {
        let tail = last[last.len().saturating_sub(3)..].join(" | ");
        text.push_str(&format!(
            " (stderr: {})",
            crate::util::first_line_clipped(&tail, 300)
        ));
    }
    text
}
