//! `git pair show`: one run, or one round's stored material.

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::model::Body;

/// Show a run's manifest, or one round's records and stored material.
///
/// With --round N: the coder summaries and review result of round N; add --diff, --prompt or
/// --output for the reviewed diff, the prompt sent, or the reviewer's raw output.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id (see git pair list).
    pub run_id: String,
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
    let run_id = ctx.run_id(Some(&args.run_id))?;
    let state = ctx.load(&run_id)?;
    let Some(round) = args.round else {
        let json = serde_json::to_value(&state.manifest).expect("manifest serializes");
        let human = crate::view::transcript(&ctx.repo, &run_id)?;
        return Ok(Report::new(json, human));
    };
    if round == 0 || round > state.manifest.current_coder_round().unwrap_or(0) {
        return Err(
            CommandError::failed(format!("run {run_id} has no round {round}"))
                .with_hint(format!("see the rounds with: git pair show {run_id}")),
        );
    }
    let material = [
        (args.diff, "diff.patch", "diff"),
        (args.prompt, "prompt.md", "prompt"),
        (args.output, "output.txt", "output"),
    ];
    if let Some((_, file, what)) = material.iter().find(|(wanted, _, _)| *wanted) {
        let path = format!("reviews/{round}/{file}");
        let bytes = ctx.repo.run_file(&state, &path)?.ok_or_else(|| {
            CommandError::failed(format!(
                "round {round} of run {run_id} has no stored {what}"
            ))
            .with_hint("it is stored when the round is reviewed: git pair review")
        })?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        return Ok(Report::new(
            json!({ "run_id": run_id.as_str(), "round": round, (*what): text }),
            text,
        ));
    }
    let records = ctx.repo.records(&state)?;
    let mut manifest = crate::model::Manifest::empty();
    let mut entries = Vec::new();
    let mut human = String::new();
    for record in &records {
        manifest.apply(record);
        let in_round = match &record.body {
            Body::Coder(_) => manifest.current_coder_round() == Some(round),
            Body::Review(review) => review.round == round,
            Body::ReviewDispatch(dispatch) => dispatch.round == round,
            _ => false,
        };
        if in_round {
            human.push_str(&crate::render::handoff::section(record, &manifest));
            entries.push(
                serde_json::from_slice::<serde_json::Value>(&record.to_json())
                    .expect("records are JSON"),
            );
        }
    }
    Ok(Report::new(
        json!({ "run_id": run_id.as_str(), "round": round, "records": entries }),
        human.trim_start().to_owned(),
    ))
}
