//! `git pair status`: the run's state and the one thing to do next.

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::model::{Manifest, NextAction};
use crate::ops;

/// Show the run's state and `next_action`, the one thing to do next.
///
/// next_action is one of: code, review, finish, stop:round-cap, stop:budget, stop:stalled,
/// resume:review, done. Agents follow it; `stop:*` means ask the human.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: &Args) -> Result<Report, CommandError> {
    let status = ops::status::status(ctx)?;
    let m = &status.manifest;
    let json = json!({
        "run_id": m.run_id,
        "round": m.current_coder_round().unwrap_or(0),
        "max_rounds": m.max_rounds,
        "last_verdict": m.last_verdict().map(|v| v.as_str()),
        "next_action": status.next.as_str(),
        "spent_usd": super::render::usd_json(status.spend.usd()),
        "budget_usd": m.budget_usd,
        "branch": m.branch,
        "task": m.task,
        "conflicts": m.conflicts,
        "checkpoint": m.checkpoint.as_ref().map(|c| json!({
            "id": c.id.as_str(),
            "assessment": c.assessment.as_str(),
            "state": c.state.as_str(),
        })),
        "compactions": m.compactions,
        "settings": status
            .settings
            .iter()
            .map(|e| (e.key.to_owned(), json!({"value": e.value, "from": e.source.as_str()})))
            .collect::<serde_json::Map<_, _>>(),
    });
    let mut text = human(m, status.spend.usd(), status.next);
    let settings: Vec<String> = status
        .settings
        .iter()
        .filter(|e| !e.value.is_null() && e.value != json!([]))
        .map(|e| format!("{} {} ({})", e.key, e.value, e.source.as_str()))
        .collect();
    text.push_str(&format!("settings: {}\n", settings.join(" · ")));
    Ok(Report::new(json, text))
}

fn human(m: &Manifest, spent: Option<f64>, next: NextAction) -> String {
    let round = m.current_coder_round().unwrap_or(0);
    let mut out = format!(
        "run {} on {} — round {round} of {}\ntask: {}\n",
        m.run_id, m.branch, m.max_rounds, m.task
    );
    if let Some(v) = m.last_verdict() {
        out.push_str(&format!("last verdict: {}\n", v.as_str()));
    }
    match m.budget_usd {
        Some(limit) => out.push_str(&format!(
            "spent: {} of ${limit:.2}\n",
            super::render::usd(spent, 2)
        )),
        None => out.push_str(&format!("spent: {}\n", super::render::usd(spent, 2))),
    }
    if let Some(c) = &m.checkpoint {
        out.push_str(&format!(
            "checkpoint: {} ({}, {})\n",
            c.id,
            c.assessment.as_str(),
            c.state.as_str()
        ));
    }
    if m.compactions > 0 {
        out.push_str(&format!("context compactions: {}\n", m.compactions));
    }
    for conflict in &m.conflicts {
        out.push_str(&format!("conflict: {conflict}\n"));
    }
    let what = super::render::next_step(next);
    out.push_str(&format!("next: {what}\n"));
    out
}
