//! `git pair list`: every run in this repository, newest first.

use serde_json::json;

use super::{CommandError, Context, Report};

/// List the runs stored in this repository, newest first.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: &Args) -> Result<Report, CommandError> {
    let mut runs = Vec::new();
    let mut human = String::new();
    for m in crate::ops::show::runs(ctx)? {
        let round = m.round;
        human.push_str(&format!(
            "{}  {:<20} round {round}/{}  {:<14} {}\n",
            m.run_id,
            m.branch,
            m.max_rounds,
            m.next_action.as_str(),
            crate::util::first_line_clipped(&m.task, 50)
        ));
        runs.push(json!({
            "run_id": m.run_id,
            "branch": m.branch,
            "task": m.task,
            "round": round,
            "next_action": m.next_action.as_str(),
            "verdict": m.verdict.map(|v| v.as_str()),
            "created_at": m.created_at,
        }));
    }
    if runs.is_empty() {
        human.push_str("no runs yet; start one with: git pair start --task \"…\"\n");
    }
    Ok(Report::new(json!({ "runs": runs }), human))
}
