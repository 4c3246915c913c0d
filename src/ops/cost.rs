//! What runs cost (`cost`): every run's spend measured live from the agents' logs, the
//! selected run round by round, or one agent session priced whole.

use super::{Context, Error};
use crate::model::report::cost::{Costs, RoundCost, RunCost, RunDetail};
use crate::render::common::usd_json;

/// Every run, newest first, with its spend; the selected run (`--run`, or the active one)
/// also round by round and session by session.
pub fn runs(ctx: &Context) -> Result<Costs, Error> {
    let sources = ctx.spend_sources()?;
    let selected = super::common::select::active(ctx, None).ok();
    let mut runs = Vec::new();
    let mut total: Option<f64> = None;
    let mut unpriced_models: Vec<String> = Vec::new();
    for run_id in ctx.repo.list_runs()?.into_iter().rev() {
        let manifest = ctx.load_effective(&run_id)?.manifest;
        let spend = crate::cost::spend::measure(&manifest, &sources);
        if let Some(usd) = spend.usd() {
            total = Some(total.unwrap_or(0.0) + usd);
        }
        for model in &spend.unknown_models {
            if !unpriced_models.contains(model) {
                unpriced_models.push(model.clone());
            }
        }
        let every_round = match selected.as_ref() == Some(&run_id) {
            // The stored manifest keeps the newest rounds only: every round comes from the
            // records.
            true => {
                let state = ctx.load(&run_id)?;
                let mut all = crate::model::Manifest::unbounded();
                for record in &ctx.repo.records(&state)? {
                    all.apply(record);
                }
                all.rounds
            }
            false => Vec::new(),
        };
        let detail = (selected.as_ref() == Some(&run_id)).then(|| RunDetail {
            rounds: every_round
                .iter()
                .map(|e| RoundCost {
                    n: e.n,
                    role: e.role,
                    tool: e.tool.clone(),
                    cost_usd: e.cost_usd,
                })
                .collect(),
            sessions: spend.sessions.clone(),
            unknown_models: spend.unknown_models.clone(),
        });
        runs.push(RunCost {
            run_id,
            spent_usd: usd_json(spend.usd()),
            unpriced_models: spend.unknown_models.clone(),
            budget_usd: manifest.budget_usd,
            detail,
            spent: spend.usd(),
            task: manifest.task,
        });
    }
    Ok(Costs {
        runs,
        total_usd: usd_json(total),
        unpriced_models,
        total,
    })
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
