//! The data of a review round: its settings, the plan prepared before anything is stored or
//! spawned (packet, prompt parts, bound reviewers), each reviewer's result, and the recorded
//! outcome.

use std::path::PathBuf;
use std::time::Duration;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::model::{Finding, Response, RunId, SecretAt, Verdict};
use crate::packet::Coverage;
use crate::review::prompt::{self, Mode, PriorFinding, Templates};
use crate::review::{self, Attempt, BoundRealization, Outcome, ProbeReport};

/// How this round runs: configuration with command-line flags applied.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The run's reviewer as in force now (run-owned, else `pair.reviewer`).
    pub reviewer: String,
    /// A paid reviewer runs although the budget is spent (`--over-budget`), recorded.
    pub over_budget: bool,
    /// The reviewer is the `command` realization (`--reviewer-cmd`, or a configured
    /// `pair.reviewerCommand` when neither the run nor `pair.reviewer` names another).
    pub command_reviews: bool,
    /// `--dry-run`: a reviewer that does not bind is reported, not an error.
    pub dry_run: bool,
    /// `--reviewer-cmd` or `pair.reviewerCommand`, validated.
    pub reviewer_command: Option<Vec<String>>,
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
    /// The secret scanner: what it finds never reaches a reviewer or the store.
    pub scanner: crate::secrets::Scanner,
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
    /// Size in bytes of each added or modified file as the snapshot holds it (not as the
    /// packet shows it): what a size check judges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_sizes: Vec<(String, u64)>,
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
    /// `--dry-run` only: reviewers that would not bind, with what was probed.
    pub unbound: Vec<ProbeReport>,
    /// Secrets in the change, redacted from the packet: each becomes a blocking `[secret]`
    /// finding of the round.
    pub secrets: Vec<SecretAt>,
    pub(super) templates: Templates,
    pub(super) reask: String,
}

/// One reviewer's part of the round after its attempts.
#[derive(Debug, Clone)]
pub struct MemberResult {
    /// The reviewer's one name (`BoundRealization::label`): what it is recorded and shown as.
    pub name: String,
    /// The reviewer the round asked for (differs from the bound one after a fallback).
    pub configured: String,
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
                    file_sizes: &self.parts.file_sizes,
                };
                let argv = review::planned_argv(&m.bound, &input, &run_options(settings))
                    .unwrap_or_else(|e| vec![format!("<{e}>")]);
                (m.bound.label(), argv)
            })
            .collect()
    }
}

pub(super) fn run_options(settings: &Settings) -> review::RunOptions {
    let mut options = review::RunOptions {
        timeout: settings.timeout,
        ..review::RunOptions::default()
    };
    if let Some(path) = &settings.path_env {
        options.env.push(("PATH".into(), path.clone()));
    }
    options
}
