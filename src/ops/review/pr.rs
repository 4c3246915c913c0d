//! The PR's final round (`review --pr N`, `pair.prFinalRound`): the PR's head and base read
//! with `gh`, fetched from the remote by their ids, the merge base → head change reviewed
//! (not the local work tree), the findings posted on the PR as one comment (git pair's own,
//! updated in place), and the review recorded. The run then gets exactly one more coder
//! round to address them before `finish` records the PR as final. Never merges.

use super::execute::{SnapshotDirs, execute};
use super::plan::{MemberResult, Request, Settings, settings_from};
use super::prepare::prepare_change;
use crate::model::report::review::PrRound;
use crate::model::settings::{self, Setting};
use crate::model::{self, Body, PrReview};
use crate::ops::{Context, Error};
use crate::store::Append;

/// Where the PR's fetched commits are kept (local, never shared): reachable, so `gc` keeps
/// them while the run needs them.
fn fetched_ref(number: u64, which: &str) -> String {
    format!("refs/pair-local/pr/{number}/{which}")
}

/// Reviews PR `number` of the active run as the remote has it and posts the findings.
pub fn review_pr(
    ctx: &Context,
    request: &Request,
    number: u64,
    remote: &str,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<PrRound, Error> {
    let run_id = crate::ops::common::select::active(ctx, None)?;
    let stored = ctx.load(&run_id)?.manifest;
    if !settings::flag(Some(&stored), &ctx.options, Setting::PrFinalRound) {
        return Err(model::Refusal::PrFinalRoundOff.into());
    }
    model::check_pr_review(&stored, number)?;
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
        remote,
        &[
            (pr.head, fetched_ref(number, "head")),
            (pr.base, fetched_ref(number, "base")),
        ],
    )?;
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
    let results: Vec<MemberResult> =
        execute(&plan, &settings, &dirs, None, progress, &mut |_, _| {})
            .into_iter()
            .map(|r| super::record::redact_result(&settings.scanner, r))
            .collect();
    let combined = super::record::combine(&plan, &results, settings.quorum);
    let reviewers = plan.reviewer_labels();
    let Some(verdict) = combined.verdict else {
        return Err(Error::GhPr {
            number,
            what: "the final review",
            detail: format!(
                "no verdict ({}){}; nothing was posted or recorded: run git pair review --pr {number} again",
                combined.outcome,
                combined
                    .error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ),
        });
    };
    let body = crate::render::pr_comment::render(&crate::render::pr_comment::Comment {
        run_id: run_id.as_str(),
        reviewers: &reviewers.join("+"),
        head: &pr.head.to_string(),
        findings: &combined.findings,
    });
    let path = ctx
        .repo
        .pair_dir()
        .join("pr")
        .join(format!("{run_id}-review.md"));
    crate::ops::common::view::write_atomically(&path, body.as_bytes())?;
    let commented = crate::ops::common::pr::comment(ctx, number, pr.own_comment, &path)?;
    let record = PrReview {
        number,
        round,
        head: pr.head.into(),
        base: pr.base.into(),
        merge_base: merge_base.into(),
        head_ref: pr.head_ref.clone(),
        base_ref: pr.base_ref.clone(),
        verdict,
        tool: reviewers.join("+"),
        findings: combined.findings.clone(),
        comment: commented.as_str().to_owned(),
        model: settings.model.clone(),
        effort: settings.effort.clone(),
    };
    let findings = record.findings.len();
    ctx.repo.append(&run_id, |s| {
        model::check_pr_review(&s.manifest, number)?;
        let mut append = Append::record(
            Body::PrReview(record.clone()),
            format!(
                "pr-review: #{number} {} ({}, {findings} findings)",
                verdict.as_str(),
                record.tool
            ),
        );
        append.verdict = Some(verdict.as_str().to_owned());
        append.round = Some(round);
        Ok(append)
    })?;
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

fn short(id: &gix::ObjectId) -> String {
    id.to_hex_with_len(12).to_string()
}
