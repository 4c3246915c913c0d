//! `git pair cost`: spend per run and per round, or one agent session priced whole.

use std::fmt::Write as _;

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::model::Role;

/// Show what runs cost, per round and per session, from the agents' own logs.
///
/// Without --session: every run in this repository with its total, and the selected run
/// (--run, or the active one) round by round and session by session, tokens by kind.
/// With --session ID: one Claude Code or Codex session priced whole.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Price one Claude Code session id or Codex thread id whole.
    #[arg(long, value_name = "id")]
    pub session: Option<String>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    if let Some(id) = &args.session {
        let priced = crate::ops::cost::session(ctx, id)?;
        let mut human = format!(
            "session {} ({:?}): ${:.4}\n",
            priced.session_id, priced.agent, priced.total_usd
        );
        for model in &priced.models {
            let _ = writeln!(
                human,
                "  {:<32} {:>10}  in {:>10} out {:>9} cache w {:>10} r {:>11}",
                model.model,
                model
                    .cost_usd
                    .map_or_else(|| "unpriced".to_owned(), |c| format!("${c:.4}")),
                model.tokens.input,
                model.tokens.output,
                model.tokens.cache_write_5m + model.tokens.cache_write_1h,
                model.tokens.cache_read + model.tokens.cached_input
            );
        }
        let mut report = Report::new(
            serde_json::to_value(&priced).expect("session costs serialize"),
            human,
        );
        if !priced.unknown_models.is_empty() {
            report = report.note(format!(
                "warning: no price for model(s) {}: their tokens are not in the total",
                priced.unknown_models.join(", ")
            ));
        }
        if priced.skipped_lines > 0 {
            report = report.note(format!(
                "note: {} unreadable log line(s) skipped",
                priced.skipped_lines
            ));
        }
        return Ok(report);
    }

    let mut runs = Vec::new();
    let mut human = String::new();
    let mut total: Option<f64> = None;
    for crate::ops::cost::RunCost {
        run_id,
        manifest,
        spend,
        selected,
    } in crate::ops::cost::runs(ctx)?
    {
        if let Some(usd) = spend.usd() {
            total = Some(total.unwrap_or(0.0) + usd);
        }
        let _ = writeln!(
            human,
            "{}  {:>12}  {}",
            run_id,
            super::render::usd(spend.usd(), 4),
            crate::util::first_line_clipped(&manifest.task, 50)
        );
        let mut run = json!({
            "run_id": run_id.as_str(),
            "spent_usd": super::render::usd_json(spend.usd()),
            "budget_usd": manifest.budget_usd,
        });
        if selected {
            let rounds: Vec<_> = manifest
                .rounds
                .iter()
                .map(|e| {
                    json!({
                        "n": e.n,
                        "role": e.role,
                        "tool": e.tool,
                        "cost_usd": e.cost_usd,
                    })
                })
                .collect();
            for e in &manifest.rounds {
                let role = match e.role {
                    Role::Coder => "coder",
                    Role::Reviewer => "reviewer",
                };
                let _ = writeln!(
                    human,
                    "    round {:<3} {:<8} {:<8} {}",
                    e.n,
                    role,
                    e.tool,
                    e.cost_usd.map_or("—".to_owned(), |c| format!("${c:.4}"))
                );
            }
            for s in &spend.sessions {
                let tokens = s.tokens.unwrap_or_default();
                let _ = writeln!(
                    human,
                    "    session {} ({}) ${:.4}{}  in {} out {} cache w {} r {}",
                    s.session_id,
                    s.role,
                    s.usd,
                    if s.measured_usd.is_none() {
                        " (stored; logs gone)"
                    } else {
                        ""
                    },
                    tokens.input,
                    tokens.output,
                    tokens.cache_write_5m + tokens.cache_write_1h,
                    tokens.cache_read + tokens.cached_input
                );
            }
            run["rounds"] = json!(rounds);
            run["sessions"] = serde_json::to_value(&spend.sessions).expect("serializes");
            run["unknown_models"] = json!(spend.unknown_models);
        }
        runs.push(run);
    }
    let _ = writeln!(human, "total {}", super::render::usd(total, 4));
    Ok(Report::new(
        json!({ "runs": runs, "total_usd": super::render::usd_json(total) }),
        human,
    ))
}
