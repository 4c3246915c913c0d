//! `git pair finish`: close the run, render the PR body, record a PR number.

use serde_json::json;

use super::{CommandError, Context, Report, Ui};
use crate::model::{self, Body, Finish, Verdict};
use crate::store::Append;

/// Close the run and render its PR body from the stored records.
///
/// APPROVED (the default) needs the last review to be APPROVED; --force closes anyway and is
/// recorded as an override that the PR body shows. Writes the body to .git/pair/pr/<run>.md
/// (never into the work tree) and prints its path; commit and push your work the normal way,
/// then open the PR with it (--open-pr does that through `gh`). A human merges; the tool never
/// does. On a finished run, --pr N records the PR number (idempotent) and nothing else.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The outcome to record: APPROVED (default) or CHANGES_REQUESTED (closing unapproved).
    #[arg(long, value_name = "verdict", value_parser = ["APPROVED", "CHANGES_REQUESTED"])]
    pub verdict: Option<String>,
    /// Record the number of the PR opened for this run.
    #[arg(long, value_name = "n")]
    pub pr: Option<u64>,
    /// Finish APPROVED without an approving last review (recorded as an override).
    #[arg(long)]
    pub force: bool,
    /// Open the PR with `gh pr create --body-file …` (needs the GitHub CLI).
    #[arg(long)]
    pub open_pr: bool,
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    // A finished run is no longer "active": --pr still reaches it (the newest run here).
    let run_id = match ctx.run_id(None) {
        Ok(id) => id,
        Err(e) => super::pr_body::newest_run(ctx).ok_or(e)?,
    };
    let state = ctx.load(&run_id)?;
    let verdict = match args.verdict.as_deref() {
        Some("CHANGES_REQUESTED") => Verdict::ChangesRequested,
        _ => Verdict::Approved,
    };
    let mut notes = Vec::new();
    if state.manifest.is_finished() {
        if args.force || args.verdict.is_some() {
            return Err(
                CommandError::failed(format!("run {run_id} is already finished"))
                    .with_hint("only --pr N (recording the PR number) applies to a finished run"),
            );
        }
    } else {
        let appended = ctx.repo.append(&run_id, |s| {
            model::check_finish(&s.manifest, verdict, args.force)?;
            let override_ = verdict == Verdict::Approved
                && s.manifest.last_verdict() != Some(Verdict::Approved);
            let mut append = Append::record(
                Body::Finish(Finish {
                    verdict,
                    override_,
                    pr: args.pr,
                }),
                format!(
                    "finish: {}{}",
                    verdict.as_str(),
                    if override_ {
                        " (override: --force)"
                    } else {
                        ""
                    }
                ),
            );
            append.verdict = Some(verdict.as_str().to_owned());
            append.round = s.manifest.current_coder_round();
            Ok(append)
        })?;
        if appended.state.manifest.outcome.override_ {
            notes.push("note: finished with --force; the PR body shows the override".to_owned());
        }
    }
    if let Some(number) = args.pr {
        record_pr(ctx, &run_id, number)?;
    }
    let path = write_pr_body(ctx, &run_id)?;
    let mut pr = ctx.load(&run_id)?.manifest.pr;
    if args.open_pr {
        match pr {
            Some(n) => notes.push(format!(
                "note: run {run_id} already has PR #{n}; not opening another"
            )),
            None => {
                let number = open_pr(ctx, ui, &run_id, &path)?;
                if let Some(n) = number {
                    record_pr(ctx, &run_id, n)?;
                    pr = Some(n);
                }
            }
        }
    }
    let noted = attach_note(ctx, &run_id)?;
    if noted.is_none() {
        notes.push(
            "note: HEAD does not hold the reviewed work yet; after you commit it, run git pair finish again to attach the review note (refs/notes/pair)"
                .to_owned(),
        );
    }
    ctx.refresh_handoff(&run_id)?;
    let m = ctx.load(&run_id)?.manifest;
    let verdict = m.outcome.verdict.map(Verdict::as_str);
    let mut report = Report::new(
        json!({
            "run_id": run_id.as_str(),
            "pr_body_path": path.display().to_string(),
            "verdict": verdict,
            "pr": pr,
            "override": m.outcome.override_,
            "note_commit": noted.map(|c| c.to_string()),
        }),
        format!(
            "Finished run {run_id}: {}\nPR body: {}\nnext: commit and push your work, then open the PR with that body (or git pair finish --open-pr)\n",
            verdict.unwrap_or("?"),
            path.display()
        ),
    );
    report.notes = notes;
    Ok(report)
}

/// Attaches the run's line to the `refs/notes/pair` note of HEAD when HEAD's tree is the
/// snapshot the reviewer last reviewed (approved, or overridden); returns the annotated
/// commit. Idempotent: the note holds each line once.
fn attach_note(
    ctx: &Context,
    run_id: &model::RunId,
) -> Result<Option<gix::ObjectId>, CommandError> {
    let state = ctx.load(run_id)?;
    let m = &state.manifest;
    let Some(verdict) = m.outcome.verdict else {
        return Ok(None);
    };
    let records = ctx.repo.records(&state)?;
    let reviewed = records.iter().rev().find_map(|r| match &r.body {
        Body::Review(review) if review.verdict.is_some() => Some(review),
        _ => None,
    });
    let Some(review) = reviewed else {
        return Ok(None);
    };
    let Some(head) = ctx.repo.head()?.commit() else {
        return Ok(None);
    };
    if ctx.repo.commit_tree(head)? != review.snapshot {
        return Ok(None);
    }
    let spent = super::status::round_usd(m.spent_usd);
    let mut line = format!(
        "pair-run={run_id} verdict={} rounds={} reviewer={} cost_usd={spent} tree={}",
        verdict.as_str(),
        m.outcome.rounds,
        review.tool,
        review.snapshot
    );
    if m.outcome.override_ {
        line.push_str(" override=true");
    }
    crate::store::notes::add_line(&ctx.repo, head, &line)?;
    Ok(Some(head))
}

/// Records `number` as the run's PR, once; a different number on a run that has one is
/// refused (a run never gets a second PR).
fn record_pr(ctx: &Context, run_id: &model::RunId, number: u64) -> Result<(), CommandError> {
    let current = ctx.load(run_id)?.manifest.pr;
    match current {
        Some(n) if n == number => return Ok(()),
        Some(n) => {
            return Err(CommandError::failed(format!(
                "run {run_id} already has PR #{n}; a run never gets a second PR"
            )));
        }
        None => {}
    }
    ctx.repo.append(run_id, |s| {
        if let Some(n) = s.manifest.pr.filter(|n| *n != number) {
            return Err(model::Refusal {
                message: format!("run {run_id} already has PR #{n}; a run never gets a second PR"),
                hint: None,
            });
        }
        Ok(Append::record(
            Body::Pr { number },
            format!("pr: #{number}"),
        ))
    })?;
    Ok(())
}

/// Renders the PR body from the stored records into `.git/pair/pr/<run>.md`.
pub fn write_pr_body(
    ctx: &Context,
    run_id: &model::RunId,
) -> Result<std::path::PathBuf, CommandError> {
    let body = render_pr_body(ctx, run_id)?;
    let path = ctx.repo.pair_dir().join("pr").join(format!("{run_id}.md"));
    crate::view::write_atomically(&path, body.as_bytes())?;
    Ok(path)
}

/// The PR body of a run.
pub fn render_pr_body(ctx: &Context, run_id: &model::RunId) -> Result<String, CommandError> {
    let state = ctx.load(run_id)?;
    let records = ctx.repo.records(&state)?;
    let spent = match ctx.spend_sources() {
        Ok(sources) => crate::spend::measure(&state.manifest, &sources).spent_usd,
        Err(_) => state.manifest.spent_usd,
    };
    Ok(crate::render::pr_body::render(&records, spent))
}

fn open_pr(
    ctx: &Context,
    ui: &Ui,
    run_id: &model::RunId,
    body: &std::path::Path,
) -> Result<Option<u64>, CommandError> {
    let m = ctx.load(run_id)?.manifest;
    let title = crate::util::first_line_clipped(&m.task, 70);
    ui.progress("opening the PR with gh…");
    let out = crate::process::run_tool(
        "gh",
        &[
            "pr",
            "create",
            "--title",
            &title,
            "--body-file",
            &body.display().to_string(),
        ],
        ctx.repo.work_dir()?,
        std::time::Duration::from_secs(120),
    )
    .map_err(|e| match e {
        crate::process::ToolError::NotFound => {
            CommandError::failed("--open-pr needs the GitHub CLI (gh), which is not installed")
                .with_hint(format!(
                    "install gh, or open the PR yourself with the body in {}",
                    body.display()
                ))
        }
        other => CommandError::failed(format!("gh pr create failed: {other}")),
    })?;
    // gh prints the new PR's URL: …/pull/<n>
    Ok(out
        .lines()
        .filter_map(|l| l.trim().rsplit_once("/pull/"))
        .find_map(|(_, n)| n.trim_end_matches('/').parse().ok()))
}
