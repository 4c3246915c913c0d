//! The `refs/notes/pair` line a run writes on the commit that holds its reviewed work, shared by
//! `finish` and the `post-commit` hook: one rule for which snapshot a run vouches for and what
//! its line says, and one line per run on a commit however often, and in whichever order, the
//! two write it (a run's line is replaced, never added beside an older one).
//!
//! The rule: an unfinished run vouches for the snapshot its reviewer last APPROVED (the line
//! says `verdict=APPROVED rounds=<that round>`); a finished run for the snapshot of its last
//! review with a verdict, with the finish's verdict, round count and override. So "commit,
//! then finish" (the hook writes the approval, `finish` replaces it with the final line) and
//! "finish, then commit" (the hook writes the final line) both end with the final line.

use gix::ObjectId;

use crate::model::{Body, Review, RunId, Verdict};
use crate::ops::{Context, Error};
use crate::store::RunState;
use crate::store::notes::{NoteLine, NoteWrite};

/// Where the review note stands after an attempt to attach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoteState {
    /// The run's line was written on this commit now (added, or replacing an older line of
    /// the run).
    Attached(ObjectId),
    /// The note of this commit already held exactly this line.
    AlreadyAttached(ObjectId),
    /// HEAD does not hold the vouched-for snapshot (commit it, then finish again).
    NotYet,
    /// The run vouches for no snapshot (nothing approved, or nothing reviewed when finished).
    NothingReviewed,
}

/// The newest review of `state` whose verdict `wanted` accepts.
pub fn newest_review(
    ctx: &Context,
    state: &RunState,
    wanted: impl Fn(Verdict) -> bool,
) -> Result<Option<Review>, Error> {
    let record = ctx.repo.newest_record(state, "review", |record| {
        matches!(&record.body, Body::Review(review) if review.verdict.is_some_and(&wanted))
    })?;
    Ok(record.and_then(|record| match record.body {
        Body::Review(review) => Some(review),
        _ => None,
    }))
}

/// The tree a review looked at: its `snapshot` field, else the snapshot stored for its round.
pub fn reviewed_tree(
    ctx: &Context,
    state: &RunState,
    review: &Review,
) -> Result<Option<ObjectId>, Error> {
    if let Some(id) = review.snapshot {
        return Ok(Some(id.into()));
    }
    Ok(ctx.repo.round_snapshot(state, review.round)?)
}

/// The snapshot run `state` vouches for and the note line that says so, by the rule above.
pub fn vouched_line(ctx: &Context, state: &RunState) -> Result<Option<NoteLine>, Error> {
    let m = &state.manifest;
    let (review, verdict, rounds, override_) = match m.outcome.verdict {
        Some(verdict) => {
            let Some(review) = newest_review(ctx, state, |_| true)? else {
                return Ok(None);
            };
            // An accepted partial approval is an override, as `--force` is.
            let override_ = m.outcome.override_ || m.outcome.accepted_partial;
            (review, verdict, m.outcome.rounds, override_)
        }
        None => {
            // Unfinished: the newest review with a verdict, when it approved (a later one that
            // requested changes revoked any earlier approval).
            let Some(review) = newest_review(ctx, state, |_| true)? else {
                return Ok(None);
            };
            if review.verdict != Some(Verdict::Approved) || review.is_partial() {
                return Ok(None);
            }
            let round = review.round;
            (review, Verdict::Approved, round, false)
        }
    };
    let Some(tree) = reviewed_tree(ctx, state, &review)? else {
        return Ok(None);
    };
    // The spend the run stored, its unpriced tokens priced where today's table can; model
    // ids are logged text, kept to what a logfmt value can hold.
    let pricing = ctx.spend_sources().ok().map(|s| s.pricing);
    let (spent, mut cost_unpriced) = crate::cost::spend::stored(m, pricing.as_ref());
    cost_unpriced.retain(|model| {
        !model.is_empty()
            && model
                .chars()
                .all(|c| c.is_ascii_graphic() && c != ',' && c != '=')
    });
    let cost_usd =
        (spent > 0.0 || !cost_unpriced.is_empty()).then(|| crate::util::round_usd(spent));
    Ok(Some(NoteLine {
        run_id: state.run_id.to_string(),
        verdict: verdict.as_str().to_owned(),
        rounds,
        reviewer: review.tool.clone(),
        cost_usd,
        cost_unpriced,
        tree,
        override_,
    }))
}

/// Writes run `run_id`'s line on HEAD when HEAD's tree is the snapshot the run vouches for,
/// replacing an older line of the same run. Idempotent.
pub fn attach_to_head(ctx: &Context, run_id: &RunId) -> Result<NoteState, Error> {
    let state = ctx.load(run_id)?;
    let Some(line) = vouched_line(ctx, &state)? else {
        return Ok(NoteState::NothingReviewed);
    };
    let Some(head) = ctx.repo.head()?.commit() else {
        return Ok(NoteState::NotYet);
    };
    if ctx.repo.commit_tree(head)? != line.tree {
        return Ok(NoteState::NotYet);
    }
    Ok(
        match crate::store::notes::set_run_line(&ctx.repo, head, &line)? {
            NoteWrite::Unchanged => NoteState::AlreadyAttached(head),
            NoteWrite::Added | NoteWrite::Replaced => NoteState::Attached(head),
        },
    )
}
