//! What runs cost (`cost`): every run's spend measured live from the agents' logs, the
//! selected run round by round, or one agent session priced whole.

use super::{Context, Error};
use crate::cost::spend::RunSpend;
use crate::model::{Manifest, RunId};

/// One run's spend.
#[derive(Debug, Clone)]
pub struct RunCost {
    pub run_id: RunId,
    pub manifest: Manifest,
    pub spend: RunSpend,
    /// The run the command acts on: shown round by round.
    pub selected: bool,
}

/// Every run, newest first, with its spend.
pub fn runs(ctx: &Context) -> Result<Vec<RunCost>, Error> {
    let sources = ctx.spend_sources()?;
    let selected = super::common::select::active(ctx, None).ok();
    let mut out = Vec::new();
    for run_id in ctx.repo.list_runs()?.into_iter().rev() {
        let manifest = ctx.load_effective(&run_id)?.manifest;
        let spend = crate::cost::spend::measure(&manifest, &sources);
        out.push(RunCost {
            selected: selected.as_ref() == Some(&run_id),
            run_id,
            manifest,
            spend,
        });
    }
    Ok(out)
}

/// One Claude Code session or Codex thread, priced whole.
pub fn session(ctx: &Context, id: &str) -> Result<crate::cost::SessionCost, Error> {
    let sources = ctx.spend_sources()?;
    Ok(crate::cost::price_session(
        &sources.roots,
        id,
        &sources.pricing,
        None,
        sources.cache_dir.as_deref(),
    )?)
}
