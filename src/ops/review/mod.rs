//! One review round end to end (SPEC §6): [`prepare`] (snapshot, packet, prompt, bound
//! reviewers; stores nothing) → [`record::dispatch`] (the write-ahead dispatch record, before
//! anything is spawned) → [`execute`] (runs reviewers: one retry, one re-ask, panels; stores
//! nothing) → [`record::record`] (the outcome and everything each attempt produced). The flow
//! is one way; progress goes through a callback.

mod execute;
mod plan;
mod prepare;
mod record;

pub use execute::execute;
pub use plan::{Member, MemberResult, Plan, PromptParts, RoundOutcome, Settings, StoredPrior};
pub use prepare::prepare;
pub use record::{dispatch, record};

use super::{Context, Error};

/// What `review` produced: the recorded round, or for `--dry-run` the plan alone.
#[derive(Debug)]
pub enum Report {
    /// `--dry-run`: what would be sent, to whom; nothing stored or spawned.
    DryRun(Box<Plan>, Vec<(String, Vec<String>)>),
    /// The recorded round (its verdict may be `None`: no reviewer gave one).
    Recorded(Box<RoundOutcome>, Box<Plan>),
}

/// Runs the review round of the active run: prepare, record the dispatch, run the reviewers,
/// record the outcome, refresh the HANDOFF view.
pub fn review(
    ctx: &Context,
    settings: &Settings,
    dry_run: bool,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report, Error> {
    let run_id = super::select::active(ctx, None)?;
    let plan = prepare(&ctx.repo, &run_id, settings)?;
    if dry_run {
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
    let dispatch_id = dispatch(&ctx.repo, &plan, settings).map_err(Error::dispatch)?;
    let results = execute(&plan, settings, progress);
    let sources = ctx.spend_sources().ok();
    let outcome = record(
        &ctx.repo,
        &plan,
        &dispatch_id,
        results,
        settings,
        sources.as_ref(),
    )?;
    ctx.refresh_handoff(&run_id)?;
    Ok(Report::Recorded(Box::new(outcome), Box::new(plan)))
}
