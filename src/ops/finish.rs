//! Finishing a run (SPEC §4 `finish`): the finish record (an approval, or a recorded
//! `--force` override), the PR body, the PR number (never a second PR), the
//! `refs/notes/pair` line on the commit that holds the reviewed work, and with `--push` the
//! records published through [`super::sync::push`].

use super::common::note::NoteState;
use super::{Context, Error};
pub use crate::model::report::finish::Note;
use crate::model::{self, Body, Finish, RunId, Verdict};
use crate::store::Append;

/// What `finish` was asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `None`: APPROVED.
    pub verdict: Option<Verdict>,
    pub pr: Option<u64>,
    pub force: bool,
    /// `--accept-partial`: close on an approval some of whose change reached no reviewer.
    pub accept_partial: bool,
    pub open_pr: bool,
    /// `--push[=REMOTE]`: publish the records (as `git pair push REMOTE`) once finished.
    pub push: Option<String>,
}

/// The finished run: `finish`'s report.
pub use crate::model::report::finish::Finished as Report;

/// Finishes the active run (or, on a finished run, only records `--pr`).
pub fn finish(ctx: &Context, request: &Request, progress: &dyn Fn(&str)) -> Result<Report, Error> {
    // A finished run is no longer "active": --pr still reaches it (the newest run here).
    let run_id = super::common::select::latest(ctx, None)?;
    let state = ctx.load(&run_id)?;
    let verdict = request.verdict.unwrap_or(Verdict::Approved);
    // `pair.prFinalRound`: the PR of an approved run gets its final review before the run
    // is finished; this records (or opens) the PR and leaves the run open for that.
    let pr_round = !state.manifest.is_finished()
        && state.manifest.pr_round.is_none()
        && (request.open_pr || request.pr.is_some())
        && verdict == Verdict::Approved
        && !request.force
        && crate::model::settings::flag(
            Some(&state.manifest),
            &ctx.options,
            crate::model::Setting::PrFinalRound,
        );
    if pr_round {
        return open_for_final_round(ctx, &run_id, request, progress);
    }
    let mut finished_now = false;
    if state.manifest.is_finished() {
        if request.force || request.verdict.is_some() || request.accept_partial {
            return Err(Error::FinishedOnlyPr {
                run_id: run_id.to_string(),
            });
        }
    } else {
        ctx.repo.append(&run_id, |s| {
            model::check_finish(&s.manifest, verdict, request.force, request.accept_partial)?;
            let accept_partial = verdict == Verdict::Approved
                && request.accept_partial
                && s.manifest.last_approval_is_partial();
            let override_ = verdict == Verdict::Approved
                && s.manifest.last_verdict() != Some(Verdict::Approved);
            let pr_final = verdict == Verdict::Approved
                && !request.force
                && s.manifest.pr_reviewed().is_some();
            let mut append = Append::record(
                Body::Finish(Finish {
                    verdict,
                    override_,
                    pr: request.pr,
                    accept_partial,
                    pr_final,
                }),
                format!(
                    "finish: {}{}{}",
                    verdict.as_str(),
                    if override_ {
                        " (override: --force)"
                    } else {
                        ""
                    },
                    if accept_partial {
                        " (partial coverage accepted: --accept-partial)"
                    } else {
                        ""
                    }
                ),
            );
            append.verdict = Some(verdict.as_str().to_owned());
            append.round = s.manifest.current_coder_round();
            Ok(append)
        })?;
        finished_now = true;
    }
    // No later round resumes a reviewer session now: what an interrupted round left goes.
    super::review::forget_reviewer_dir(&ctx.repo, &run_id);
    if let Some(number) = request.pr {
        super::common::pr::record_number(ctx, &run_id, number)?;
    }
    let path = super::common::pr::write_body(ctx, &run_id)?;
    let mut pr = ctx.load(&run_id)?.manifest.pr;
    let mut pr_already = None;
    if request.open_pr {
        match pr {
            Some(n) => pr_already = Some(n),
            None => {
                if let Some(n) = super::common::pr::open(ctx, &run_id, &path, progress)? {
                    super::common::pr::record_number(ctx, &run_id, n)?;
                    pr = Some(n);
                }
            }
        }
    }
    let note = super::common::note::attach_to_head(ctx, &run_id)?;
    ctx.refresh_handoff(&run_id)?;
    let m = ctx.load(&run_id)?.manifest;
    let (note_commit, note) = match note {
        NoteState::Attached(c) => (Some(c.to_string()), Note::Attached),
        NoteState::AlreadyAttached(c) => (Some(c.to_string()), Note::AlreadyAttached),
        NoteState::NotYet | NoteState::NothingReviewed => (None, Note::NotYet),
    };
    let mut report = Report {
        run_id,
        pr_body_path: path.display().to_string(),
        verdict: m.outcome.verdict.map(Verdict::as_str),
        pr,
        override_: m.outcome.override_,
        note_commit,
        finished_now,
        pr_already,
        note,
        push: None,
        pr_round: None,
    };
    // The run stays finished whatever the push does: a refused or failed push hands the
    // finish report back with the error, and `git pair push` is the way on.
    if let Some(remote) = &request.push {
        match super::sync::push(ctx, remote, &super::sync::PushRequest::default(), progress) {
            Ok(pushed) => report.push = Some(pushed),
            Err(source) => {
                return Err(Error::FinishPush {
                    finished: Box::new(report),
                    remote: remote.clone(),
                    source: Box::new(source),
                });
            }
        }
    }
    Ok(report)
}

/// `finish --open-pr` / `--pr N` under `pair.prFinalRound`: the approved run's PR is
/// recorded (opened first with `--open-pr`) for its final review, and the run stays open
/// until `finish` after that round.
fn open_for_final_round(
    ctx: &Context,
    run_id: &RunId,
    request: &Request,
    progress: &dyn Fn(&str),
) -> Result<Report, Error> {
    let m = ctx.load(run_id)?.manifest;
    model::check_finish(&m, Verdict::Approved, false, request.accept_partial)?;
    if let Some(number) = request.pr {
        super::common::pr::record_pr(ctx, run_id, number, true)?;
    }
    let path = super::common::pr::write_body(ctx, run_id)?;
    let mut pr = ctx.load(run_id)?.manifest.pr;
    if request.open_pr
        && pr.is_none()
        && let Some(n) = super::common::pr::open(ctx, run_id, &path, progress)?
    {
        super::common::pr::record_pr(ctx, run_id, n, true)?;
        pr = Some(n);
    }
    ctx.refresh_handoff(run_id)?;
    Ok(Report {
        run_id: run_id.clone(),
        pr_body_path: path.display().to_string(),
        verdict: None,
        pr,
        override_: false,
        note_commit: None,
        finished_now: false,
        pr_already: None,
        note: Note::NotYet,
        push: None,
        pr_round: pr.map(|_| "due"),
    })
}

/// Closes the active run with the outcome `abandoned` (`git pair abandon`).
pub fn abandon(
    ctx: &Context,
    reason: Option<String>,
) -> Result<crate::model::report::abandon::Abandoned, Error> {
    let run_id = super::common::select::active(ctx, None)?;
    abandon_run(ctx, &run_id, reason)?;
    ctx.refresh_handoff(&run_id)?;
    Ok(crate::model::report::abandon::Abandoned::new(run_id))
}

/// Records that `run_id` is abandoned; refused when it is already closed.
pub fn abandon_run(ctx: &Context, run_id: &RunId, reason: Option<String>) -> Result<(), Error> {
    let reason = match reason {
        Some(reason) => Some(ctx.scanner()?.redact("reason", &reason).0),
        None => None,
    };
    ctx.repo.append(run_id, |s| {
        if s.manifest.is_finished() {
            return Err(crate::model::Refusal::AlreadyFinished {
                run_id: run_id.to_string(),
            });
        }
        Ok(Append::record(
            Body::Abandon(crate::model::Abandon {
                reason: reason.clone(),
            }),
            "abandon",
        ))
    })?;
    super::review::forget_reviewer_dir(&ctx.repo, run_id);
    Ok(())
}
