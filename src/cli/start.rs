//! `git pair start`: refuse a dirty work tree, then create a run and its first record.

use serde_json::json;

use super::{CommandError, Context, Report, Ui};
use crate::model::{Body, RunId, Start};
use crate::store::{Append, Head};
use crate::util::time;

/// Start a pair run on the current branch.
///
/// The work tree must be clean (no modified, staged or untracked files; ignored files are
/// fine), so that the review diff shows exactly the run's work. The base is HEAD (or --base);
/// every review shows the change from the base to the work tree. Creates
/// refs/pair/runs/<id>, writes HANDOFF.md and adds it to .git/info/exclude.
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
    /// The reviewer (default: pair.reviewer, else codex).
    #[arg(long, value_name = "tool")]
    pub reviewer: Option<String>,
    /// How many rounds before the loop stops for a human (default: pair.maxRounds, else 5).
    #[arg(long, value_name = "n")]
    pub max_rounds: Option<u32>,
    /// Spend limit in US dollars for the run (default: pair.budgetUsd, else none).
    #[arg(long, value_name = "usd")]
    pub budget_usd: Option<f64>,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let task = args.task.trim();
    if task.is_empty() {
        return Err(CommandError::usage("--task must not be empty"));
    }
    let max_rounds = args.max_rounds.unwrap_or(ctx.options.max_rounds);
    if max_rounds == 0 {
        return Err(CommandError::usage("--max-rounds must be at least 1"));
    }
    let budget_usd = args.budget_usd.or(ctx.options.budget_usd);
    if budget_usd.is_some_and(|b| !b.is_finite() || b < 0.0) {
        return Err(CommandError::usage(
            "--budget-usd must be a non-negative number",
        ));
    }
    let name_ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    let coder = args
        .coder
        .clone()
        .unwrap_or_else(|| ctx.options.coder.clone());
    let reviewer = args
        .reviewer
        .clone()
        .unwrap_or_else(|| ctx.options.reviewer.clone());
    for (flag, value) in [("--coder", &coder), ("--reviewer", &reviewer)] {
        if !name_ok(value) {
            return Err(CommandError::usage(format!(
                "{flag} '{}' is not a tool name (letters, digits, '-', '_', '.')",
                value.escape_debug()
            )));
        }
    }

    let work_dir = ctx.repo.work_dir()?.to_path_buf();
    let head = ctx.repo.head()?;
    if let Head::Branch { name, commit: None } = &head {
        return Err(CommandError::failed(format!(
            "HEAD is unborn: branch '{name}' has no commits yet"
        ))
        .with_hint("make a first commit, then start the run"));
    }
    let base = match &args.base {
        Some(rev) => ctx.repo.resolve_commit(rev)?,
        None => head.commit().expect("unborn HEAD was refused above"),
    };
    ui.progress("checking that the work tree is clean…");
    if let Some(dirty) = crate::worktree::first_dirty(&ctx.repo)? {
        return Err(CommandError::failed(format!(
            "work tree is dirty: {} ({})",
            dirty.path, dirty.what
        ))
        .with_hint("commit or stash your changes, then run git pair start again"));
    }

    let now = time::now_unix();
    let run_id = RunId::generate(now);
    let start = Start {
        run_id: run_id.to_string(),
        task: task.to_owned(),
        cwd: work_dir.display().to_string(),
        branch: head.branch_name().to_owned(),
        base: Some(base.to_string()),
        coder: coder.clone(),
        reviewer: reviewer.clone(),
        max_rounds,
        budget_usd,
        config: ctx.options.to_record(),
    };
    let subject = format!("start: {}", crate::util::first_line_clipped(task, 60));
    let appended = ctx.repo.create_run(
        &run_id,
        Some(base),
        Append::record(Body::Start(start), subject),
    )?;
    if ctx.options.handoff_file {
        crate::view::ensure_excluded(&ctx.repo)?;
    }
    let handoff_path = ctx.refresh_handoff(&run_id)?;
    let handoff = handoff_path.as_ref().map(|p| p.display().to_string());
    let json = json!({
        "run_id": run_id.as_str(),
        "ref": crate::store::run_ref(&run_id),
        "handoff_path": handoff,
        "max_rounds": max_rounds,
        "coder": coder,
        "reviewer": reviewer,
        "base": base.to_string(),
        "branch": appended.state.manifest.branch,
    });
    let human = format!(
        "Started run {run_id} on {branch} (base {short})\n\
         task: {task}\n\
         coder: {coder} · reviewer: {reviewer} · max rounds: {max_rounds}\n\
         next: let the coder work, then: git pair coder-done --summary \"…\"\n",
        branch = appended.state.manifest.branch,
        short = &base.to_string()[..12],
    );
    Ok(Report::new(json, human))
}
