//! The data of a review round: its settings, the plan prepared before anything is stored or
//! spawned (packet, prompt parts, bound reviewers), each reviewer's result, and the recorded
//! outcome.

use std::path::PathBuf;
use std::time::Duration;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::diff::FileDiff;
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
    /// `pair.acpCommand`, validated: the agent the `acp` reviewer drives.
    pub acp_command: Option<Vec<String>>,
    /// `pair.reviewers` (a panel); empty means the run's reviewer alone.
    pub panel: Vec<String>,
    /// `pair.fallbackOrder` in force (empty: the surfaces document's order).
    pub fallback_order: Vec<String>,
    pub timeout: Duration,
    /// `--plan FILE`'s content.
    pub plan: Option<String>,
    pub again: bool,
    pub budget_bytes: usize,
    /// `pair.maxFileBytes`: a file larger than this goes to no reviewer (unreviewed).
    pub max_file_bytes: u64,
    pub exclude: Vec<String>,
    pub max_parallel: Option<usize>,
    pub quorum: Option<usize>,
    pub surface_file: Option<PathBuf>,
    pub prompt_template: Option<PathBuf>,
    /// `PATH` for probing and spawning (the process's own when None).
    pub path_env: Option<std::ffi::OsString>,
    /// `pair.reviewerEnv`: variables reviewers inherit besides their realization's own list.
    pub reviewer_env: Vec<String>,
    /// The secret scanner: what it finds never reaches a reviewer or the store.
    pub scanner: crate::secrets::Scanner,
    /// The reviewer's model (`review --model`, else `pair.reviewerModel`), if chosen.
    pub model: Option<String>,
    /// The reviewer's reasoning effort (`review --effort`, else `pair.reviewerEffort`).
    pub effort: Option<String>,
}

impl Settings {
    /// The reviewer choices set, by the placeholder each realization declares for it.
    pub fn choices(&self) -> std::collections::BTreeMap<&'static str, String> {
        [("model", &self.model), ("effort", &self.effort)]
            .into_iter()
            .filter_map(|(choice, value)| Some((choice, value.clone()?)))
            .collect()
    }
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
    /// Where each pass after the first starts in the stored diff (a change reviewed in one
    /// packet has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_starts: Vec<usize>,
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
    /// Its place in the dispatch's reviewer list.
    pub slot: usize,
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
    /// Every pass's diff, one after the other (what is stored).
    pub diff: String,
    /// Each pass's diff: one packet under the byte budget each.
    pub passes: Vec<String>,
    /// The change as the built-in reviewer reads it: every file's diff, complete and not
    /// redacted, and what the scanner found in each (ranges into its file's text). Empty
    /// unless the built-in is a reviewer of the round.
    pub files: Vec<FileDiff>,
    pub file_secrets: Vec<crate::secrets::Finding>,
    pub coverage: Coverage,
    pub parts: PromptParts,
    pub members: Vec<Member>,
    /// How many of `members` run at once, and what binds that.
    pub parallelism: review::Parallelism,
    /// Members that finished with a verdict under the interrupted dispatch this one resumes:
    /// kept as they are, not run again.
    pub carried: Vec<Carried>,
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

/// A member's result carried over from an interrupted dispatch.
#[derive(Debug, Clone)]
pub struct Carried {
    pub slot: usize,
    /// The realization it was dispatched as (what a dispatch record names).
    pub realization: String,
    pub result: MemberResult,
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
    /// Every reviewer of the dispatch, in its order: the ones that run and the ones carried.
    pub fn reviewer_names(&self) -> Vec<String> {
        let mut slots: Vec<(usize, &str)> = self
            .members
            .iter()
            .map(|m| (m.slot, m.bound.name.as_str()))
            .chain(
                self.carried
                    .iter()
                    .map(|c| (c.slot, c.realization.as_str())),
            )
            .collect();
        slots.sort();
        slots.into_iter().map(|(_, n)| n.to_owned()).collect()
    }

    /// [`Plan::reviewer_names`] as they are shown (`command:approve.sh`).
    pub fn reviewer_labels(&self) -> Vec<String> {
        let mut slots: Vec<(usize, String)> = self
            .members
            .iter()
            .map(|m| (m.slot, m.bound.label()))
            .chain(self.carried.iter().map(|c| (c.slot, c.result.name.clone())))
            .collect();
        slots.sort();
        slots.into_iter().map(|(_, n)| n).collect()
    }

    /// The panel limit as recorded.
    pub fn panel_limit(&self) -> crate::model::PanelLimit {
        crate::model::PanelLimit {
            limit: self.parallelism.limit,
            bound_by: self.parallelism.bound_by.clone(),
        }
    }

    /// Splits a stored diff at `starts` into its passes.
    pub fn split_passes(diff: &str, starts: &[usize]) -> Vec<String> {
        let mut passes = Vec::with_capacity(starts.len() + 1);
        let mut from = 0;
        for &start in starts {
            let start = start.clamp(from, diff.len());
            let start = (start..=diff.len())
                .find(|&i| diff.is_char_boundary(i))
                .unwrap_or(diff.len());
            passes.push(diff[from..start].to_owned());
            from = start;
        }
        passes.push(diff[from..].to_owned());
        passes
    }

    /// The prompt for attempt `attempt` of this dispatch, showing pass `pass` (from 0).
    pub fn prompt(&self, attempt: u32, pass: usize) -> String {
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
        let coverage = match (self.passes.len(), &self.parts.coverage) {
            (0 | 1, c) => c.clone(),
            (n, c) => Some(format!(
                "pass {} of {n}: this change is reviewed in {n} packets, each showing other files (or other parts of a file too large for one); this one is judged on its own, so give your verdict on what it shows{}",
                pass + 1,
                c.as_ref()
                    .map(|c| format!("; in all, {c}"))
                    .unwrap_or_default()
            )),
        };
        prompt::render(
            &self.templates,
            &prompt::Context {
                run_id: self.run_id.as_str(),
                round: self.round,
                attempt,
                mode: self.mode,
                task: &self.parts.task,
                summaries: &self.parts.summaries,
                diff: self.passes.get(pass).map_or("", String::as_str),
                coverage: coverage.as_deref(),
                since: self.parts.since.as_deref(),
                prior: &prior,
                plan: self.parts.plan.as_deref(),
            },
        )
    }

    /// The command line each member would run, for `--dry-run`.
    pub fn planned_argv(&self, settings: &Settings) -> Vec<(String, Vec<String>)> {
        let prompt = self.prompt(self.attempt_base + 1, 0);
        self.members
            .iter()
            .map(|m| {
                let input = review::ReviewInput {
                    prompt: &prompt,
                    resume_session_id: m.resume_session.as_deref(),
                    files: &self.files,
                    secrets: &self.file_secrets,
                    marker: None,
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
        session_logs: Some(crate::cost::LogRoots::from_env(|key| {
            std::env::var(key).ok()
        })),
        ..review::RunOptions::default()
    };
    if let Some(path) = &settings.path_env {
        options.env.push(("PATH".into(), path.clone()));
    }
    options.env_allow = settings.reviewer_env.clone();
    options.choices = settings.choices();
    options
}

/// What `review` was asked for on the command line.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `--reviewer-cmd`, validated; replaces the configured reviewer and panel.
    pub reviewer_command: Option<Vec<String>>,
    /// `--timeout` in seconds.
    pub timeout_secs: Option<u64>,
    /// `--plan FILE`'s content.
    pub plan: Option<String>,
    pub again: bool,
    pub dry_run: bool,
    /// `--over-budget`: review with a reviewer that costs money although the budget is spent
    /// (recorded on the dispatch, shown in the PR body).
    pub over_budget: bool,
    /// `--model`, validated: replaces `pair.reviewerModel`.
    pub model: Option<String>,
    /// `--effort`, validated: replaces `pair.reviewerEffort`.
    pub effort: Option<String>,
}

/// The round's settings (`super::settings`) from configuration and a scanner: the run's
/// own, then `git config`, then the flags (no repository needed).
pub fn settings_from(
    o: &crate::config::Options,
    scanner: crate::secrets::Scanner,
    request: &Request,
    manifest: &crate::model::Manifest,
) -> Result<Settings, crate::ops::Error> {
    let effective = crate::ops::settings::apply(manifest, o);
    let (panel, timeout) = crate::ops::settings::review_settings(manifest, o);
    // One reviewer, chosen in one order (SPEC §6.1; `settings::reviewer`).
    let chosen =
        crate::ops::settings::reviewer(Some(manifest), o, request.reviewer_command.as_deref());
    Ok(Settings {
        command_reviews: chosen.command.is_some(),
        reviewer: effective.reviewer,
        over_budget: false,
        dry_run: request.dry_run,
        reviewer_command: request
            .reviewer_command
            .clone()
            .or_else(|| o.reviewer_command.clone()),
        acp_command: o.acp_command.clone(),
        // A reviewer command given on the command line replaces the panel.
        panel: if request.reviewer_command.is_some() {
            Vec::new()
        } else {
            panel
        },
        fallback_order: crate::model::settings::fallback_order(Some(manifest), o),
        timeout: Duration::from_secs(request.timeout_secs.unwrap_or(timeout)),
        plan: request.plan.clone(),
        again: request.again,
        budget_bytes: usize::try_from(o.diff_budget_bytes).unwrap_or(usize::MAX),
        max_file_bytes: o.max_file_bytes,
        exclude: o.review_exclude.clone(),
        max_parallel: o.max_parallel.map(|n| n as usize),
        quorum: o.quorum.map(|n| n as usize),
        surface_file: o.surface_file.clone(),
        prompt_template: o.prompt_template.clone(),
        path_env: None,
        reviewer_env: o.reviewer_env.clone(),
        scanner,
        model: request.model.clone().or_else(|| {
            crate::model::settings::text(
                Some(manifest),
                o,
                crate::model::settings::Setting::ReviewerModel,
            )
        }),
        effort: request.effort.clone().or_else(|| {
            crate::model::settings::text(
                Some(manifest),
                o,
                crate::model::settings::Setting::ReviewerEffort,
            )
        }),
    })
}

/// The budget is enforced (SPEC §5): at alert, no reviewer that costs money is spawned
/// unless the user says so (`--over-budget`); the built-in reviewer is free and still runs.
/// Returns whether a paid reviewer runs over the budget (recorded on the dispatch).
pub(super) fn enforce_budget(
    ctx: &crate::ops::Context,
    stored: &crate::model::Manifest,
    plan: &Plan,
    request: &Request,
) -> Result<bool, crate::ops::Error> {
    let paid = plan.members.iter().any(|m| m.bound.name != "builtin");
    if paid && !request.over_budget {
        let manifest = crate::ops::settings::apply(stored, &ctx.options);
        if let Some(limit) = manifest.budget_usd {
            let spend = crate::cost::spend::measure(&manifest, &ctx.spend_sources()?);
            if spend.level == Some(crate::cost::Level::Alert) {
                return Err(crate::ops::Error::BudgetSpent {
                    run_id: plan.run_id.to_string(),
                    spent: spend.usd().unwrap_or(0.0),
                    limit,
                });
            }
        }
    }
    Ok(paid && request.over_budget)
}
