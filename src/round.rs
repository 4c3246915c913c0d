//! One review round end to end (SPEC §6): snapshot and packet, the prompt, the write-ahead
//! dispatch record, reviewer attempts (one retry, one re-ask), panels under a quorum, and
//! the outcome record holding everything each attempt produced.
//!
//! The flow is one way — `prepare` (computes, stores nothing) → `dispatch` (stores the
//! dispatch before anything is spawned) → `execute` (runs reviewers, stores nothing) →
//! `record` (stores the outcome). Prints nothing: progress goes through a callback.

use std::path::PathBuf;
use std::time::Duration;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::model::{
    self, Body, Finding, Manifest, Refusal, Response, Review, ReviewAttempt, ReviewDispatch, RunId,
    Verdict,
};
use crate::packet::{self, Coverage};
use crate::review::prompt::{self, Mode, PriorFinding, Templates};
use crate::review::{
    self, Attempt, BoundRealization, Outcome, ProbeReport, ProbeRequest, Surfaces,
};
use crate::store::{Append, Content, Repo, RunState};

/// How this round runs: configuration with command-line flags applied.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `--reviewer-cmd` or `pair.reviewerCommand`, as JSON array text.
    pub reviewer_command: Option<String>,
    /// `pair.reviewers` (a panel); empty means the run's reviewer alone.
    pub panel: Vec<String>,
    pub timeout: Duration,
    /// `--plan FILE`'s content.
    pub plan: Option<String>,
    pub again: bool,
    pub budget_bytes: usize,
    pub exclude: Vec<String>,
    pub max_parallel: Option<usize>,
    pub quorum: Option<usize>,
    pub surface_file: Option<PathBuf>,
    pub prompt_template: Option<PathBuf>,
    /// `PATH` for probing and spawning (the process's own when None).
    pub path_env: Option<std::ffi::OsString>,
}

/// Why a round could not be prepared, dispatched or recorded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Store(#[from] crate::store::Error),
    #[error(transparent)]
    Refused(Refusal),
    #[error("cannot snapshot the work tree: {0}")]
    Snapshot(#[from] crate::snapshot::Error),
    #[error("cannot compute the diff: {0}")]
    Diff(#[from] crate::diff::Error),
    #[error("{0}")]
    Packet(#[from] packet::Error),
    #[error("{0}")]
    Reviewer(#[from] review::Error),
    #[error("{0}")]
    Template(#[from] prompt::TemplateError),
    #[error("stored review material of run {run_id} round {round} is missing: {what}")]
    MissingMaterial {
        run_id: String,
        round: u32,
        what: String,
    },
}

/// The prompt's parts, owned, so a retry can render it again with a new attempt marker
/// (also stored with the dispatch, so a resumed dispatch renders the same prompt).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PromptParts {
    pub v: u32,
    pub mode: String,
    pub task: String,
    pub summaries: Vec<String>,
    pub coverage: Option<String>,
    pub since: Option<String>,
    pub prior: Vec<StoredPrior>,
    pub plan: Option<String>,
}

/// An open finding of an earlier round and the coder's response, as stored with a dispatch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredPrior {
    pub round: u32,
    pub finding: Finding,
    pub response: Option<Response>,
}

/// A reviewer of the round, bound and ready.
#[derive(Debug, Clone)]
pub struct Member {
    pub bound: BoundRealization,
    pub report: ProbeReport,
    /// The session of this reviewer's last completed review, to resume.
    pub resume_session: Option<String>,
}

/// Everything prepared before anything is stored or spawned.
#[derive(Debug, Clone)]
pub struct Plan {
    pub run_id: RunId,
    pub round: u32,
    pub mode: Mode,
    pub snapshot: ObjectId,
    pub diff: String,
    pub coverage: Coverage,
    pub parts: PromptParts,
    pub members: Vec<Member>,
    pub parallelism: review::Parallelism,
    /// First attempt number of this dispatch (a resumed dispatch continues the count).
    pub attempt_base: u32,
    /// Set when this re-dispatches a review that was interrupted.
    pub resumes: Option<String>,
    templates: Templates,
    reask: String,
}

/// One reviewer's part of the round after its attempts.
#[derive(Debug, Clone)]
pub struct MemberResult {
    pub name: String,
    pub fallback_used: bool,
    pub outcome: Outcome,
    pub verdict: Option<Verdict>,
    pub findings: Vec<Finding>,
    pub session_id: Option<String>,
    pub attempts: Vec<Attempt>,
    pub error: Option<String>,
}

/// The recorded round.
#[derive(Debug, Clone)]
pub struct RoundOutcome {
    pub round: u32,
    pub verdict: Option<Verdict>,
    pub outcome: String,
    pub findings: Vec<Finding>,
    pub members: Vec<MemberResult>,
    pub fallback_used: bool,
    pub coverage: Coverage,
    pub error: Option<String>,
}

impl Plan {
    /// The prompt for attempt `attempt` of this dispatch.
    pub fn prompt(&self, attempt: u32) -> String {
        let prior: Vec<PriorFinding> = self
            .parts
            .prior
            .iter()
            .map(|p| PriorFinding {
                round: p.round,
                finding: p.finding.clone(),
                response: p.response.clone(),
            })
            .collect();
        prompt::render(
            &self.templates,
            &prompt::Context {
                run_id: self.run_id.as_str(),
                round: self.round,
                attempt,
                mode: self.mode,
                task: &self.parts.task,
                summaries: &self.parts.summaries,
                diff: &self.diff,
                coverage: self.parts.coverage.as_deref(),
                since: self.parts.since.as_deref(),
                prior: &prior,
                plan: self.parts.plan.as_deref(),
            },
        )
    }

    /// The command line each member would run, for `--dry-run`.
    pub fn planned_argv(&self, settings: &Settings) -> Vec<(String, Vec<String>)> {
        let prompt = self.prompt(self.attempt_base + 1);
        self.members
            .iter()
            .map(|m| {
                let input = review::ReviewInput {
                    prompt: &prompt,
                    diff: &self.diff,
                    resume_session_id: m.resume_session.as_deref(),
                };
                let argv = review::planned_argv(&m.bound, &input, &run_options(settings))
                    .unwrap_or_else(|e| vec![format!("<{e}>")]);
                (m.bound.name.clone(), argv)
            })
            .collect()
    }
}

/// Prepares the round: checks the loop's rules, snapshots the work tree, builds the packet
/// (rejecting a blind path before anything else happens), binds the reviewers. Stores
/// nothing.
pub fn prepare(repo: &Repo, run_id: &RunId, settings: &Settings) -> Result<Plan, Error> {
    let state = repo.load(run_id)?;
    let m = &state.manifest;
    let records = repo.records(&state)?;
    let surfaces = Surfaces::load(settings.surface_file.as_deref())?;
    let templates = Templates::with_override(settings.prompt_template.as_deref())?;
    let reask = surfaces.reask_instruction();

    if let Some(pending) = &m.pending_review {
        return resume(
            repo,
            &state,
            &records,
            pending.round,
            &pending.dispatch,
            settings,
            &surfaces,
            templates,
            reask,
        );
    }
    model::check_review(m, settings.again).map_err(Error::Refused)?;
    let round = m
        .current_coder_round()
        .expect("check_review needs a coder round");

    let gix_repo = repo.gix();
    let snapshot = crate::snapshot::write_worktree_tree(gix_repo)?;
    let base = m
        .base
        .as_deref()
        .and_then(|b| ObjectId::from_hex(b.as_bytes()).ok())
        .map(|commit| repo.commit_tree(commit))
        .transpose()?;
    let options = packet::Options {
        budget_bytes: settings.budget_bytes,
        exclude: settings.exclude.clone(),
    };
    let built = build_packet(gix_repo, base, snapshot, &options)?;
    let mode = match (&settings.plan, built.coverage.files_total) {
        (Some(_), 0) => Mode::Plan,
        (Some(_), _) => Mode::CodeVsPlan,
        (None, _) => Mode::Code,
    };

    // A scoped re-review: the open findings of the last review that asked for changes, the
    // coder's responses since, and what changed since the snapshot it saw.
    let last_review = records.iter().rev().find_map(|r| match &r.body {
        Body::Review(review) if review.verdict.is_some() => Some(review),
        _ => None,
    });
    let mut prior = Vec::new();
    let mut since = None;
    if let Some(last) = last_review.filter(|r| r.verdict == Some(Verdict::ChangesRequested)) {
        let responses: Vec<&Response> = coder_records_of_round(&records, round)
            .flat_map(|c| c.responses.iter())
            .collect();
        prior = last
            .findings
            .iter()
            .map(|f| StoredPrior {
                round: last.round,
                finding: f.clone(),
                response: responses
                    .iter()
                    .rev()
                    .find(|r| r.finding == f.n)
                    .map(|r| (*r).clone()),
            })
            .collect();
        if let Ok(last_snapshot) = ObjectId::from_hex(last.snapshot.as_bytes()) {
            let since_packet = build_packet(gix_repo, Some(last_snapshot), snapshot, &options)?;
            since = Some(String::from_utf8_lossy(&since_packet.diff).into_owned());
        }
    }
    let summaries = coder_records_of_round(&records, round)
        .map(|c| c.summary.clone())
        .collect();
    let parts = PromptParts {
        v: 1,
        mode: mode.as_str().to_owned(),
        task: m.task.clone(),
        summaries,
        coverage: built.coverage.summary.clone(),
        since,
        prior,
        plan: settings.plan.clone(),
    };
    let members = bind_members(&surfaces, m, &records, settings, None)?;
    let parallelism = parallelism(&members, settings);
    let dispatches_so_far = count_dispatches(&records, round);
    Ok(Plan {
        run_id: run_id.clone(),
        round,
        mode,
        snapshot,
        diff: String::from_utf8_lossy(&built.diff).into_owned(),
        coverage: built.coverage,
        parts,
        members,
        parallelism,
        attempt_base: 2 * dispatches_so_far,
        resumes: None,
        templates,
        reask,
    })
}

#[allow(clippy::too_many_arguments)]
fn resume(
    repo: &Repo,
    state: &RunState,
    records: &[model::Record],
    round: u32,
    dispatch_id: &str,
    settings: &Settings,
    surfaces: &Surfaces,
    templates: Templates,
    reask: String,
) -> Result<Plan, Error> {
    let missing = |what: &str| Error::MissingMaterial {
        run_id: state.run_id.to_string(),
        round,
        what: what.to_owned(),
    };
    let dispatch = records
        .iter()
        .find_map(|r| match &r.body {
            Body::ReviewDispatch(d) if r.id == dispatch_id => Some(d.clone()),
            _ => None,
        })
        .ok_or_else(|| missing("the dispatch record"))?;
    let dir = format!("reviews/{round}");
    let diff = repo
        .run_file(state, &format!("{dir}/diff.patch"))?
        .ok_or_else(|| missing("diff.patch"))?;
    let parts: PromptParts = repo
        .run_file(state, &format!("{dir}/context.json"))?
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| missing("context.json"))?;
    let coverage: Coverage = repo
        .run_file(state, &format!("{dir}/coverage.json"))?
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| missing("coverage.json"))?;
    let snapshot =
        ObjectId::from_hex(dispatch.snapshot.as_bytes()).map_err(|_| missing("the snapshot id"))?;
    let mode = match parts.mode.as_str() {
        "plan" => Mode::Plan,
        "code-vs-plan" => Mode::CodeVsPlan,
        _ => Mode::Code,
    };
    let members = bind_members(
        surfaces,
        &state.manifest,
        records,
        settings,
        Some(&dispatch.reviewers),
    )?;
    let parallelism = parallelism(&members, settings);
    Ok(Plan {
        run_id: state.run_id.clone(),
        round,
        mode,
        snapshot,
        diff: String::from_utf8_lossy(&diff).into_owned(),
        coverage,
        parts,
        members,
        parallelism,
        attempt_base: 2 * count_dispatches(records, round),
        resumes: Some(dispatch_id.to_owned()),
        templates,
        reask,
    })
}

fn build_packet(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: ObjectId,
    options: &packet::Options,
) -> Result<packet::Packet, Error> {
    let mut differ = crate::diff::Differ::new(repo, crate::diff::Options::from_config(repo)?)?;
    let changes = differ.changes(old, new)?;
    packet::check_blindness(
        changes
            .iter()
            .flat_map(|c| [c.old_path.as_slice(), c.new_path.as_slice()])
            .filter(|p| !p.is_empty()),
        &options.exclude,
    )?;
    Ok(packet::build_from_changes(&mut differ, &changes, options)?)
}

fn coder_records_of_round(
    records: &[model::Record],
    round: u32,
) -> impl Iterator<Item = &model::Coder> {
    let mut manifest = Manifest::empty();
    records
        .iter()
        .filter_map(move |r| {
            manifest.apply(r);
            match &r.body {
                Body::Coder(c) if manifest.current_coder_round() == Some(round) => Some(c),
                _ => None,
            }
        })
        .collect::<Vec<_>>()
        .into_iter()
}

fn count_dispatches(records: &[model::Record], round: u32) -> u32 {
    records
        .iter()
        .filter(|r| matches!(&r.body, Body::ReviewDispatch(d) if d.round == round))
        .count() as u32
}

/// Binds each reviewer of the round: the panel, or the command, or the run's reviewer.
/// `names` fixes the members (a resumed dispatch binds the ones it dispatched).
fn bind_members(
    surfaces: &Surfaces,
    manifest: &Manifest,
    records: &[model::Record],
    settings: &Settings,
    names: Option<&[String]>,
) -> Result<Vec<Member>, Error> {
    let wanted: Vec<String> = match names {
        Some(names) => names.to_vec(),
        None if !settings.panel.is_empty() => settings.panel.clone(),
        None if settings.reviewer_command.is_some() => vec!["command".to_owned()],
        None => vec![manifest.reviewer.clone()],
    };
    let mut members = Vec::new();
    for name in wanted {
        let report = review::probe(
            surfaces,
            &ProbeRequest {
                configured: &name,
                reviewer_command: settings.reviewer_command.as_deref(),
                path_env: settings.path_env.as_deref(),
            },
        )?;
        let bound = report.clone().into_bound()?;
        let resume_session = if bound.supports_resume() {
            last_session_of(records, &bound.name)
        } else {
            None
        };
        members.push(Member {
            bound,
            report,
            resume_session,
        });
    }
    Ok(members)
}

fn last_session_of(records: &[model::Record], realization: &str) -> Option<String> {
    records.iter().rev().find_map(|r| match &r.body {
        Body::Review(review) => review
            .reviewers
            .iter()
            .find(|a| a.tool == realization && a.verdict.is_some())
            .and_then(|a| a.session_id.clone()),
        _ => None,
    })
}

fn parallelism(members: &[Member], settings: &Settings) -> review::Parallelism {
    let bound: Vec<&BoundRealization> = members.iter().map(|m| &m.bound).collect();
    review::panel_parallelism(&bound, settings.max_parallel)
}

fn run_options(settings: &Settings) -> review::RunOptions {
    let mut options = review::RunOptions {
        timeout: settings.timeout,
        ..review::RunOptions::default()
    };
    if let Some(path) = &settings.path_env {
        options.env.push(("PATH".into(), path.clone()));
    }
    options
}

/// Stores the dispatch record (and the packet it sends) before any reviewer is spawned.
/// Fails loudly when it cannot be written: then nothing may be spawned.
pub fn dispatch(repo: &Repo, plan: &Plan, settings: &Settings) -> Result<String, Error> {
    let dir = format!("reviews/{}", plan.round);
    let prompt = plan.prompt(plan.attempt_base + 1);
    let coverage = serde_json::to_vec_pretty(&plan.coverage).expect("coverage serializes");
    let context = serde_json::to_vec_pretty(&plan.parts).expect("prompt parts serialize");
    let names: Vec<String> = plan.members.iter().map(|m| m.bound.name.clone()).collect();
    let subject = match &plan.resumes {
        Some(_) => format!(
            "review {}: re-dispatched to {}",
            plan.round,
            names.join(", ")
        ),
        None => format!("review {}: dispatched to {}", plan.round, names.join(", ")),
    };
    let body = Body::ReviewDispatch(ReviewDispatch {
        round: plan.round,
        reviewers: names,
        snapshot: plan.snapshot.to_string(),
        mode: plan.mode.as_str().to_owned(),
        again: settings.again,
    });
    let round = plan.round;
    let appended = repo.append(&plan.run_id, |state| {
        if state.manifest.is_finished() {
            return Err(Refusal {
                message: format!("run {} was finished meanwhile", plan.run_id),
                hint: None,
            });
        }
        let mut append = Append::record(body.clone(), subject.clone());
        append.round = Some(round);
        append.files = vec![
            (
                format!("{dir}/prompt.md"),
                Content::Blob(prompt.clone().into_bytes()),
            ),
            (
                format!("{dir}/diff.patch"),
                Content::Blob(plan.diff.clone().into_bytes()),
            ),
            (
                format!("{dir}/coverage.json"),
                Content::Blob(coverage.clone()),
            ),
            (
                format!("{dir}/context.json"),
                Content::Blob(context.clone()),
            ),
            (format!("{dir}/snapshot"), Content::Tree(plan.snapshot)),
        ];
        Ok(append)
    })?;
    Ok(appended.record.id)
}

/// Runs every member (in parallel, at most `plan.parallelism.limit` at once). Never fails:
/// each member ends with an outcome.
pub fn execute(
    plan: &Plan,
    settings: &Settings,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<MemberResult> {
    let options = run_options(settings);
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

fn run_member(
    plan: &Plan,
    member: &Member,
    options: &review::RunOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> MemberResult {
    let name = member.bound.name.clone();
    let mut result = MemberResult {
        name: name.clone(),
        fallback_used: member.bound.fallback_used,
        outcome: Outcome::NotStarted,
        verdict: None,
        findings: Vec::new(),
        session_id: member.resume_session.clone(),
        attempts: Vec::new(),
        error: None,
    };
    for try_index in 0..2u32 {
        let attempt_no = plan.attempt_base + try_index + 1;
        let prompt = plan.prompt(attempt_no);
        progress(&format!(
            "waiting for {name} (round {}, attempt {attempt_no}, timeout {} s)…",
            plan.round,
            options.timeout.as_secs()
        ));
        // Every try starts where the first did (the last completed review's session), never
        // from a session that just failed.
        let resume = member.resume_session.as_deref();
        let mut attempt = attempt_once(plan, member, &prompt, resume, options);
        if attempt.should_retry_fresh(&member.bound) {
            result.attempts.push(attempt);
            attempt = attempt_once(plan, member, &prompt, None, options);
        }
        result.take(attempt);
        match result.outcome {
            Outcome::Completed => return result,
            Outcome::FailedValidation => {
                let reason = match result.attempts.last().and_then(|a| a.parsed.as_ref()) {
                    Some(review::Parsed::NoVerdict { reason }) => reason.clone(),
                    _ => "no verdict".to_owned(),
                };
                progress(&format!(
                    "{name} gave no readable verdict; asking once more, strictly…"
                ));
                let reask_prompt = format!("{prompt}\n\n{}", plan.reask);
                result.take(attempt_once(plan, member, &reask_prompt, None, options));
                if result.outcome != Outcome::Completed {
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
                }
                return result;
            }
            Outcome::Cancelled => break,
            _ if try_index == 0 => {
                progress(&format!(
                    "{name} failed; retrying once with a new attempt marker…"
                ));
            }
            _ => {}
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
    text
}

/// Combines the members' results into the round's verdict and stores the outcome record
/// with every attempt's material, plus cost measurements of the reviewers' sessions.
pub fn record(
    repo: &Repo,
    plan: &Plan,
    dispatch_id: &str,
    results: Vec<MemberResult>,
    settings: &Settings,
    sources: Option<&crate::spend::Sources>,
) -> Result<RoundOutcome, Error> {
    let verdicts: Vec<Option<Verdict>> = results.iter().map(|r| r.verdict).collect();
    let verdict = review::panel_verdict(&verdicts, settings.quorum);
    let panel = results.len() > 1;
    let mut findings = Vec::new();
    for r in &results {
        for f in &r.findings {
            let mut f = f.clone();
            f.n = findings.len() as u32 + 1;
            if panel {
                f.text = format!("({}) {}", r.name, f.text);
            }
            findings.push(f);
        }
    }
    let failed: Vec<&MemberResult> = results.iter().filter(|r| r.verdict.is_none()).collect();
    let outcome = match (verdict, failed.first()) {
        (Some(_), _) => "completed".to_owned(),
        (None, Some(f)) => f.outcome.as_str().to_owned(),
        (None, None) => "failed-validation".to_owned(),
    };
    let error = match verdict {
        Some(_) => None,
        None => Some(
            failed
                .iter()
                .filter_map(|r| r.error.clone())
                .collect::<Vec<_>>()
                .join("; ")
                + if failed.len() < results.len() {
                    " (partial panel: the others' results are kept, below the quorum)"
                } else {
                    ""
                },
        ),
    }
    .filter(|e| !e.is_empty());
    let fallback_used = results.iter().any(|r| r.fallback_used);
    let coverage_warning = plan
        .coverage
        .summary
        .clone()
        .filter(|_| plan.coverage.is_partial());
    let reviewers: Vec<ReviewAttempt> = results
        .iter()
        .map(|r| ReviewAttempt {
            reviewer: r.name.clone(),
            tool: r.name.clone(),
            outcome: r.outcome.as_str().to_owned(),
            verdict: r.verdict,
            session_id: r.session_id.clone(),
            attempts: r.attempts.len() as u32,
            duration_ms: r.attempts.iter().map(|a| a.duration_ms).sum(),
            error: r.error.clone(),
        })
        .collect();
    let body = Body::Review(Review {
        dispatch: dispatch_id.to_owned(),
        round: plan.round,
        verdict,
        outcome: outcome.clone(),
        tool: results
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        findings: findings.clone(),
        reviewers,
        fallback_used,
        snapshot: plan.snapshot.to_string(),
        coverage_warning,
        error: error.clone(),
    });

    let dir = format!("reviews/{}", plan.round);
    let mut output = Vec::new();
    let mut attempts_json = Vec::new();
    for r in &results {
        for (i, a) in r.attempts.iter().enumerate() {
            output.extend_from_slice(
                format!(
                    "===== {} attempt {} · {} · exit {} · {} ms =====\n",
                    r.name,
                    i + 1,
                    a.outcome,
                    a.exit_code.map_or_else(
                        || a.signal
                            .map_or("none".to_owned(), |s| format!("signal {s}")),
                        |c| c.to_string()
                    ),
                    a.duration_ms
                )
                .as_bytes(),
            );
            output.extend_from_slice(&a.stdout);
            if !a.stdout.ends_with(b"\n") {
                output.push(b'\n');
            }
            attempts_json.push(serde_json::json!({ "reviewer": r.name, "attempt": a }));
        }
    }
    let result_json = serde_json::json!({
        "v": 1,
        "round": plan.round,
        "verdict": verdict,
        "outcome": outcome,
        "findings": findings,
        "fallback_used": fallback_used,
        "coverage": plan.coverage,
        "parallelism": plan.parallelism,
    });
    let probes: Vec<&ProbeReport> = plan.members.iter().map(|m| &m.report).collect();
    let files = vec![
        (format!("{dir}/output.txt"), Content::Blob(output)),
        (
            format!("{dir}/attempts.json"),
            Content::Blob(pretty(&attempts_json)),
        ),
        (
            format!("{dir}/result.json"),
            Content::Blob(pretty(&result_json)),
        ),
        (format!("{dir}/probe.json"), Content::Blob(pretty(&probes))),
    ];
    let subject = match verdict {
        Some(v) => format!(
            "review {}: {} ({}, {} finding{})",
            plan.round,
            v.as_str(),
            results
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            findings.len(),
            if findings.len() == 1 { "" } else { "s" }
        ),
        None => format!("review {}: no verdict ({outcome})", plan.round),
    };
    // The reviewers' sessions, measured now and stored with the outcome.
    let spend = sources.map(|sources| {
        let mut manifest = repo
            .load(&plan.run_id)
            .map(|s| s.manifest)
            .unwrap_or_else(|_| Manifest::empty());
        for r in &results {
            if let Some(id) = &r.session_id {
                manifest
                    .sessions
                    .entry(id.clone())
                    .or_insert_with(|| model::SessionSpend {
                        role: "reviewer".into(),
                        agent: r.name.clone(),
                        usd: 0.0,
                    });
            }
        }
        crate::spend::measure(&manifest, sources)
    });
    let round = plan.round;
    repo.append(&plan.run_id, |state| {
        let mut append = Append::record(body.clone(), subject.clone());
        append.round = Some(round);
        append.verdict = verdict.map(|v| v.as_str().to_owned());
        append.files = files.clone();
        if let Some(spend) = &spend {
            append.also = crate::spend::growth_records(&state.manifest, spend, round)
                .into_iter()
                .map(|mut b| {
                    if let Body::Cost(c) = &mut b {
                        c.round = round;
                    }
                    b
                })
                .collect();
        }
        Ok(append)
    })?;
    Ok(RoundOutcome {
        round: plan.round,
        verdict,
        outcome,
        findings,
        members: results,
        fallback_used,
        coverage: plan.coverage.clone(),
        error,
    })
}

fn pretty(value: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("JSON values serialize");
    bytes.push(b'\n');
    bytes
}
