//! `git pair start`: refuse a dirty work tree, then create a run and its first record.

use super::{CommandError, Context, Report, Ui};
use crate::ops;

/// Start a pair run on the current branch.
///
/// The work tree must be clean (no modified, staged or untracked files; ignored files are
/// fine), so that the review diff shows exactly the run's work. The base is HEAD (or --base);
/// every review shows the change from the base to the work tree. Creates
/// refs/pair/runs/<id>, writes HANDOFF.md and adds it to .git/info/exclude.
///
/// Which reviewer runs, first match wins: review --reviewer-cmd, the run's own reviewer (start
/// --reviewer, git pair set reviewer), pair.reviewer, pair.reviewerCommand, then codex.
///
/// Next: let the coder work, then `git pair coder-done --summary "…"`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the run is for, in a sentence or two.
    #[arg(long, value_name = "text")]
    pub task: String,
    /// The commit the change is measured against (default: HEAD).
    #[arg(long, value_name = "rev")]
    pub base: Option<String>,
    /// The coding agent (default: pair.coder, else claude).
    #[arg(long, value_name = "tool")]
    pub coder: Option<String>,
    /// The reviewer (default: pair.reviewer, else pair.reviewerCommand, else codex). Flags
    /// given here belong to the run; settings not given follow git config when they are used.
    #[arg(long, value_name = "tool")]
    pub reviewer: Option<String>,
    /// How many rounds before the loop stops for a human (default: pair.maxRounds, else 5).
    #[arg(long, value_name = "n")]
    pub max_rounds: Option<u32>,
    /// Spend limit in US dollars for the run (default: pair.budgetUsd, else none).
    #[arg(long, value_name = "usd", allow_negative_numbers = true)]
    pub budget_usd: Option<f64>,
    /// Abandon this branch's unfinished run first (recorded), instead of refusing.
    #[arg(long)]
    pub replace: bool,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    if ctx.run_flag().is_some() {
        return Err(CommandError::usage(
            "--run does not apply to start: it creates a new run",
        ));
    }
    let started = ops::start::start(
        ctx,
        &ops::start::Request {
            task: args.task.clone(),
            base: args.base.clone(),
            coder: args.coder.clone(),
            reviewer: args.reviewer.clone(),
            max_rounds: args.max_rounds,
            budget_usd: args.budget_usd,
            replace: args.replace,
        },
        &|message| ui.progress(message),
    )?;
    let mut report = Report::rendered(&started, crate::render::start::human);
    if let Some(old) = &started.replaced {
        report = report.note(format!("note: abandoned run {old} (replaced)"));
    }
    if let Some(path) = started
        .handoff_path
        .as_deref()
        .filter(|p| std::path::Path::new(p).ends_with(".git/pair/HANDOFF.md"))
    {
        report = report.note(format!(
            "note: HANDOFF.md here is not git pair's; the transcript view is at {path}"
        ));
    }
    if let Some(program) = ops::settings::missing_reviewer_program(ctx, &started.reviewer) {
        report = report.note(format!(
            "warning: the reviewer {} runs `{program}`, which is not on PATH: install it, or pick another with git pair set reviewer <name> (git pair probe lists what is installed)",
            started.reviewer
        ));
    }
    Ok(report)
}
