//! The loop's one decision (SPEC §5): what to do next, from the projection plus what only a
//! running command can observe ([`Observed`]).

use super::{Manifest, NextAction, Role};
use crate::model::record::Verdict;

/// What the projection cannot know by itself, observed when a command runs: the spend as
/// measured now, and whether the process of a pending review is still alive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observed {
    /// The budget is spent (live measurement, or the stored one).
    pub budget_alert: bool,
    /// The pending review's process is alive right now.
    pub review_running: bool,
}

impl Manifest {
    /// Whether the last two completed reviews asked for changes on the same open findings.
    pub fn is_stalled(&self) -> bool {
        let mut reviews = self
            .rounds
            .iter()
            .rev()
            .filter(|e| e.role == Role::Reviewer && e.verdict.is_some());
        match (reviews.next(), reviews.next()) {
            (Some(last), Some(before)) => {
                last.n != before.n
                    && last.open_findings_digest.is_some()
                    && last.open_findings_digest == before.open_findings_digest
            }
            _ => false,
        }
    }

    /// What to do next (SPEC §5): the one function every command takes its next step from.
    /// When several hold, the first of `done`, `wait:review`, `resume:review`, `stop:budget`,
    /// `stop:round-cap`, `stop:stalled` wins (`stop:partial` in place of `finish`), then the plain
    /// values (`review:pr` in place of `finish` while the run's PR awaits its final review).
    pub fn next_action(&self, observed: Observed) -> NextAction {
        // A run that only carries a checkpoint has no loop to continue.
        if self.is_finished() || self.carrier {
            return NextAction::Done;
        }
        if self.pending_review.is_some() {
            return if observed.review_running {
                NextAction::WaitReview
            } else {
                NextAction::ResumeReview
            };
        }
        // The PR's final review running: nothing else starts beside it. One whose process
        // died leaves the review due (`review:pr` dispatches it again).
        if self.pr_round.as_ref().is_some_and(|p| p.pending.is_some()) && observed.review_running {
            return NextAction::WaitReview;
        }
        if observed.budget_alert || self.stored_budget_alert() {
            return NextAction::StopBudget;
        }
        let Some(round) = self.current_coder_round() else {
            return NextAction::Code;
        };
        if !self.is_reviewed(round) {
            return NextAction::Review;
        }
        let pr_reviewed = self.pr_reviewed();
        match self.last_verdict() {
            // Some of the change reached no reviewer: not an approval to finish on unasked.
            Some(Verdict::Approved) if self.last_approval_is_partial() => NextAction::StopPartial,
            // The PR exists: its final review comes before finishing, then one more coder
            // round when it found something.
            Some(Verdict::Approved) if self.pr_round.is_some() && pr_reviewed.is_none() => {
                NextAction::ReviewPr
            }
            Some(Verdict::Approved)
                if pr_reviewed.is_some_and(|r| r.round == round && r.findings > 0) =>
            {
                NextAction::Code
            }
            Some(Verdict::Approved) => NextAction::Finish,
            // The reviewer's answer could not be read: review again, not "fix the findings".
            _ if self.last_review_failed_to_answer() => NextAction::Review,
            // The one more round the PR's review gave is used up.
            _ if self.in_pr_round() => NextAction::StopRoundCap,
            _ if round >= self.max_rounds => NextAction::StopRoundCap,
            _ if self.is_stalled() => NextAction::StopStalled,
            _ => NextAction::Code,
        }
    }
}
