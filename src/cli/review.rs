//! `git pair review`: the reviewer round — packet, write-ahead dispatch, reviewers, outcome.

use super::{CommandError, Context, Report, Ui};
use crate::model::report::review;
use crate::ops;
use crate::render::review as render;

/// Have the reviewer read the change (base → work tree) and give a verdict.
///
/// Snapshots the work tree, builds the review packet (a change over pair.diffBudgetBytes is
/// reviewed in several packets, "passes", so every changed byte is seen; the round approves
/// only when every pass did), records the dispatch BEFORE spawning anything, runs the reviewer
/// (or the pair.reviewers panel) with a timeout, retries a failed reviewer once, re-asks once
/// when no verdict can be read (at most two calls per pass), and records everything. Nothing
/// that cannot be read is ever taken as approval. Files no pass can show (binary content, over
/// pair.maxFileBytes) are listed as unreviewed: an approval then is partial and opens no gate.
///
/// Which reviewer runs, first match wins: review --reviewer-cmd, the run's own reviewer (start
/// --reviewer, git pair set reviewer), pair.reviewer, pair.reviewerCommand, then codex.
///
/// Exit 0 for APPROVED and CHANGES_REQUESTED alike (the verdict is data); exit 1 when no
/// verdict could be obtained (no round is used; `git pair review` again retries).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run this command as the reviewer: a JSON array, e.g. '["my-reviewer", "--strict"]'
    /// (prompt on stdin, review on stdout). Overrides every other reviewer and the panel.
    #[arg(long, value_name = "json-array")]
    pub reviewer_cmd: Option<String>,
    /// Seconds to wait for each reviewer attempt (default: pair.reviewTimeout, else 600).
    #[arg(long, value_name = "seconds")]
    pub timeout: Option<u64>,
    /// Review a plan (no code changes yet) or the change against this plan.
    #[arg(long, value_name = "file")]
    pub plan: Option<std::path::PathBuf>,
    /// Build and print the packet and the reviewer command lines; store and spawn nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Review with a reviewer that costs money although the run's budget is spent
    /// (`stop:budget`): recorded on the round and shown in the PR body. Without it, review
    /// at the budget's alert exits 2 and starts nothing (the built-in reviewer still runs).
    #[arg(long)]
    pub over_budget: bool,
    /// Review again although this coder round was already reviewed.
    #[arg(long)]
    pub again: bool,
    /// Ask the reviewer for this model (default: pair.reviewerModel, else the CLI's own),
    /// through the model arguments its realization declares (codex -m, claude --model);
    /// recorded on the review. A reviewer that takes no model refuses it.
    #[arg(long, value_name = "name")]
    pub model: Option<String>,
    /// Ask the reviewer for this reasoning effort (default: pair.reviewerEffort): codex
    /// none|minimal|low|medium|high|xhigh, claude low|medium|high|xhigh|max.
    #[arg(long, value_name = "level")]
    pub effort: Option<String>,
    /// The PR's final review (pair.prFinalRound): review PR N's diff as the remote has it
    /// (its base...head, fetched from --remote; not the local work tree), post the findings as
    /// one PR comment through gh (updating git pair's own earlier one), and record it (dispatch,
    /// packet and every attempt under pr/N/<attempt>/ in the run: git pair show RUN --pr N);
    /// the run then gets one more coder round to address them before `finish`. Nothing is
    /// posted when no readable verdict comes or the PR's head moved meanwhile. Never merges.
    #[arg(long, value_name = "n", conflicts_with_all = ["plan", "dry_run"])]
    pub pr: Option<u64>,
    /// With --pr: the remote the PR lives on, its head and base fetched from there (default:
    /// the current branch's upstream remote, else origin). Only a configured remote.
    #[arg(long, value_name = "remote", requires = "pr")]
    pub remote: Option<String>,
}

/// `review` where a repository may be missing: `--plan FILE` outside a repository, or with
/// no active run, reviews the plan alone and stores nothing; everything else needs the run.
pub fn run_anywhere(
    opened: Result<Context, ops::Error>,
    ui: &Ui,
    args: &Args,
) -> Result<Report, CommandError> {
    let plan_alone = args.plan.is_some() && args.pr.is_none() && !args.dry_run;
    let ctx = match opened {
        Ok(ctx) => ctx,
        Err(ops::Error::Store(crate::store::Error::NotARepository { .. })) if plan_alone => {
            let global = crate::store::GlobalConfig::load();
            let options = crate::config::Options::from_lookup(|key| global.occurrences(key))?;
            return plan_alone_report(&options, ui, args);
        }
        Err(e) => return Err(e.into()),
    };
    if plan_alone
        && matches!(
            ops::common::select::active(&ctx, None),
            Err(ops::Error::NoActiveRun { .. })
        )
    {
        return plan_alone_report(&ctx.options, ui, args);
    }
    run(&ctx, ui, args)
}

/// The plan reviewed with no run: its verdict and findings, stored nowhere.
fn plan_alone_report(
    options: &crate::config::Options,
    ui: &Ui,
    args: &Args,
) -> Result<Report, CommandError> {
    let request = request(args)?;
    let reviewed = ops::review::review_plan_alone(options, &request, &|m| ui.progress(m))?;
    let report = Report::rendered(&reviewed, render::plan_review);
    if reviewed.verdict.is_none() {
        let mut err = CommandError::failed(format!(
            "the plan review got no verdict ({}){}",
            reviewed.outcome,
            reviewed
                .error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ))
        .with_hint("nothing was stored; run git pair review --plan again (see git pair probe)");
        for (k, v) in report.json {
            err = err.with_partial(&k, v);
        }
        return Err(err);
    }
    Ok(report)
}

pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let request = request(args)?;
    if let Some(number) = args.pr {
        let reviewed =
            ops::review::review_pr(ctx, &request, number, args.remote.as_deref(), &|message| {
                ui.progress(message)
            })?;
        return Ok(Report::rendered(&reviewed, render::pr_round));
    }
    let reviewed = ops::review::review(ctx, &request, &|message| ui.progress(message))?;
    let ignored_key = (!ctx.options.redact_secrets).then(|| render::REDACTION_ALWAYS_ON.to_owned());
    let round = match reviewed {
        review::Review::DryRun(dry_run) => {
            let mut report = Report::rendered(&*dry_run, render::dry_run);
            report.notes.extend(render::dry_run_notes(&dry_run));
            report.notes.extend(ignored_key);
            return Ok(report);
        }
        review::Review::Round(round) => round,
    };
    let mut report = Report::rendered(&*round, render::round);
    if round.verdict.is_none() {
        let mut err =
            CommandError::failed(render::no_verdict(&round)).with_hint(no_verdict_hint(&round));
        for (k, v) in report.json {
            err = err.with_partial(&k, v);
        }
        return Err(err);
    }
    report.notes.extend(render::round_notes(&round));
    report.notes.extend(ignored_key);
    Ok(report)
}

/// What to do after a round without a verdict. Credentials the vendor refused fail again
/// until they are fixed, so that comes first; anything else may pass on a second try.
fn no_verdict_hint(round: &review::Round) -> String {
    if round.auth_failed.is_empty() {
        return "no round was used; run git pair review again (see git pair probe, or --timeout)"
            .to_owned();
    }
    format!(
        "no round was used; {} refused the credentials: fix them first (log in with the CLI itself, or set its API key in the environment git pair runs in), then run git pair review again",
        round.auth_failed.join(", ")
    )
}

/// The round's request from the flags.
fn request(args: &Args) -> Result<ops::review::Request, CommandError> {
    let reviewer_command = args
        .reviewer_cmd
        .as_deref()
        .map(crate::review::probe::parse_reviewer_command)
        .transpose()?;
    if args.timeout == Some(0) {
        return Err(CommandError::usage("--timeout must be at least 1 second"));
    }
    let plan = match &args.plan {
        Some(path) => {
            Some(
                std::fs::read_to_string(path).map_err(|source| ops::Error::ReadFile {
                    what: "--plan file",
                    path: path.display().to_string(),
                    source,
                })?,
            )
        }
        None => None,
    };
    let choice = |flag: &str, value: &Option<String>| {
        value
            .as_deref()
            .map(|v| {
                if crate::model::settings::is_choice(v) {
                    Ok(v.to_owned())
                } else {
                    Err(CommandError::usage(format!(
                        "{flag} {v:?}: expected {}",
                        crate::model::settings::CHOICE_EXPECTED
                    )))
                }
            })
            .transpose()
    };
    let model = choice("--model", &args.model)?;
    let effort = choice("--effort", &args.effort)?;
    Ok(ops::review::Request {
        model,
        effort,
        reviewer_command,
        timeout_secs: args.timeout,
        plan,
        again: args.again,
        dry_run: args.dry_run,
        over_budget: args.over_budget,
    })
}
