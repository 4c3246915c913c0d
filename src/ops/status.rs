//! The state of a run and the one thing to do next (SPEC §5), with its spend measured live.

use super::{Context, Error};
use crate::model::{Manifest, NextAction, RunId};
use crate::spend::RunSpend;

/// A run's state as `status` shows it.
#[derive(Debug, Clone)]
pub struct Report {
    pub run_id: RunId,
    pub manifest: Manifest,
    pub spend: RunSpend,
    pub next: NextAction,
}

/// The state of the run named on the command line, else the newest on this branch.
pub fn status(ctx: &Context) -> Result<Report, Error> {
    let run_id = super::select::latest(ctx, None)?;
    let manifest = ctx.load(&run_id)?.manifest;
    let spend = crate::spend::measure(&manifest, &ctx.spend_sources()?);
    let next = manifest.next_action_with(spend.level == Some(crate::cost::Level::Alert));
    Ok(Report {
        run_id,
        manifest,
        spend,
        next,
    })
}

/// `next_action` for `manifest`, as `status` computes it; spend is measured (agent logs read)
/// only when the run has a budget, the one case where it can change the answer. A spend that
/// cannot be measured counts as not at alert.
pub fn next_action(ctx: &Context, manifest: &Manifest) -> NextAction {
    if manifest.budget_usd.is_none() {
        return manifest.next_action_with(false);
    }
    let alert = ctx.spend_sources().is_ok_and(|sources| {
        crate::spend::measure(manifest, &sources).level == Some(crate::cost::Level::Alert)
    });
    manifest.next_action_with(alert)
}

/// The active run's spend against its budget (`budget-check`).
pub fn budget(ctx: &Context) -> Result<(RunId, RunSpend), Error> {
    let run_id = super::select::active(ctx, None)?;
    let manifest = ctx.load(&run_id)?.manifest;
    let spend = crate::spend::measure(&manifest, &ctx.spend_sources()?);
    Ok((run_id, spend))
}
