//! The PR's final round (`review --pr N`, `pair.prFinalRound`): the PR's head and base read
//! with `gh`, fetched from the remote by their ids, the merge base → head change reviewed
//! (not the local work tree), the findings posted on the PR as one comment (git pair's own,
//! updated in place), and the review recorded. The run then gets exactly one more coder
//! round to address them before `finish` records the PR as final. Never merges. One review
//! of a run at a time: while a PR review's process lives no other review starts; one whose
//! process died is dispatched again, what it left running stopped first.

use super::execute::{SnapshotDirs, execute};
use super::live::Live;
use super::plan::{Plan, Request, Settings, settings_from};
use super::prepare::prepare_change;
use super::record::{
    Outcome, dispatch_record, review_attempt, reviewed, store_dispatch, store_outcome,
};
use crate::model::report::review::PrRound;
use crate::model::settings::{self, Setting};
use crate::model::{self, Body, PrDispatch, PrReview, PrReviewFailed};
use crate::ops::common::pr::PrView;
use crate::ops::{Context, Error};
use crate::store::ReviewDir;

/// Where the PR's fetched commits are kept (local, never shared): reachable, so `gc` keeps
/// them while the run needs them.
fn fetched_ref(number: u64, which: &str) -> String {
    format!("refs/pair-local/pr/{number}/{which}")
}

/// The remote PR reviews are fetched from: `--remote`, else the current branch's upstream
/// remote (`branch.<name>.remote`, when that is a configured remote), else `origin`. Only a
/// configured remote is taken (the PR lives on one; a URL or path is no PR's home), and never
/// a name git could read as an option.
pub fn pr_remote(ctx: &Context, given: Option<&str>) -> Result<String, Error> {
    let configured = |name: &str| {
        !ctx.repo
            .config_values(&format!("remote.{name}.url"))
            .is_empty()
    };
    let name = match given {
        Some(name) => name.to_owned(),
        None => ctx
            .repo
            .head()
            .ok()
            .and_then(|head| {
                ctx.repo
                    .config_values(&format!("branch.{}.remote", head.branch_name()))
                    .pop()
            })
            .filter(|name| !name.starts_with('-') && configured(name))
            .unwrap_or_else(|| crate::sync::DEFAULT_REMOTE.to_owned()),
    };
    let plain = !name.is_empty()
        && !name.starts_with('-')
        && !name.chars().any(|c| c.is_control() || c.is_whitespace());
    if !plain {
        return Err(Error::PrRemote {
            remote: name.escape_debug().to_string(),
            detail: "not a remote name",
        });
    }
    if !configured(&name) {
        return Err(Error::PrRemote {
            remote: name,
            detail: "no such remote is configured",
        });
    }
    Ok(name)
}

/// Reviews PR `number` of the active run as `remote` has it and posts the findings. The
/// dispatch (with the packet) is stored before the reviewers run and the outcome (with every
/// attempt) after, under `pr/<number>/<attempt>/`, by the same code a coder round's review
/// is stored with; a review that gets no verdict, or whose comment cannot be posted, leaves
/// that audit trail and nothing else (nothing on the PR, the final review still due).
pub fn review_pr(
    ctx: &Context,
    request: &Request,
    number: u64,
    remote: Option<&str>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<PrRound, Error> {
    let run_id = crate::ops::common::select::active(ctx, None)?;
    let stored = ctx.load(&run_id)?.manifest;
    if !settings::flag(Some(&stored), &ctx.options, Setting::PrFinalRound) {
        return Err(model::Refusal::PrFinalRoundOff.into());
    }
    model::check_pr_review(&stored, number)?;
    crate::ops::status::refuse_if_reviewing(&stored)?;
    let remote = pr_remote(ctx, remote)?;
    let round = stored
        .current_coder_round()
        .expect("check_pr_review needs a reviewed coder round");
    let settings: Settings = Settings {
        // Review what the PR holds, as a first review of it.
        again: true,
        ..settings_from(&ctx.options, ctx.scanner()?, request, &stored)?
    };
    progress(&format!("reading PR #{number} with gh…"));
    let pr = crate::ops::common::pr::view(ctx, number, crate::render::pr_comment::MARKER)?;
    progress(&format!(
        "fetching PR #{number}'s head {} and base {} from {remote}…",
        short(&pr.head),
        short(&pr.base)
    ));
    crate::sync::fetch_commits(
        &ctx.repo,
        &remote,
        &[
            (pr.head, fetched_ref(number, "head")),
            (pr.base, fetched_ref(number, "base")),
        ],
    )?;
    // The head is pinned by its id from here on; a PR that moved meanwhile is not the one
    // fetched, and reviewing it would say nothing of what it holds now.
    still_at(ctx, number, &pr)?;
    let merge_base = ctx
        .repo
        .merge_base(pr.base, pr.head)?
        .ok_or_else(|| Error::GhPr {
            number,
            what: "the merge base",
            detail: format!(
                "head {} and base {} share no history",
                short(&pr.head),
                short(&pr.base)
            ),
        })?;
    let old = ctx.repo.commit_tree(merge_base)?;
    let new = ctx.repo.commit_tree(pr.head)?;
    settings.scanner.warm_up();
    let plan = prepare_change(&ctx.repo, &run_id, round, old, new, &settings)?;
    let settings = &Settings {
        over_budget: super::plan::enforce_budget(ctx, &stored, &plan, request)?,
        ..settings
    };
    let fetched = Fetched {
        pr: &pr,
        remote: &remote,
        merge_base,
    };
    let mut attempt = 0;
    let mut interrupted = None;
    let (dispatch_id, dir) = store_dispatch(&ctx.repo, &plan, |state| {
        model::check_pr_review(&state.manifest, number)?;
        // Checked again as the dispatch is written: of two started at once, one runs.
        crate::ops::status::refuse_if_reviewing(&state.manifest)?;
        interrupted = state
            .manifest
            .pr_round
            .as_ref()
            .and_then(|p| p.pending.as_ref())
            .map(|p| p.dispatch.clone());
        attempt = state.manifest.pr_round.as_ref().map_or(0, |p| p.dispatched) + 1;
        let body = fetched.dispatch(number, attempt, &plan, settings);
        let subject = format!(
            "pr-review: #{number} dispatched to {} (attempt {attempt})",
            plan.reviewer_labels().join(", ")
        );
        Ok((ReviewDir::Pr { number, attempt }, body, subject))
    })
    .map_err(Error::dispatch)?;
    if let Some(interrupted) = &interrupted {
        Live::stop_interrupted(&ctx.repo, run_id.as_str(), interrupted, progress);
    }
    let live = Live::new(&ctx.repo, run_id.as_str(), &dispatch_id);
    let snapshot_dir = crate::worktree::export::export(&ctx.repo, new)?;
    crate::worktree::export::omit(
        snapshot_dir.path(),
        plan.members
            .iter()
            .flat_map(|m| m.bound.realization.snapshot_omit.iter().map(String::as_str)),
    );
    let dirs = SnapshotDirs {
        snapshot: Some(snapshot_dir.path()),
        run_snapshot: Some(snapshot_dir.path()),
    };
    let results = execute(
        &plan,
        settings,
        &dirs,
        Some(live.recorder()),
        progress,
        &mut |_, _| {},
    );
    // Every reviewer has exited (or was killed with its group): none is left to stop.
    live.clear();
    drop(snapshot_dir);
    let (results, combined) = reviewed(&plan, results, settings);
    let sources = ctx.spend_sources().ok();
    let reviewers = plan.reviewer_labels();
    let tool = reviewers.join("+");
    let store = |body: Body, subject: String, trailer| {
        store_outcome(
            &ctx.repo,
            &plan,
            &settings.scanner,
            dir,
            Outcome {
                body: &body,
                subject: &subject,
                results: &results,
                combined: &combined,
                trailer,
            },
            sources.as_ref(),
        )
    };
    let failed = |outcome: String, error: String| -> Result<(), Error> {
        let body = Body::PrReviewFailed(PrReviewFailed {
            dispatch: dispatch_id.clone(),
            number,
            attempt,
            round,
            outcome: outcome.clone(),
            verdict: combined.verdict,
            findings: combined.findings.clone(),
            tool: tool.clone(),
            reviewers: results.iter().map(review_attempt).collect(),
            error,
        });
        let subject = format!("pr-review: #{number} failed ({outcome}), nothing posted");
        // Nothing was put on the PR: the record carries the reviewers' verdict, the commit
        // no `Pair-Verdict:`.
        store(body, subject, None)
    };
    // An answer no reviewer could give readably is the reviewer's failure, not a review of
    // the PR: it goes on the PR as nothing (a `[process]` finding is no finding of the code).
    let verdict = combined
        .verdict
        .filter(|_| combined.outcome != "failed-validation");
    let Some(verdict) = verdict else {
        let why = combined.error.clone().unwrap_or_else(|| {
            results
                .iter()
                .filter_map(|r| r.error.clone())
                .collect::<Vec<_>>()
                .join("; ")
        });
        failed(combined.outcome.clone(), why.clone())?;
        return Err(Error::GhPr {
            number,
            what: "the final review",
            detail: format!(
                "no verdict ({}){}; nothing was posted (the attempts are stored: git pair show {run_id} --pr {number}); run git pair review --pr {number} again",
                combined.outcome,
                if why.is_empty() {
                    String::new()
                } else {
                    format!(": {why}")
                }
            ),
        });
    };
    if let Err(moved) = still_at(ctx, number, &pr) {
        failed("head-moved".to_owned(), moved.to_string())?;
        return Err(moved);
    }
    let body = crate::render::pr_comment::render(&crate::render::pr_comment::Comment {
        run_id: run_id.as_str(),
        reviewers: &tool,
        head: &pr.head.to_string(),
        findings: &combined.findings,
    });
    let path = ctx
        .repo
        .pair_dir()
        .join("pr")
        .join(format!("{run_id}-review.md"));
    crate::ops::common::view::write_atomically(&path, body.as_bytes())?;
    let commented = match crate::ops::common::pr::comment(ctx, number, pr.own_comment, &path) {
        Ok(commented) => commented,
        Err(e) => {
            failed("not-posted".to_owned(), e.to_string())?;
            return Err(e);
        }
    };
    let record = PrReview {
        number,
        round,
        head: pr.head.into(),
        base: pr.base.into(),
        merge_base: merge_base.into(),
        head_ref: pr.head_ref.clone(),
        base_ref: pr.base_ref.clone(),
        verdict,
        tool: tool.clone(),
        findings: combined.findings.clone(),
        comment: commented.as_str().to_owned(),
        model: settings.model.clone(),
        effort: settings.effort.clone(),
        dispatch: Some(dispatch_id.clone()),
        attempt: Some(attempt),
        remote: Some(remote.clone()),
        outcome: Some(combined.outcome.clone()),
        reviewers: results.iter().map(review_attempt).collect(),
        fallback_used: combined.fallback_used,
    };
    let findings = record.findings.len();
    let subject = format!(
        "pr-review: #{number} {} ({tool}, {findings} findings)",
        verdict.as_str(),
    );
    store(Body::PrReview(record), subject, Some(verdict))?;
    ctx.refresh_handoff(&run_id)?;
    let next = crate::ops::status::next_action(ctx, &ctx.load_effective(&run_id)?.manifest);
    Ok(PrRound {
        run_id,
        pr: number,
        verdict,
        findings: combined.findings,
        comment: commented.as_str(),
        head: pr.head.to_string(),
        base: pr.base.to_string(),
        merge_base: merge_base.to_string(),
        reviewers,
        model: settings.model.clone(),
        effort: settings.effort.clone(),
        next_action: next.as_str(),
        next,
    })
}

/// Refuses when PR `number`'s head is no longer the commit `pr` read (pushed to meanwhile).
fn still_at(ctx: &Context, number: u64, pr: &PrView) -> Result<(), Error> {
    let now = crate::ops::common::pr::view(ctx, number, crate::render::pr_comment::MARKER)?;
    if now.head == pr.head {
        return Ok(());
    }
    Err(Error::GhPr {
        number,
        what: "the final review",
        detail: format!(
            "the PR's head moved from {} to {} while it was being reviewed; nothing was posted: run git pair review --pr {number} again",
            short(&pr.head),
            short(&now.head)
        ),
    })
}

/// What was read from gh and fetched: the PR's commits as the remote has them.
struct Fetched<'a> {
    pr: &'a PrView,
    remote: &'a str,
    merge_base: gix::ObjectId,
}

impl Fetched<'_> {
    /// The dispatch record of attempt `attempt` of PR `number`'s final review.
    fn dispatch(&self, number: u64, attempt: u32, plan: &Plan, settings: &Settings) -> Body {
        Body::PrDispatch(PrDispatch {
            number,
            attempt,
            remote: self.remote.to_owned(),
            head: self.pr.head.into(),
            base: self.pr.base.into(),
            merge_base: self.merge_base.into(),
            head_ref: self.pr.head_ref.clone(),
            base_ref: self.pr.base_ref.clone(),
            dispatch: dispatch_record(plan, settings),
        })
    }
}

fn short(id: &gix::ObjectId) -> String {
    id.to_hex_with_len(12).to_string()
}
