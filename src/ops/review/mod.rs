//! One review round end to end (SPEC §6): [`prepare`] (snapshot, packet, prompt, bound
//! reviewers; stores nothing) → [`record::dispatch`] (the write-ahead dispatch record, before
//! anything is spawned) → [`execute`] (runs reviewers: one retry, one re-ask, panels; stores
//! nothing) → [`record::record`] (the outcome and everything each attempt produced). The flow
//! is one way; progress goes through a callback.

mod execute;
mod live;
mod plan;
mod prepare;
mod record;

pub use execute::execute;
pub use plan::{Member, MemberResult, Plan, PromptParts, RoundOutcome, Settings, StoredPrior};
pub use prepare::prepare;
pub use record::{dispatch, record};

use std::time::Duration;

use super::{Context, Error};

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
}

/// The round's settings: the run's own, then `git config`, then the flags; and the secret
/// scanner (`pair.secretsFile`).
pub fn settings(
    ctx: &Context,
    request: &Request,
    manifest: &crate::model::Manifest,
) -> Result<Settings, Error> {
    let o = &ctx.options;
    let effective = super::settings::apply(manifest, o);
    let (panel, timeout) = super::settings::review_settings(manifest, o);
    Ok(Settings {
        reviewer: effective.reviewer,
        dry_run: request.dry_run,
        reviewer_command: request
            .reviewer_command
            .clone()
            .or_else(|| o.reviewer_command.clone()),
        // A reviewer command given on the command line replaces the panel.
        panel: if request.reviewer_command.is_some() {
            Vec::new()
        } else {
            panel
        },
        timeout: Duration::from_secs(request.timeout_secs.unwrap_or(timeout)),
        plan: request.plan.clone(),
        again: request.again,
        budget_bytes: usize::try_from(o.diff_budget_bytes).unwrap_or(usize::MAX),
        exclude: o.review_exclude.clone(),
        max_parallel: o.max_parallel.map(|n| n as usize),
        quorum: o.quorum.map(|n| n as usize),
        surface_file: o.surface_file.clone(),
        prompt_template: o.prompt_template.clone(),
        path_env: None,
        scanner: ctx.scanner()?,
    })
}

/// What `review` produced: the recorded round, or for `--dry-run` the plan alone.
#[derive(Debug)]
pub enum Report {
    /// `--dry-run`: what would be sent, to whom; nothing stored or spawned.
    DryRun(Box<Plan>, Vec<(String, Vec<String>)>),
    /// The recorded round (its verdict may be `None`: no reviewer gave one), and the run's
    /// next action after it.
    Recorded(Box<RoundOutcome>, Box<Plan>, crate::model::NextAction),
}

/// Runs the review round of the active run: prepare, record the dispatch, run the reviewers,
/// record the outcome, refresh the HANDOFF view.
pub fn review(
    ctx: &Context,
    request: &Request,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, Error> {
    let run_id = super::common::select::active(ctx, None)?;
    let settings = &settings(ctx, request, &ctx.load(&run_id)?.manifest)?;
    // The shipped pattern table compiles while the work tree is snapshotted and diffed.
    settings.scanner.warm_up();
    let plan = prepare(&ctx.repo, &run_id, settings)?;
    if request.dry_run {
        let argv = plan.planned_argv(settings);
        return Ok(Report::DryRun(Box::new(plan), argv));
    }
    for member in &plan.members {
        if member.bound.fallback_used {
            progress(&format!(
                "note: {} is not available here; using {} instead (fallback, recorded)",
                member.report.configured, member.bound.name
            ));
        }
    }
    if plan.members.len() > 1 {
        progress(&format!(
            "running {} reviewers, at most {} at once (bound by {})",
            plan.members.len(),
            plan.parallelism.limit,
            plan.parallelism.bound_by
        ));
    }
    if let Some(interrupted) = &plan.resumes {
        // The interrupted review's `git pair` is dead; whatever reviewer it left running
        // must not run beside the new one (with a vendor CLI that is spend).
        let killed = live::Live::new(&ctx.repo, plan.run_id.as_str(), interrupted).kill_leftovers();
        if killed > 0 {
            progress(&format!(
                "stopped {killed} reviewer process group(s) left running by the interrupted review"
            ));
        }
    }
    let dispatch_id = dispatch(&ctx.repo, &plan, settings).map_err(Error::dispatch)?;
    let live = live::Live::new(&ctx.repo, plan.run_id.as_str(), &dispatch_id);
    let results = execute(&plan, settings, Some(live.recorder()), progress);
    let sources = ctx.spend_sources().ok();
    let outcome = record(
        &ctx.repo,
        &plan,
        &dispatch_id,
        results,
        settings,
        sources.as_ref(),
    )?;
    live.clear();
    ctx.refresh_handoff(&run_id)?;
    let next = super::status::next_action(ctx, &ctx.load_effective(&run_id)?.manifest);
    Ok(Report::Recorded(Box::new(outcome), Box::new(plan), next))
}
