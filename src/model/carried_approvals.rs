//! What a run commit carries of its run's approvals (its `Pair-Approvals:` trailer): all the
//! team gate needs of a run, readable from the tip commit alone.

use serde::{Deserialize, Serialize};

use super::approval::{Approval, ApprovalFold};
use super::ids::{CommitId, TreeId};
use super::record::{Body, Record};

/// The trailer that carries, in every run commit this version writes, the fold of the run's
/// review and finish records as of that commit, the start record's facts, the spend and the
/// consistency of each approval as checked when it was written, so `verify` reads one object
/// per run: the tip commit. Trusted as the records are, only when checked under the rules
/// `verify` runs today ([`CarriedApprovals::rules`]); pull checks a fetched one against the
/// records (SPEC §9).
pub const APPROVALS_TRAILER: &str = "Pair-Approvals: ";

/// How many snapshots and approvals a trailer carries at most; a run past it carries
/// no facts (its records are read).
pub const MAX_CARRIED: usize = 32;

/// What [`APPROVALS_TRAILER`] holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CarriedApprovals {
    pub v: u32,
    /// The fingerprint of the rules the consistency checks ran under (the answer parser,
    /// the fold, the checks): only a trailer checked under today's rules is read as checked.
    pub rules: String,
    /// The tree of the commit that carries it: what it is the projection of. A commit whose
    /// tree is another (a forged commit that kept a message, a rewrite) carries nothing.
    pub tree: Option<TreeId>,
    /// The run's approval facts; `None` when there were more than [`MAX_CARRIED`] snapshots
    /// or approvals to carry (so for the rest of the run: its records are read).
    pub facts: Option<Box<ApprovalFacts>>,
}

/// The facts of [`CarriedApprovals::facts`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalFacts {
    /// From the start record.
    pub base: Option<CommitId>,
    pub base_tree: Option<TreeId>,
    pub branch: String,
    /// The run's measured spend, as its manifest folds it.
    pub spent_usd: f64,
    pub fold: ApprovalFold,
    /// For each approval [`ApprovalFold::approvals`] gives, in its order: why it is not
    /// consistent with the run's records and material, or `None` when it is.
    pub checks: Vec<Option<String>>,
}

impl CarriedApprovals {
    /// Facts that carry what the run's start record says, and nothing approved yet.
    fn started(rules: &str, start: &super::record::Start) -> CarriedApprovals {
        CarriedApprovals {
            v: 1,
            rules: rules.to_owned(),
            tree: None,
            facts: Some(Box::new(ApprovalFacts {
                base: start.base,
                base_tree: start.base_tree,
                branch: start.branch.clone(),
                spent_usd: 0.0,
                fold: ApprovalFold::default(),
                checks: Vec::new(),
            })),
        }
    }

    /// The facts of a run whose records are `records` (the first start record among them
    /// names the base), checks not made yet. `None`: no start record.
    pub fn of_records(rules: &str, records: &[Record]) -> Option<CarriedApprovals> {
        let start = records.iter().find_map(|r| match &r.body {
            Body::Start(s) => Some(s),
            _ => None,
        })?;
        let mut carried = CarriedApprovals::started(rules, start);
        carried.step(records.iter().filter(|r| !matches!(r.body, Body::Start(_))));
        Some(carried)
    }

    /// Folds more records in (their new approvals left unchecked: see
    /// [`CarriedApprovals::unchecked`]); past [`MAX_CARRIED`], overflows.
    pub fn step<'a>(&mut self, records: impl IntoIterator<Item = &'a Record>) {
        let Some(facts) = &mut self.facts else {
            return;
        };
        let before = facts.fold.approvals();
        for record in records {
            facts.fold.step(record);
        }
        if facts.fold.size() > MAX_CARRIED {
            self.facts = None;
            return;
        }
        // A check stays with its approval while the approval stands as it was.
        let old: Vec<(Approval, Option<String>)> =
            before.into_iter().zip(facts.checks.drain(..)).collect();
        facts.checks = facts
            .fold
            .approvals()
            .iter()
            .map(|a| {
                old.iter()
                    .find(|(o, _)| o == a)
                    .map_or_else(|| Some(UNCHECKED.to_owned()), |(_, c)| c.clone())
            })
            .collect();
    }

    /// The approvals not checked yet, with their index (to [`CarriedApprovals::set_check`]).
    pub fn unchecked(&self) -> Vec<(usize, Approval)> {
        let Some(facts) = &self.facts else {
            return Vec::new();
        };
        facts
            .fold
            .approvals()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| facts.checks[*i].as_deref() == Some(UNCHECKED))
            .collect()
    }

    /// Records the check of approval `index`.
    pub fn set_check(&mut self, index: usize, check: Result<(), String>) {
        if let Some(facts) = &mut self.facts
            && let Some(slot) = facts.checks.get_mut(index)
        {
            *slot = check.err();
        }
    }

    /// Sets the spend.
    pub fn set_spend(&mut self, spent_usd: f64) {
        if let Some(facts) = &mut self.facts {
            facts.spent_usd = spent_usd;
        }
    }

    /// Sets the tree of the commit that carries it.
    pub fn set_tree(&mut self, tree: TreeId) {
        self.tree = Some(tree);
    }

    /// Whether it was made under `rules` by a commit whose tree is `tree`: what a writer may
    /// step further (an overflow, an unchecked approval included).
    pub fn made_under(&self, rules: &str, tree: TreeId) -> bool {
        self.v == 1 && self.rules == rules && self.tree == Some(tree)
    }

    /// The facts, when [`made_under`](CarriedApprovals::made_under) `rules` and `tree` and
    /// carried whole (every check made, one per approval): what `verify` may believe.
    pub fn checked_under(&self, rules: &str, tree: TreeId) -> Option<&ApprovalFacts> {
        let facts = self.facts.as_deref()?;
        (self.made_under(rules, tree)
            && facts.checks.len() == facts.fold.approvals().len()
            && facts.checks.iter().all(|c| c.as_deref() != Some(UNCHECKED)))
        .then_some(facts)
    }

    /// The [`APPROVALS_TRAILER`] line (ending in a newline): one line of JSON, ASCII only.
    pub fn trailer(&self) -> String {
        let json = serde_json::to_string(self).expect("carried approvals serialize");
        let mut line = String::with_capacity(APPROVALS_TRAILER.len() + json.len() + 1);
        line.push_str(APPROVALS_TRAILER);
        super::manifest::summary::push_ascii(&mut line, &json);
        line.push('\n');
        line
    }

    /// What a commit `message` carries: its one [`APPROVALS_TRAILER`] line after the
    /// subject, when it parses. `None` when there is none, or more than one.
    pub fn in_message(message: &[u8]) -> Option<CarriedApprovals> {
        let json = super::manifest::summary::one_trailer(message, APPROVALS_TRAILER)?;
        serde_json::from_slice(json).ok()
    }
}

/// What an approval's check says before it is made (never written by a finished writer:
/// [`CarriedApprovals::checked_under`] refuses it).
const UNCHECKED: &str = "not checked";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::approval::tests::{finish, review, tree};
    use crate::model::{Start, Verdict};

    fn start() -> Record {
        Record::new(
            1,
            "t".into(),
            Body::Start(Start {
                run_id: "r".into(),
                task: "t".into(),
                cwd: "/".into(),
                branch: "main".into(),
                base: None,
                coder: "claude".into(),
                reviewer: "codex".into(),
                max_rounds: 5,
                budget_usd: None,
                config: Default::default(),
                flags: None,
                claimed: true,
                base_tree: Some(tree("e")),
                carrier: false,
            }),
        )
    }

    #[test]
    fn stepping_commit_by_commit_folds_as_all_records_at_once_and_keeps_each_check_with_its_approval()
     {
        use Verdict::{Approved, ChangesRequested};
        let records = vec![
            start(),
            review(1, "a", Some(ChangesRequested)),
            review(2, "b", Some(Approved)),
            review(3, "c", Some(Approved)),
            review(4, "c", Some(ChangesRequested)),
            review(5, "d", Some(Approved)),
            finish(true),
        ];
        let whole = CarriedApprovals::of_records("r1", &records).expect("a start");
        for split in 1..records.len() {
            let mut carried = CarriedApprovals::of_records("r1", &records[..split]).expect("start");
            for (i, _) in carried.unchecked() {
                carried.set_check(i, Err(format!("early {i}")));
            }
            carried.step(&records[split..]);
            let (Some(a), Some(b)) = (&carried.facts, &whole.facts) else {
                panic!("facts");
            };
            assert_eq!(a.fold, b.fold, "split at {split}");
            // What a trailer stores of the fold so far reads back as the fold.
            let so_far = ApprovalFold::of(&records[..split]);
            let stored = serde_json::to_string(&so_far).expect("serializes");
            let read: ApprovalFold = serde_json::from_str(&stored).expect("reads back");
            assert_eq!(read, so_far, "{stored}");
            assert_eq!(a.fold.approvals(), crate::model::approvals(&records));
            // The approval of d (round 5) is new after any split before it: unchecked; one
            // checked before the split keeps its check.
            let checks: Vec<Option<&str>> = a.checks.iter().map(|c| c.as_deref()).collect();
            assert_eq!(checks.len(), 1);
            if split > 5 {
                assert_eq!(checks, [Some("early 0")]);
            } else {
                assert_eq!(checks, [Some(UNCHECKED)]);
                carried.set_tree(tree("1"));
                assert!(carried.checked_under("r1", tree("1")).is_none());
            }
        }
        let mut checked = whole.clone();
        checked.set_check(0, Ok(()));
        assert!(checked.checked_under("r1", tree("1")).is_none(), "no tree");
        checked.set_tree(tree("1"));
        assert!(checked.checked_under("r1", tree("1")).is_some());
        assert!(
            checked.checked_under("r2", tree("1")).is_none(),
            "other rules"
        );
        assert!(
            checked.checked_under("r1", tree("2")).is_none(),
            "another tree"
        );
        assert_eq!(whole.facts.and_then(|f| f.base_tree), Some(tree("e")));
    }

    #[test]
    fn the_trailer_reads_back_and_past_the_bound_overflows_for_good() {
        let mut carried = CarriedApprovals::of_records("r1", &[start()]).expect("a start");
        carried.set_spend(1.25);
        let message = format!("finish: APPROVED\n\nPair-Run: r\n{}", carried.trailer());
        assert_eq!(
            CarriedApprovals::in_message(message.as_bytes()),
            Some(carried.clone())
        );
        assert!(
            carried
                .trailer()
                .trim_end()
                .bytes()
                .all(|b| (b' '..=b'~').contains(&b))
        );
        let twice = format!("s\n\n{}{}", carried.trailer(), carried.trailer());
        assert_eq!(CarriedApprovals::in_message(twice.as_bytes()), None);
        let many: Vec<Record> = (0..=MAX_CARRIED as u32)
            .map(|i| {
                let mut r = review(i + 1, "0", Some(Verdict::ChangesRequested));
                if let Body::Review(review) = &mut r.body {
                    review.snapshot = Some(TreeId::parse(&format!("{i:040x}")).expect("hex"));
                }
                r
            })
            .collect();
        carried.step(&many);
        assert_eq!(carried.facts, None);
        let message = format!("s\n\n{}", carried.trailer());
        let read = CarriedApprovals::in_message(message.as_bytes()).expect("reads");
        assert!(read.checked_under("r1", tree("1")).is_none());
        let mut more = read;
        more.step(&[review(99, "a", Some(Verdict::Approved))]);
        assert_eq!(more.facts, None);
    }
}
