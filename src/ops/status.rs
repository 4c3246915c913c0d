//! The state of a run and the one thing to do next (SPEC §5): the stored projection plus what
//! only a running command can observe — the spend measured now, and whether a pending
//! review's process is alive. Every command that prints a next step takes it from here.

use super::{Context, Error};
use crate::cost::spend::RunSpend;
use crate::model::report::budget_check::BudgetCheck;
use crate::model::report::status::{CheckpointBrief, HandedOverBrief, Setting, Settings};
use crate::model::{Manifest, NextAction, Observed, Runner};

/// A run's state as `status` shows it: its report.
pub use crate::model::report::status::Status as Report;

/// The state of the run named on the command line, else the newest on this branch.
pub fn status(ctx: &Context) -> Result<Report, Error> {
    let (loaded, handed_over) = match super::common::select::latest(ctx, None) {
        Ok(run_id) => {
            let loaded = ctx.load(&run_id)?;
            let handed_over = super::common::handoff::handed_over(ctx, &loaded)?;
            (loaded, handed_over)
        }
        // With no run, a checkpoint made here with none, handed over since, is told of.
        Err(no_run @ Error::NoActiveRun { .. }) => {
            match super::common::handoff::handed_over_carrier(ctx)? {
                Some((loaded, went)) => (loaded, Some(went)),
                None => return Err(no_run),
            }
        }
        Err(e) => return Err(e),
    };
    let stored = loaded.manifest;
    let settings = super::settings::in_force(&stored, &ctx.options);
    // The reviewer that ran last, else the one that would bind now.
    let reviewer = stored
        .rounds
        .iter()
        .rev()
        .find(|e| e.role == crate::model::Role::Reviewer)
        .map(|e| e.tool.clone())
        .unwrap_or_else(|| super::settings::reviewer(Some(&stored), &ctx.options, None).name);
    let m = super::settings::apply(&stored, &ctx.options);
    let spend = crate::cost::spend::measure(&m, &ctx.spend_sources()?);
    let next = m.next_action(observed(&m, Some(&spend)));
    Ok(Report {
        round: m.current_coder_round().unwrap_or(0),
        max_rounds: m.max_rounds,
        last_verdict: m.last_verdict().map(|v| v.as_str()),
        next_action: next.as_str(),
        spent_usd: crate::render::common::usd_json(spend.usd()),
        unpriced_models: spend.unknown_models.clone(),
        budget_usd: m.budget_usd,
        checkpoint: m.checkpoint.as_ref().map(|c| CheckpointBrief {
            id: c.id.as_str().to_owned(),
            assessment: c.assessment.as_str(),
            state: c.state.as_str(),
            handed_over: handed_over.as_ref().map(|h| HandedOverBrief {
                host: h.host.clone(),
                path: h.path.clone(),
                archived: h.archived,
            }),
        }),
        compactions: m.compactions,
        reviewer,
        reviewer_fallback: m.reviewer_fallback,
        settings: Settings(
            settings
                .into_iter()
                .map(|e| Setting {
                    key: e.key,
                    value: e.value,
                    from: e.source.as_str().to_owned(),
                })
                .collect(),
        ),
        spent: spend.usd(),
        next,
        run_id: m.run_id,
        branch: m.branch,
        task: m.task,
        conflicts: m.conflicts,
    })
}

/// The next action of `manifest` as of now. Spend is measured (agent logs read) only when the
/// run has a budget, the one case where it can change the answer; a spend that cannot be
/// measured counts as what the run stored.
pub fn next_action(ctx: &Context, manifest: &Manifest) -> NextAction {
    let spend = manifest
        .budget_usd
        .and_then(|_| ctx.spend_sources().ok())
        .map(|sources| crate::cost::spend::measure(manifest, &sources));
    manifest.next_action(observed(manifest, spend.as_ref()))
}

/// What the projection cannot know by itself.
pub(super) fn observed(manifest: &Manifest, spend: Option<&RunSpend>) -> Observed {
    Observed {
        budget_alert: spend.is_some_and(|s| s.level == Some(crate::cost::Level::Alert)),
        review_running: running_review(manifest).is_some(),
    }
}

/// Refuses while a review of the run (a coder round's or its PR's) is running on this
/// machine right now: one review of a run at a time (SPEC §5).
pub fn refuse_if_reviewing(manifest: &Manifest) -> Result<(), crate::model::Refusal> {
    match running_review(manifest) {
        Some(runner) => Err(crate::model::Refusal::ReviewRunning {
            run_id: manifest.run_id.to_string(),
            host: runner.host.clone(),
            pid: runner.pid,
        }),
        None => Ok(()),
    }
}

/// The process of a review of the run (a coder round's or its PR's) dispatched and not
/// answered, when it is alive on this machine right now.
fn running_review(manifest: &Manifest) -> Option<&Runner> {
    let pr = manifest.pr_round.as_ref().and_then(|p| p.pending.as_ref());
    [manifest.pending_review.as_ref(), pr]
        .into_iter()
        .flatten()
        .filter_map(|p| p.runner.as_ref())
        .find(|r| is_running_here(r))
}

/// Whether `runner` is a live process on this machine. A process recorded on another machine
/// cannot be checked from here: it counts as not running (`resume:review`).
pub fn is_running_here(runner: &Runner) -> bool {
    runner.host == crate::process::host_name()
        && runner.pid != std::process::id()
        && crate::process::is_alive(runner.pid, runner.start_time)
}

/// The active run's spend against its budget (`budget-check`); after `finish`, the finished
/// run's, as `status` shows it.
pub fn budget(ctx: &Context) -> Result<BudgetCheck, Error> {
    let run_id = super::common::select::latest(ctx, None)?;
    let manifest = ctx.load_effective(&run_id)?.manifest;
    let spend = crate::cost::spend::measure(&manifest, &ctx.spend_sources()?);
    Ok(BudgetCheck {
        level: spend.level.map(|l| match l {
            crate::cost::Level::Warn => "warn",
            crate::cost::Level::Alert => "alert",
        }),
        spent: crate::render::common::usd_json(spend.usd()),
        limit: spend.limit_usd,
        run_id,
        unknown_models: spend.unknown_models.clone(),
        unpriced_models: spend.unknown_models.clone(),
        spent_usd: spend.usd(),
    })
}
