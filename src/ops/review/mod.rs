//! One review round end to end (SPEC §6): [`prepare`] (snapshot, packet, prompt, bound
//! reviewers; stores nothing) → [`record::dispatch`] (the write-ahead dispatch record, before
//! anything is spawned) → [`execute`] (runs reviewers: one retry, one re-ask, panels; stores
//! nothing) → [`record::record`] (the outcome and everything each attempt produced). The flow
//! is one way; progress goes through a callback.

mod execute;
mod live;
mod plan;
mod pr;
mod prepare;
mod record;
mod standalone;
pub(crate) use record::SCANNER_SECRET_TEXT;

pub use execute::{ATTEMPTS_PER_MEMBER, SnapshotDirs, execute};
pub use plan::{
    Carried, Member, MemberResult, Plan, PromptParts, Request, RoundOutcome, Settings, StoredPrior,
    settings_from,
};
pub use pr::review_pr;
pub use prepare::{prepare, prepare_change};
pub use record::{dispatch, member, record};
pub use standalone::review_plan_alone;

use super::{Context, Error};
use crate::model::NextAction;
use crate::model::report::review as report;

/// The round's settings: the run's own, then `git config`, then the flags; and the secret
/// scanner (`pair.secretsFile`).
pub fn settings(
    ctx: &Context,
    request: &Request,
    manifest: &crate::model::Manifest,
) -> Result<Settings, Error> {
    settings_from(&ctx.options, ctx.scanner()?, request, manifest)
}

/// Runs the review round of the active run: prepare, record the dispatch, run the reviewers,
/// record the outcome, refresh the HANDOFF view.
pub fn review(
    ctx: &Context,
    request: &Request,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<report::Review, Error> {
    let run_id = super::common::select::active(ctx, None)?;
    let stored = ctx.load(&run_id)?.manifest;
    let settings = &settings(ctx, request, &stored)?;
    // The shipped pattern table compiles while the work tree is snapshotted and diffed.
    settings.scanner.warm_up();
    let plan = prepare(&ctx.repo, &run_id, settings)?;
    if request.dry_run {
        let argv = plan.planned_argv(settings);
        return Ok(report::Review::DryRun(Box::new(dry_run_report(
            &plan, argv,
        ))));
    }
    let settings = &Settings {
        over_budget: plan::enforce_budget(ctx, &stored, &plan, request)?,
        ..settings.clone()
    };
    for member in &plan.members {
        if member.bound.fallback_used {
            progress(&format!(
                "note: {} is not available here; using {} instead (fallback, recorded)",
                member.report.configured,
                member.bound.label()
            ));
        }
    }
    for carried in &plan.carried {
        progress(&format!(
            "{} already finished in the interrupted review; keeping its result",
            carried.result.name
        ));
    }
    if plan.members.len() > 1 {
        progress(&format!(
            "running {} reviewers, at most {} at once (bound by {})",
            plan.members.len(),
            plan.parallelism.limit,
            plan.parallelism.bound_by
        ));
    }
    if let Some(interrupted) = &plan.resumes {
        live::Live::stop_interrupted(&ctx.repo, plan.run_id.as_str(), interrupted, progress);
    }
    let dispatch_id = dispatch(&ctx.repo, &plan, settings).map_err(Error::dispatch)?;
    let live = live::Live::new(&ctx.repo, plan.run_id.as_str(), &dispatch_id);
    // In a panel, each member's part is stored the moment it finishes, so an interrupted
    // review resumed later does not run it again. A part that cannot be stored only means
    // that member would run again: the review goes on.
    let panel = plan.members.len() + plan.carried.len() > 1;
    let mut store_member = |slot: usize, result: &MemberResult| {
        if panel
            && let Err(e) = member(
                &ctx.repo,
                &plan,
                &dispatch_id,
                slot,
                result,
                &settings.scanner,
            )
        {
            progress(&format!(
                "note: could not store {}'s finished review ({e}); an interrupted review would run it again",
                result.name
            ));
        }
    };
    // A reviewer that runs in the snapshot sees the reviewed tree alone, laid down afresh
    // (removed when the round ends), never the live work tree and its ignored files; one
    // whose sessions belong to their directory gets it at the run's own stable path.
    let runs_in = |workdir| {
        plan.members.iter().any(|m| {
            m.bound.realization.kind != crate::review::RealizationKind::Builtin
                && m.bound.realization.workdir == workdir
        })
    };
    let snapshot_dir = if runs_in(crate::review::surface::Workdir::Snapshot) {
        Some(crate::worktree::export::export(&ctx.repo, plan.snapshot)?)
    } else {
        None
    };
    let run_snapshot_dir = if runs_in(crate::review::surface::Workdir::RunSnapshot) {
        Some(crate::worktree::export::export_at(
            &ctx.repo,
            plan.snapshot,
            &reviewer_dir(&ctx.repo, &run_id),
        )?)
    } else {
        None
    };
    // What a member's CLI would load as its own configuration stays out of its directory.
    let omit_in = |dir: &std::path::Path, workdir| {
        let members = plan.members.iter().map(|m| &m.bound.realization);
        let omitted = members
            .filter(|r| r.workdir == workdir)
            .flat_map(|r| r.snapshot_omit.iter().map(String::as_str));
        crate::worktree::export::omit(dir, omitted);
    };
    if let Some(dir) = &snapshot_dir {
        omit_in(dir.path(), crate::review::surface::Workdir::Snapshot);
    }
    if let Some(dir) = &run_snapshot_dir {
        omit_in(dir.path(), crate::review::surface::Workdir::RunSnapshot);
    }
    let dirs = SnapshotDirs {
        snapshot: snapshot_dir.as_ref().map(|d| d.path()),
        run_snapshot: run_snapshot_dir.as_ref().map(|d| d.path()),
    };
    let results = execute(
        &plan,
        settings,
        &dirs,
        Some(live.recorder()),
        progress,
        &mut store_member,
    );
    let sources = ctx.spend_sources().ok();
    let outcome = record(
        &ctx.repo,
        &plan,
        &dispatch_id,
        results,
        settings,
        sources.as_ref(),
    )?;
    live.clear();
    ctx.refresh_handoff(&run_id)?;
    let next = super::status::next_action(ctx, &ctx.load_effective(&run_id)?.manifest);
    let mut round = round_report(outcome, plan, next);
    round.model = settings.model.clone();
    round.effort = settings.effort.clone();
    Ok(report::Review::Round(Box::new(round)))
}

/// Where the reviewed snapshot lies, at a path stable for the run, for a reviewer whose
/// sessions belong to the directory they ran in (`workdir: run-snapshot`): local, never
/// shared, removed when the round ends and again when the run ends or is dropped.
/// It is outside the repository (`${XDG_CACHE_HOME:-~/.cache}/git-pair/reviewers/<repo>/<run>`,
/// `<repo>` a hash of its git directory): CLIs look for their configuration and `.env` files
/// in every directory above their own, and above `$GIT_DIR` lies the live work tree.
pub fn reviewer_dir(repo: &crate::store::Repo, run_id: &crate::model::RunId) -> std::path::PathBuf {
    let absolute =
        |v: std::ffi::OsString| Some(std::path::PathBuf::from(v)).filter(|p| p.is_absolute());
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".cache"))
        });
    match cache {
        Some(cache) => {
            let git_dir = repo.pair_dir();
            let key = sha1_smol::Sha1::from(git_dir.as_os_str().as_encoded_bytes())
                .digest()
                .to_string();
            cache
                .join("git-pair/reviewers")
                .join(&key[..16])
                .join(run_id.as_str())
        }
        None => repo.pair_dir().join("reviewers").join(run_id.as_str()),
    }
}

/// Removes what an interrupted round left in the run's reviewer directory.
pub fn forget_reviewer_dir(repo: &crate::store::Repo, run_id: &crate::model::RunId) {
    crate::worktree::export::remove(&reviewer_dir(repo, run_id));
}

/// The recorded round's report.
fn round_report(outcome: RoundOutcome, plan: Plan, next: NextAction) -> report::Round {
    let partial_coverage = outcome
        .coverage
        .summary
        .clone()
        .filter(|_| outcome.coverage.is_partial());
    let auth_failed = outcome
        .members
        .iter()
        .filter(|m| {
            m.verdict.is_none()
                && m.attempts.last().and_then(|a| a.failure)
                    == Some(crate::review::surface::FailureKind::Auth)
        })
        .map(|m| m.name.clone())
        .collect();
    report::Round {
        run_id: plan.run_id,
        round: outcome.round,
        verdict: outcome.verdict,
        findings: outcome.findings,
        outcome: outcome.outcome,
        outcomes: outcome
            .members
            .iter()
            .map(|m| report::ReviewerOutcome {
                reviewer: m.name.clone(),
                outcome: m.outcome.as_str(),
                attempts: m.attempts.len(),
                session_id: m.session_id.clone(),
            })
            .collect(),
        fallback_used: outcome.fallback_used,
        parallelism: report::Parallelism {
            limit: plan.parallelism.limit,
            bound_by: plan.parallelism.bound_by.clone(),
        },
        coverage: coverage_summary(&plan.coverage),
        model: None,
        effort: None,
        next_action: next.as_str(),
        next,
        error: outcome.error,
        partial_coverage,
        fallbacks: plan
            .members
            .iter()
            .filter(|m| m.bound.fallback_used)
            .map(|m| report::Fallback {
                configured: m.report.configured.clone(),
                bound: m.bound.label(),
            })
            .collect(),
        secrets: plan.secrets,
        auth_failed,
    }
}

/// The dry run's report: what would be sent (the first attempt's prompt), to whom.
fn dry_run_report(plan: &Plan, argv: Vec<(String, Vec<String>)>) -> report::DryRun {
    report::DryRun {
        dry_run: true,
        run_id: plan.run_id.clone(),
        round: plan.round,
        mode: plan.mode.as_str(),
        reviewers: argv
            .into_iter()
            .map(|(reviewer, argv)| report::PlannedReviewer { reviewer, argv })
            .collect(),
        unbound: plan
            .unbound
            .iter()
            .map(|r| report::Unbound {
                configured: r.configured.clone(),
                probed: r
                    .probed
                    .iter()
                    .map(|c| report::Probed {
                        name: c.name.clone(),
                        reason: c.reason.clone(),
                    })
                    .collect(),
            })
            .collect(),
        coverage: coverage_summary(&plan.coverage),
        secrets: plan.secrets.clone(),
        prompt: plan.prompt(plan.attempt_base + 1, 0),
        members: plan.members.iter().map(|m| m.bound.label()).collect(),
    }
}

/// The compact coverage summary a review reports (the full manifest is stored).
fn coverage_summary(c: &crate::packet::Coverage) -> report::CoverageSummary {
    report::CoverageSummary {
        files_total: c.files_total,
        full: c.full.count,
        clipped: c.clipped.count,
        names_only: c.names_only.count,
        not_included: c.not_included.count,
        bytes_included: c.bytes_included,
        summary: c.summary.clone(),
        passes: c.passes,
        unreviewed: c.unreviewed.paths.iter().take(10).cloned().collect(),
    }
}
