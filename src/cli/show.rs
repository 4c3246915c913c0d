//! `git pair show`: one run, or one round's stored material.

use super::{CommandError, Context, Report};
use crate::ops;
use crate::store::Material;

/// Show a run's manifest, or one round's records and stored material.
///
/// With --round N: the coder summaries and review result of round N; add --diff, --prompt or
/// --output for the reviewed diff, the prompt sent, or the reviewer's raw output. With --pr N
/// the same for the PR's final review (`review --pr N`), its newest dispatch's material
/// (every dispatch's is in the run: git show refs/pair/runs/<run>:pr/<N>/<attempt>/).
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("round_or_pr").args(["round", "pr"]))]
pub struct Args {
    /// The run id (see git pair list); `--run <id>` names it too.
    pub run_id: Option<String>,
    /// The round to show.
    #[arg(long, value_name = "n", conflicts_with = "pr")]
    pub round: Option<u32>,
    /// The final review of this PR to show (its records; its material with --diff, …).
    #[arg(long, value_name = "n")]
    pub pr: Option<u64>,
    /// Print the diff the reviewer saw in that round.
    #[arg(long, requires = "round_or_pr", conflicts_with_all = ["prompt", "output"])]
    pub diff: bool,
    /// Print the prompt sent to the reviewer in that round.
    #[arg(long, requires = "round_or_pr", conflicts_with_all = ["diff", "output"])]
    pub prompt: bool,
    /// Print the reviewer's raw output in that round.
    #[arg(long, requires = "round_or_pr", conflicts_with_all = ["diff", "prompt"])]
    pub output: bool,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let material = [
        (args.diff, Material::Diff),
        (args.prompt, Material::Prompt),
        (args.output, Material::Output),
    ]
    .into_iter()
    .find_map(|(wanted, material)| wanted.then_some(material));
    let shown = match args.pr {
        Some(number) => ops::show::show_pr(ctx, args.run_id.as_deref(), number, material)?,
        None => ops::show::show(ctx, args.run_id.as_deref(), args.round, material)?,
    };
    let report = Report::rendered(&shown, crate::render::show::human);
    Ok(if args.diff { report.raw() } else { report })
}
