//! Which work-tree snapshots a run approved, computed from its `review` and `finish` records
//! alone (pure): the facts the CI check (`git pair verify`) checks commits against.

use super::ids::TreeId;
use serde::{Deserialize, Serialize};

use super::record::{Body, Record, Verdict};

/// A snapshot tree a run stands behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The reviewed snapshot's tree id, as the review record stores it.
    pub snapshot: TreeId,
    /// The review round that gave the verdict.
    pub round: u32,
    /// The reviewer (realization, or panel `a+b`) that gave it.
    pub reviewer: String,
    /// True when no review approved this snapshot and the run was finished with `--force`
    /// on it: an override, not an approval.
    pub forced: bool,
    /// The review's dispatch record id (its `dispatch`).
    pub dispatch: String,
    /// Whether the review itself said APPROVED (false for a `--force` finish on a review that
    /// did not): only then must its stored answers read as an approval.
    pub review_approved: bool,
    /// The number of a blocking finding the review carries, if any (a consistent approval
    /// carries none).
    pub blocking_finding: Option<u32>,
    /// The reviewers whose own answer was APPROVED, as the review names them (`tool`).
    pub approvers: Vec<String>,
}

/// What [`ApprovalFold`] keeps of one review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reviewed {
    snapshot: TreeId,
    verdict: Verdict,
    round: u32,
    reviewer: String,
    partial: bool,
    dispatch: String,
    blocking_finding: Option<u32>,
    approvers: Vec<String>,
}

impl Reviewed {
    fn approval(self, forced: bool) -> Approval {
        Approval {
            snapshot: self.snapshot,
            round: self.round,
            reviewer: self.reviewer,
            forced,
            dispatch: self.dispatch,
            review_approved: self.verdict == Verdict::Approved,
            blocking_finding: self.blocking_finding,
            approvers: self.approvers,
        }
    }
}

/// The fold of a run's `review` and `finish` records into what it approves, one record at a
/// time ([`ApprovalFold::step`]), so a writer carries it from commit to commit instead of
/// reading every record again (a run commit's `Pair-Approvals:` trailer).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredFold", into = "StoredFold")]
pub struct ApprovalFold {
    /// The approving reviews that stand, in record order (only an APPROVED review can
    /// become an approval; what a later review revokes is gone).
    approved: Vec<Reviewed>,
    /// The last review with a verdict (a `--force` finish stands behind it).
    last: Option<Reviewed>,
    forced: bool,
    accepted_partial: bool,
    /// Every snapshot a review gave a verdict on, in record order, without repeats.
    reviewed: Vec<TreeId>,
}

/// An [`ApprovalFold`] as a trailer stores it: the last review left out when it is the last
/// approval (most runs end on one), so a run's tip carries each review once.
#[derive(Serialize, Deserialize)]
struct StoredFold {
    approved: Vec<Reviewed>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last: Option<Reviewed>,
    forced: bool,
    accepted_partial: bool,
    reviewed: Vec<TreeId>,
}

impl From<ApprovalFold> for StoredFold {
    fn from(fold: ApprovalFold) -> StoredFold {
        let last = fold.last.filter(|last| fold.approved.last() != Some(last));
        StoredFold {
            approved: fold.approved,
            last,
            forced: fold.forced,
            accepted_partial: fold.accepted_partial,
            reviewed: fold.reviewed,
        }
    }
}

impl From<StoredFold> for ApprovalFold {
    fn from(stored: StoredFold) -> ApprovalFold {
        // An approving review is the last review until another one comes.
        let last = stored.last.or_else(|| stored.approved.last().cloned());
        ApprovalFold {
            approved: stored.approved,
            last,
            forced: stored.forced,
            accepted_partial: stored.accepted_partial,
            reviewed: stored.reviewed,
        }
    }
}

impl ApprovalFold {
    /// Folds one more record in.
    pub fn step(&mut self, record: &Record) {
        match &record.body {
            Body::Review(review) => {
                let Some(verdict) = review.verdict else {
                    return;
                };
                let Some(snapshot) = review.snapshot else {
                    return;
                };
                self.approved.retain(|r| r.snapshot != snapshot);
                if verdict == Verdict::ChangesRequested {
                    // Changes requested on the run's work revoke every approval before it.
                    self.approved.clear();
                }
                if !self.reviewed.contains(&snapshot) {
                    self.reviewed.push(snapshot);
                }
                let entry = Reviewed {
                    snapshot,
                    verdict,
                    round: review.round,
                    reviewer: review.tool.clone(),
                    partial: review.is_partial(),
                    dispatch: review.dispatch.clone(),
                    blocking_finding: review
                        .findings
                        .iter()
                        .find(|f| f.blocks_approval())
                        .map(|f| f.n),
                    approvers: review
                        .reviewers
                        .iter()
                        .filter(|r| r.verdict == Some(Verdict::Approved))
                        .map(|r| r.tool.clone())
                        .collect(),
                };
                if verdict == Verdict::Approved {
                    self.approved.push(entry.clone());
                }
                self.last = Some(entry);
            }
            Body::Finish(finish) => {
                self.forced = finish.override_ && finish.verdict == Verdict::Approved;
                self.accepted_partial =
                    finish.accept_partial && finish.verdict == Verdict::Approved;
            }
            _ => {}
        }
    }

    /// The fold of `records`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a Record>) -> ApprovalFold {
        let mut fold = ApprovalFold::default();
        for record in records {
            fold.step(record);
        }
        fold
    }

    /// The snapshots the run approves so far (see [`approvals`]).
    pub fn approvals(&self) -> Vec<Approval> {
        let mut out: Vec<Approval> = self
            .approved
            .iter()
            // A partial approval is none, unless `finish --accept-partial` stood behind it:
            // then it is an override, as `--force` is.
            .filter(|r| !r.partial || self.accepted_partial)
            .map(|r| r.clone().approval(r.partial))
            .collect();
        if self.forced
            && let Some(last) = &self.last
            && !out.iter().any(|a| a.snapshot == last.snapshot)
        {
            out.push(last.clone().approval(true));
        }
        out
    }

    /// Every snapshot a review gave a verdict on (see [`reviewed_snapshots`]).
    pub fn reviewed(&self) -> &[TreeId] {
        &self.reviewed
    }

    /// How many snapshots and approvals it holds: what carrying it costs.
    pub fn size(&self) -> usize {
        self.reviewed.len() + self.approved.len()
    }
}

/// Every snapshot a review of the run gave a verdict on (whatever the verdict), in record
/// order, without repeats: the work a reviewer saw, so the "before" side of a later review.
pub fn reviewed_snapshots(records: &[Record]) -> Vec<TreeId> {
    ApprovalFold::of(records).reviewed
}

/// The snapshots a run approved, in record order, plus the one a `--force` finish stood
/// behind. An approval stands until a later review in the run requests changes: on the same
/// snapshot (`review --again`) or on later work, which contains it ("present since round 1").
/// A forced finish covers the last reviewed snapshot when no review approved it.
pub fn approvals(records: &[Record]) -> Vec<Approval> {
    ApprovalFold::of(records).approvals()
}

/// Whether a run's finish record can change what [`approvals`] returns, given its review
/// records: a `--force` override (or `--accept-partial`) only matters when the last review
/// with a verdict did not approve, or approved partially (a full approval stands either way). Lets a reader skip that record.
pub fn finish_matters(reviews: &[Record]) -> bool {
    let last = reviews.iter().rev().find_map(|r| match &r.body {
        Body::Review(review) if review.snapshot.is_some() && review.verdict.is_some() => {
            Some((review.verdict, review.is_partial()))
        }
        _ => None,
    });
    // A partial approval stands only with `finish --accept-partial`.
    !matches!(last, Some((Some(Verdict::Approved), false)))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::{Finish, Review};

    /// A tree id spelled with one hex digit (`"a"` → `aaaa…`), to keep the cases short.
    pub(in crate::model) fn tree(digit: &str) -> TreeId {
        TreeId::parse(&digit.repeat(40)).expect("one hex digit")
    }

    pub(in crate::model) fn review(round: u32, snapshot: &str, verdict: Option<Verdict>) -> Record {
        Record::new(
            u64::from(round) * 2,
            "t".into(),
            Body::Review(Review {
                model: None,
                effort: None,
                dispatch: "d".into(),
                round,
                verdict,
                outcome: "completed".into(),
                tool: "codex".into(),
                findings: vec![],
                reviewers: vec![],
                fallback_used: false,
                snapshot: Some(tree(snapshot)),
                coverage_warning: None,
                error: None,
            }),
        )
    }

    pub(in crate::model) fn finish(override_: bool) -> Record {
        Record::new(
            99,
            "t".into(),
            Body::Finish(Finish {
                pr_final: false,
                verdict: Verdict::Approved,
                override_,
                pr: None,
                accept_partial: false,
            }),
        )
    }

    #[test]
    fn the_finish_record_matters_only_after_an_unapproved_last_review() {
        use Verdict::{Approved, ChangesRequested};
        let cases = [
            (vec![], true),
            (vec![review(1, "a", Some(Approved))], false),
            (
                vec![review(1, "a", Some(Approved)), review(2, "b", None)],
                false,
            ),
            (
                vec![
                    review(1, "a", Some(Approved)),
                    review(2, "b", Some(ChangesRequested)),
                ],
                true,
            ),
        ];
        for (reviews, want) in cases {
            assert_eq!(finish_matters(&reviews), want, "{reviews:?}");
            // Skipping the finish changes nothing when it does not matter.
            if !want {
                let mut with = reviews.clone();
                with.push(finish(true));
                assert_eq!(approvals(&with), approvals(&reviews));
            }
        }
    }

    fn summary(records: &[Record]) -> Vec<(String, u32, bool)> {
        approvals(records)
            .into_iter()
            .map(|a| (a.snapshot.to_string()[..1].to_owned(), a.round, a.forced))
            .collect()
    }

    #[test]
    fn approved_snapshots_count_and_the_latest_verdict_per_snapshot_decides() {
        use Verdict::{Approved, ChangesRequested};
        type Case = (Vec<Record>, Vec<(&'static str, u32, bool)>);
        let cases: Vec<Case> = vec![
            (vec![], vec![]),
            (vec![review(1, "a", Some(ChangesRequested))], vec![]),
            (
                vec![
                    review(1, "a", Some(ChangesRequested)),
                    review(2, "b", Some(Approved)),
                    finish(false),
                ],
                vec![("b", 2, false)],
            ),
            // Two approvals of two snapshots: both stand.
            (
                vec![
                    review(1, "a", Some(Approved)),
                    review(2, "b", Some(Approved)),
                ],
                vec![("a", 1, false), ("b", 2, false)],
            ),
            // Approved, then the same snapshot re-reviewed with changes requested.
            (
                vec![
                    review(1, "a", Some(Approved)),
                    review(1, "a", Some(ChangesRequested)),
                ],
                vec![],
            ),
            // A failed review (no verdict) changes nothing.
            (
                vec![review(1, "a", Some(Approved)), review(2, "b", None)],
                vec![("a", 1, false)],
            ),
            // --force on changes requested: forced, on the last reviewed snapshot; the round-1
            // approval was revoked by round 2's changes requested.
            (
                vec![
                    review(1, "a", Some(Approved)),
                    review(2, "b", Some(ChangesRequested)),
                    finish(true),
                ],
                vec![("b", 2, true)],
            ),
            // A later round requesting changes revokes an earlier approval ("present since
            // round 1"); an approval after it stands.
            (
                vec![
                    review(1, "a", Some(Approved)),
                    review(2, "b", Some(ChangesRequested)),
                ],
                vec![],
            ),
            (
                vec![
                    review(1, "a", Some(Approved)),
                    review(2, "b", Some(ChangesRequested)),
                    review(3, "c", Some(Approved)),
                ],
                vec![("c", 3, false)],
            ),
            // --force with nothing reviewed covers nothing.
            (vec![finish(true)], vec![]),
        ];
        for (records, want) in cases {
            let want: Vec<(String, u32, bool)> = want
                .into_iter()
                .map(|(s, r, f)| (s.to_owned(), r, f))
                .collect();
            assert_eq!(summary(&records), want, "{records:?}");
        }
    }

    #[test]
    fn every_snapshot_given_a_verdict_is_a_reviewed_snapshot_and_approvals_name_their_review() {
        use Verdict::{Approved, ChangesRequested};
        let records = vec![
            review(1, "a", Some(ChangesRequested)),
            review(2, "b", None),
            review(2, "c", Some(Approved)),
            review(3, "a", Some(Approved)),
        ];
        let reviewed: Vec<String> = reviewed_snapshots(&records)
            .iter()
            .map(|t| t.to_string()[..1].to_owned())
            .collect();
        assert_eq!(
            reviewed,
            ["a", "c"],
            "a failed review saw nothing; no repeats"
        );
        let got = approvals(&records);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|a| a.dispatch == "d" && a.review_approved));
        assert!(got.iter().all(|a| a.blocking_finding.is_none()));
        // A --force finish on changes requested: an override, not an approving review.
        let forced = approvals(&[review(1, "a", Some(ChangesRequested)), finish(true)]);
        assert_eq!(forced.len(), 1);
        assert!(forced[0].forced && !forced[0].review_approved);
    }
}
