//! The human views of `cost`'s reports: every run's spend, and one session priced whole.

use std::io::{Result, Write};

use super::common::{spend, usd};
use crate::cost::{SessionCost, TokenCounts};
use crate::model::Role;
use crate::model::report::cost::Costs;

/// One line per run; the selected run also round by round and session by session. A spend
/// with unpriced tokens reads as a lower bound naming the models, tokens that were not
/// measured as unknown (never `$0`, never `in 0 out 0`).
pub fn human(costs: &Costs, out: &mut dyn Write) -> Result<()> {
    for run in &costs.runs {
        writeln!(
            out,
            "{}  {:>12}  {}",
            run.run_id,
            spend(run.spent, &run.unpriced_models, 4),
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
                e.cost_usd.map_or("—".to_owned(), |c| usd(Some(c), 4))
            )?;
        }
        for s in &detail.sessions {
            let how = match (s.reported_usd, s.measured_usd) {
                (Some(_), _) => " (as its CLI reported)",
                (None, None) => " (stored; logs gone)",
                (None, Some(_)) => "",
            };
            writeln!(
                out,
                "    session {} ({}) {}{how}  {}",
                s.session_id,
                s.role,
                spend(Some(s.usd), &s.unknown_models, 4),
                tokens(s.tokens.as_ref())
            )?;
        }
    }
    writeln!(
        out,
        "total {}",
        spend(costs.total, &costs.unpriced_models, 4)
    )
}

/// Tokens by kind, or `tokens unknown` when none were measured (logs gone).
fn tokens(t: Option<&TokenCounts>) -> String {
    match t {
        Some(t) => format!(
            "in {} out {} cache w {} r {}",
            t.input,
            t.output,
            t.cache_write_5m + t.cache_write_1h,
            t.cache_read + t.cached_input
        ),
        None => "tokens unknown".to_owned(),
    }
}

/// One session's total and its models' costs and tokens.
pub fn session(priced: &SessionCost, out: &mut dyn Write) -> Result<()> {
    let measured = priced.requests > 0 || !priced.models.is_empty();
    writeln!(
        out,
        "session {} ({:?}): {}",
        priced.session_id,
        priced.agent,
        if measured {
            spend(Some(priced.total_usd), &priced.unknown_models, 4)
        } else {
            "no usage in its logs".to_owned()
        }
    )?;
    for model in &priced.models {
        writeln!(
            out,
            "  {:<32} {:>10}  in {:>10} out {:>9} cache w {:>10} r {:>11}",
            model.model,
            model
                .cost_usd
                .map_or_else(|| "unpriced".to_owned(), |c| usd(Some(c), 4)),
            model.tokens.input,
            model.tokens.output,
            model.tokens.cache_write_5m + model.tokens.cache_write_1h,
            model.tokens.cache_read + model.tokens.cached_input
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::spend::SessionLine;
    use crate::model::report::cost::{RoundCost, RunCost, RunDetail};

    const RUN: &str = "20260901-090000-abcdef";

    fn line(usd: f64, tokens: Option<TokenCounts>, unknown: &[&str]) -> SessionLine {
        SessionLine {
            session_id: "s-1".into(),
            role: "coder".into(),
            tool: "claude".into(),
            agent: None,
            stored_usd: usd,
            measured_usd: tokens.map(|_| usd),
            usd,
            tokens,
            unknown_models: unknown.iter().map(|m| (*m).to_owned()).collect(),
            reported_usd: None,
            priced: true,
            unpriced: Default::default(),
        }
    }

    fn costs(spent: Option<f64>, unpriced: &[&str], sessions: Vec<SessionLine>) -> Costs {
        let unpriced: Vec<String> = unpriced.iter().map(|m| (*m).to_owned()).collect();
        Costs {
            runs: vec![RunCost {
                run_id: crate::model::RunId::parse(RUN).unwrap(),
                spent_usd: crate::render::common::usd_json(spent),
                unpriced_models: unpriced.clone(),
                budget_usd: None,
                detail: Some(RunDetail {
                    rounds: vec![RoundCost {
                        n: 1,
                        role: Role::Coder,
                        tool: "claude".into(),
                        cost_usd: Some(-0.0),
                    }],
                    sessions,
                    unknown_models: unpriced.clone(),
                }),
                spent,
                task: "t".into(),
            }],
            total_usd: crate::render::common::usd_json(spent),
            unpriced_models: unpriced,
            total: spent,
        }
    }

    fn text(c: &Costs) -> String {
        let mut out = Vec::new();
        human(c, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn unpriced_spend_is_a_lower_bound_and_unknown_tokens_are_unknown() {
        let t = TokenCounts {
            input: 10,
            output: 20,
            ..Default::default()
        };
        let got = text(&costs(
            Some(0.5),
            &["claude-opus-9"],
            vec![
                line(0.5, Some(t), &["claude-opus-9"]),
                line(-0.0, None, &[]),
            ],
        ));
        assert!(
            got.contains("≥ $0.5000, unpriced: claude-opus-9  in 10 out 20"),
            "{got}"
        );
        assert!(
            got.contains("$0.0000 (stored; logs gone)  tokens unknown"),
            "{got}"
        );
        assert!(!got.contains("in 0 out 0"), "{got}");
        assert!(
            got.contains("total ≥ $0.5000, unpriced: claude-opus-9"),
            "{got}"
        );
        assert!(!got.contains("$-"), "no negative zero: {got}");
        let got = text(&costs(None, &["claude-opus-9"], vec![]));
        assert!(
            got.contains("total ≥ $0.0000, unpriced: claude-opus-9"),
            "{got}"
        );
        let got = text(&costs(None, &[], vec![]));
        assert!(got.contains("total not measured"), "{got}");
    }
}
