//! `git pair show`: one run, or one round's stored material.

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::ops;
use crate::store::Material;

/// Show a run's manifest, or one round's records and stored material.
///
/// With --round N: the coder summaries and review result of round N; add --diff, --prompt or
/// --output for the reviewed diff, the prompt sent, or the reviewer's raw output.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id (see git pair list); `--run <id>` names it too.
    pub run_id: Option<String>,
    /// The round to show.
    #[arg(long, value_name = "n")]
    pub round: Option<u32>,
    /// Print the diff the reviewer saw in that round.
    #[arg(long, requires = "round", conflicts_with_all = ["prompt", "output"])]
    pub diff: bool,
    /// Print the prompt sent to the reviewer in that round.
    #[arg(long, requires = "round", conflicts_with_all = ["diff", "output"])]
    pub prompt: bool,
    /// Print the reviewer's raw output in that round.
    #[arg(long, requires = "round", conflicts_with_all = ["diff", "prompt"])]
    pub output: bool,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let state = ops::show::run(ctx, args.run_id.as_deref())?;
    let run_id = &state.run_id;
    let Some(round) = args.round else {
        let json = serde_json::to_value(&state.manifest).expect("manifest serializes");
        let human = ops::show::transcript(ctx, run_id)?;
        return Ok(Report::new(json, human));
    };
    let material = [
        (args.diff, Material::Diff, "diff"),
        (args.prompt, Material::Prompt, "prompt"),
        (args.output, Material::Output, "output"),
    ];
    if let Some((_, material, what)) = material.iter().find(|(wanted, _, _)| *wanted) {
        let bytes = ops::show::material(&state, ctx, round, *material)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        return Ok(Report::new(
            json!({ "run_id": run_id.as_str(), "round": round, (*what): text }),
            text,
        ));
    }
    let round_records = ops::show::round_records(ctx, &state, round)?;
    let mut entries = Vec::new();
    let mut human = String::new();
    for (record, manifest) in &round_records.records {
        human.push_str(&crate::render::handoff::section(record, manifest));
        entries.push(
            serde_json::from_slice::<serde_json::Value>(&record.to_json())
                .expect("records are JSON"),
        );
    }
    Ok(Report::new(
        json!({ "run_id": run_id.as_str(), "round": round, "records": entries }),
        human.trim_start().to_owned(),
    ))
}
