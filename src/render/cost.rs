//! The human views of `cost`'s reports: every run's spend, and one session priced whole.

use std::io::{Result, Write};

use super::common::usd;
use crate::cost::SessionCost;
use crate::model::Role;
use crate::model::report::cost::Costs;

/// One line per run; the selected run also round by round and session by session.
pub fn human(costs: &Costs, out: &mut dyn Write) -> Result<()> {
    for run in &costs.runs {
        writeln!(
            out,
            "{}  {:>12}  {}",
            run.run_id,
            usd(run.spent, 4),
            crate::util::first_line_clipped(&run.task, 50)
        )?;
        let Some(detail) = &run.detail else { continue };
        for e in &detail.rounds {
            let role = match e.role {
                Role::Coder => "coder",
                Role::Reviewer => "reviewer",
            };
            writeln!(
                out,
                "    round {:<3} {:<8} {:<8} {}",
                e.n,
                role,
                e.tool,
                e.cost_usd.map_or("—".to_owned(), |c| format!("${c:.4}"))
            )?;
        }
        for s in &detail.sessions {
            let tokens = s.tokens.unwrap_or_default();
            writeln!(
                out,
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
            )?;
        }
    }
    writeln!(out, "total {}", usd(costs.total, 4))
}

/// One session's total and its models' costs and tokens.
pub fn session(priced: &SessionCost, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "session {} ({:?}): ${:.4}",
        priced.session_id, priced.agent, priced.total_usd
    )?;
    for model in &priced.models {
        writeln!(
            out,
            "  {:<32} {:>10}  in {:>10} out {:>9} cache w {:>10} r {:>11}",
            model.model,
            model
                .cost_usd
                .map_or_else(|| "unpriced".to_owned(), |c| format!("${c:.4}")),
            model.tokens.input,
            model.tokens.output,
            model.tokens.cache_write_5m + model.tokens.cache_write_1h,
            model.tokens.cache_read + model.tokens.cached_input
        )?;
    }
    Ok(())
}
