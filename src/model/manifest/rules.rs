//! What may be recorded next: the loop's rules that refuse a `coder-done`, a `review` or a
//! `finish` the projection does not allow, and the [`Refusal`] that names why.

use super::Manifest;
use crate::model::record::Verdict;

/// A rule of the loop refused what was asked; nothing is recorded. The message names what
/// was refused; the command layer adds the way on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("run {run_id} is finished")]
    Finished { run_id: String },
    #[error("run {run_id} was finished meanwhile")]
    FinishedMeanwhile { run_id: String },
    #[error("run {run_id} is already finished")]
    AlreadyFinished { run_id: String },
    #[error(
        "round cap reached: run {run_id} allows {max_rounds} rounds, and round {max_rounds} has been reviewed"
    )]
    RoundCap { run_id: String, max_rounds: u32 },
    #[error("nothing to review yet in run {run_id}")]
    NothingToReview { run_id: String },
    #[error("round {round} of run {run_id} was already reviewed")]
    AlreadyReviewed { run_id: String, round: u32 },
    #[error("run {run_id} has no approving last review (last verdict: {last})")]
    NotApproved { run_id: String, last: String },
    #[error(
        "the approval of run {run_id} is partial: some files of the change reached no reviewer (binary content, or over pair.maxFileBytes)"
    )]
    PartialApproval { run_id: String },
    #[error("run {run_id} already has PR #{number}; a run never gets a second PR")]
    SecondPr { run_id: String, number: u64 },
    #[error("nothing to review in run {run_id}: the work tree equals the base ({base})")]
    EmptyChange { run_id: String, base: String },
    #[error("--responses names finding {finding}, but the last review's open findings are {open}")]
    UnknownFinding { finding: u32, open: String },
    #[error(
        "--findings-addressed {claimed} is more than the {open} open finding(s) of the last review"
    )]
    TooManyAddressed { claimed: u32, open: u32 },
    #[error("branch '{branch}' already has an unfinished run, {run_id}")]
    UnfinishedRun { run_id: String, branch: String },
    #[error("pair.prFinalRound is off: the PR's final review is not enabled")]
    PrFinalRoundOff,
    #[error("run {run_id} has no PR yet")]
    NoPr { run_id: String },
    #[error("run {run_id}'s PR is #{recorded}, not #{asked}")]
    OtherPr {
        run_id: String,
        recorded: u64,
        asked: u64,
    },
    #[error(
        "run {run_id}'s PR #{number} was recorded without a final round (pair.prFinalRound was off then)"
    )]
    PrWithoutFinalRound { run_id: String, number: u64 },
    #[error(
        "run {run_id}'s PR #{number} had its final review, and the one more coder round it gives has begun"
    )]
    PrRoundUsed { run_id: String, number: u64 },
    #[error("run {run_id}'s PR #{number} is not reviewed in its final round yet")]
    PrReviewDue { run_id: String, number: u64 },
    #[error(
        "the final review of run {run_id}'s PR #{number} has {findings} finding(s) no reviewed coder round addressed yet"
    )]
    PrFindingsOpen {
        run_id: String,
        number: u64,
        findings: usize,
    },
    #[error("a review of run {run_id} is running right now (git pair review, pid {pid} on {host})")]
    ReviewRunning {
        run_id: String,
        host: String,
        pid: u32,
    },
}

/// Refuses a `coder-done` the loop's rules do not allow.
pub fn check_coder_done(manifest: &Manifest, extra_round: bool) -> Result<(), Refusal> {
    if manifest.is_finished() {
        return Err(Refusal::Finished {
            run_id: manifest.run_id.clone(),
        });
    }
    let (round, opens) = manifest.coder_round_for_next();
    // The PR's final review gives exactly one more coder round, whatever the cap.
    let pr_round = manifest
        .pr_reviewed()
        .is_some_and(|r| r.findings > 0 && round == r.round + 1);
    if opens && round > manifest.max_rounds && !extra_round && !pr_round {
        return Err(Refusal::RoundCap {
            run_id: manifest.run_id.clone(),
            max_rounds: manifest.max_rounds,
        });
    }
    Ok(())
}

/// Refuses a `review` the loop's rules do not allow.
pub fn check_review(manifest: &Manifest, again: bool) -> Result<(), Refusal> {
    if manifest.is_finished() {
        return Err(Refusal::Finished {
            run_id: manifest.run_id.clone(),
        });
    }
    let Some(round) = manifest.current_coder_round() else {
        return Err(Refusal::NothingToReview {
            run_id: manifest.run_id.clone(),
        });
    };
    if manifest.is_reviewed(round) && !again && !manifest.last_review_failed_to_answer() {
        return Err(Refusal::AlreadyReviewed {
            run_id: manifest.run_id.clone(),
            round,
        });
    }
    Ok(())
}

/// Refuses a `finish` the loop's rules do not allow.
pub fn check_finish(
    manifest: &Manifest,
    verdict: Verdict,
    force: bool,
    accept_partial: bool,
) -> Result<(), Refusal> {
    if manifest.is_finished() {
        return Err(Refusal::AlreadyFinished {
            run_id: manifest.run_id.clone(),
        });
    }
    if verdict == Verdict::Approved && manifest.last_verdict() != Some(Verdict::Approved) && !force
    {
        return Err(Refusal::NotApproved {
            run_id: manifest.run_id.clone(),
            last: manifest
                .last_verdict()
                .map_or("none", Verdict::as_str)
                .to_owned(),
        });
    }
    // The PR's final round comes before the PR is recorded final; `--force` skips it.
    if let Some(pr) = manifest.pr_round.as_ref().filter(|_| !force) {
        let run_id = manifest.run_id.clone();
        match pr.reviewed {
            None => {
                return Err(Refusal::PrReviewDue {
                    run_id,
                    number: pr.number,
                });
            }
            // Its findings need the one more coder round, reviewed.
            Some(r)
                if r.findings > 0
                    && (!manifest.in_pr_round()
                        || manifest
                            .current_coder_round()
                            .is_some_and(|n| !manifest.is_reviewed(n))) =>
            {
                return Err(Refusal::PrFindingsOpen {
                    run_id,
                    number: pr.number,
                    findings: r.findings,
                });
            }
            Some(_) => {}
        }
    }
    // A partial approval closes a run only when the user says so (SPEC §6.2); `--force`
    // overrides a missing approval, not a partial one.
    if verdict == Verdict::Approved && manifest.last_approval_is_partial() && !accept_partial {
        return Err(Refusal::PartialApproval {
            run_id: manifest.run_id.clone(),
        });
    }
    Ok(())
}

/// Refuses a `review --pr N` the loop's rules do not allow: the run must hold PR `number`
/// for its final round, approved, with the one more coder round not begun.
pub fn check_pr_review(manifest: &Manifest, number: u64) -> Result<(), Refusal> {
    let run_id = manifest.run_id.clone();
    if manifest.is_finished() {
        return Err(Refusal::Finished { run_id });
    }
    let Some(recorded) = manifest.pr else {
        return Err(Refusal::NoPr { run_id });
    };
    if recorded != number {
        return Err(Refusal::OtherPr {
            run_id,
            recorded,
            asked: number,
        });
    }
    if manifest.pr_round.is_none() {
        return Err(Refusal::PrWithoutFinalRound { run_id, number });
    }
    if manifest.in_pr_round() {
        return Err(Refusal::PrRoundUsed { run_id, number });
    }
    let reviewed = manifest
        .current_coder_round()
        .is_some_and(|n| manifest.is_reviewed(n));
    if !reviewed || manifest.last_verdict() != Some(Verdict::Approved) {
        return Err(Refusal::NotApproved {
            run_id,
            last: manifest
                .last_verdict()
                .map_or("none", Verdict::as_str)
                .to_owned(),
        });
    }
    Ok(())
}
