//! The union of several sides' records by file name, in stored order: what a merge keeps
//! under `records/` and what it moves aside. Pure over (file name, blob id) pairs, so the
//! merge's algebra (independent of side, of delivery order and of duplicate delivery) is
//! property-tested without a repository.

use std::collections::{BTreeMap, BTreeSet};

use crate::store::layout::record_order;

/// What a union keeps and what it displaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Union<I> {
    /// One entry per file name, in stored order (seq, then name).
    pub kept: Vec<(String, I)>,
    /// The other ids claimed for a kept name (different bytes under one name: damaged or
    /// tampered state), by name, then id.
    pub displaced: Vec<(String, I)>,
}

/// Unites `claims` (file name → blob id, from any number of sides, in any order, duplicates
/// allowed): a name with several ids keeps the smallest, so the result is a function of the
/// *set* of claims.
pub(crate) fn union<I: Ord>(claims: impl IntoIterator<Item = (String, I)>) -> Union<I> {
    let mut by_name: BTreeMap<String, BTreeSet<I>> = BTreeMap::new();
    for (name, id) in claims {
        by_name.entry(name).or_default().insert(id);
    }
    let mut kept = Vec::with_capacity(by_name.len());
    let mut displaced = Vec::new();
    for (name, ids) in by_name {
        let mut ids = ids.into_iter();
        let Some(first) = ids.next() else {
            continue;
        };
        displaced.extend(ids.map(|id| (name.clone(), id)));
        kept.push((name, first));
    }
    kept.sort_by(|a, b| record_order(&a.0, &b.0));
    Union { kept, displaced }
}

#[cfg(test)]
mod tests {
    //! The merge's algebra over generated record sets: `Manifest::project` of the union in
    //! stored order depends only on the *set* of records delivered, not on which side held
    //! each one, in which order the sides were read, or how often a record arrived.

    use std::collections::HashMap;

    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::*;
    use crate::model::{
        Abandon, Body, Coder, Compaction, CostEntry, Finding, Finish, Manifest, Record, Review,
        ReviewDispatch, SetSetting, Start, Verdict,
    };

    /// Record ids come from a small pool, so generated sets hold the same file name with
    /// different bytes (the displaced case) and reviews that answer a generated dispatch.
    fn pool_id(i: u8) -> String {
        format!("{i:012x}")
    }

    fn verdict() -> impl Strategy<Value = Option<Verdict>> {
        prop_oneof![
            Just(None),
            Just(Some(Verdict::Approved)),
            Just(Some(Verdict::ChangesRequested)),
        ]
    }

    fn body() -> impl Strategy<Value = Body> {
        prop_oneof![
            (1u32..4, proptest::option::of(0u32..300)).prop_map(|(max_rounds, cents)| {
                Body::Start(Start {
                    run_id: "20261130-220000-a1b2c3".into(),
                    task: "t".into(),
                    cwd: "/w".into(),
                    branch: "main".into(),
                    base: None,
                    coder: "claude".into(),
                    reviewer: "codex".into(),
                    max_rounds,
                    budget_usd: cents.map(|c| f64::from(c) / 100.0),
                    config: serde_json::Map::new(),
                    flags: None,
                    claimed: false,
                    carrier: false,
                    base_tree: None,
                })
            }),
            (
                0u8..3,
                proptest::option::of(0u32..3),
                proptest::option::of(1u32..4)
            )
                .prop_map(|(s, findings_addressed, round)| Body::Coder(Coder {
                    summary: format!("summary {s}"),
                    tool: "claude".into(),
                    findings_addressed,
                    session_id: Some(format!("coder-{s}")),
                    responses: Vec::new(),
                    extra_round: false,
                    round,
                })),
            (1u32..4).prop_map(|round| Body::ReviewDispatch(ReviewDispatch {
                round,
                reviewers: vec!["codex".into()],
                snapshot: crate::model::TreeId::parse(&"1".repeat(40)).expect("hex"),
                mode: String::new(),
                again: false,
                runner: None,
                redacted: Vec::new(),
                over_budget: false,
                parallelism: None,
                carried: Vec::new(),
            })),
            (1u32..4, verdict(), 0u32..3, 0u8..4).prop_map(|(round, verdict, findings, of)| {
                Body::Review(Review {
                    model: None,
                    effort: None,
                    dispatch: pool_id(of),
                    round,
                    verdict,
                    outcome: "completed".into(),
                    tool: "codex".into(),
                    findings: (1..=findings)
                        .map(|n| Finding {
                            n,
                            category: "correctness".into(),
                            severity: None,
                            location: String::new(),
                            text: format!("finding {n}"),
                        })
                        .collect(),
                    reviewers: Vec::new(),
                    fallback_used: false,
                    snapshot: None,
                    coverage_warning: None,
                    error: None,
                })
            }),
            (1u32..4, 0u8..3, 0u32..500).prop_map(|(round, s, cents)| Body::Cost(CostEntry {
                round,
                role: if s == 0 { "reviewer" } else { "coder" }.into(),
                agent: "claude".into(),
                session_id: format!("coder-{s}"),
                usd: f64::from(cents) / 100.0,
                tokens: serde_json::Value::Null,
                unknown_models: Vec::new(),
                unpriced: Default::default(),
            })),
            (any::<bool>(), any::<bool>(), proptest::option::of(1u64..3)).prop_map(
                |(approved, override_, pr)| Body::Finish(Finish {
                    pr_final: false,
                    verdict: if approved {
                        Verdict::Approved
                    } else {
                        Verdict::ChangesRequested
                    },
                    override_,
                    pr,
                    accept_partial: false,
                })
            ),
            (1u64..3).prop_map(|number| Body::Pr {
                number,
                final_round: false,
            }),
            (0u8..3, proptest::option::of(1u32..6)).prop_map(|(k, value)| Body::Set(SetSetting {
                key: ["reviewer", "max-rounds", "review-timeout"][usize::from(k)].into(),
                value: value.map(|v| {
                    if k == 0 {
                        format!("reviewer-{v}").into()
                    } else {
                        v.into()
                    }
                }),
            })),
            Just(Body::Abandon(Abandon { reason: None })),
            Just(Body::Compaction(Compaction {})),
        ]
    }

    fn record() -> impl Strategy<Value = Record> {
        (0u8..4, 1u64..7, body()).prop_map(|(id, seq, body)| Record {
            id: pool_id(id),
            seq,
            at: format!("2026-11-30T22:00:{seq:02}Z"),
            body,
        })
    }

    /// The stored blobs of a record set, by blob id (SHA-1 of the stored bytes, as git's
    /// blob ids order the same way for the question "which copy is kept").
    #[derive(Default)]
    struct Blobs(HashMap<String, Vec<u8>>);

    impl Blobs {
        fn claim(&mut self, record: &Record) -> (String, String) {
            let bytes = record.to_json();
            let id = sha1_smol::Sha1::from(&bytes).digest().to_string();
            self.0.insert(id.clone(), bytes);
            (record.file_name(), id)
        }

        /// What the merge stores: the union's records read back as the merge reads them,
        /// and the manifest projected from them.
        fn merged(&self, claims: &[(String, String)]) -> (Union<String>, Manifest) {
            let union = union(claims.iter().cloned());
            let records: Vec<Record> = union
                .kept
                .iter()
                .map(|(_, id)| Record::from_json(&self.0[id]).expect("generated records parse"))
                .collect();
            let manifest = Manifest::project(&records);
            (union, manifest)
        }
    }

    /// A deterministic shuffle (xorshift), so a failing case replays from its inputs.
    fn shuffled<T: Clone>(items: &[T], mut seed: u64) -> Vec<T> {
        let mut out = items.to_vec();
        seed |= 1;
        for i in (1..out.len()).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let j = usize::try_from(seed % (i as u64 + 1)).expect("fits");
            out.swap(i, j);
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn merge_is_independent_of_side_order_and_duplicate_delivery(
            records in vec(record(), 0..24),
            sides in vec(0u8..3, 24),
            seed in any::<u64>(),
        ) {
            let mut blobs = Blobs::default();
            let (mut a, mut b, mut all) = (Vec::new(), Vec::new(), Vec::new());
            for (record, side) in records.iter().zip(&sides) {
                let claim = blobs.claim(record);
                all.push(claim.clone());
                match side {
                    0 => a.push(claim),
                    1 => b.push(claim),
                    _ => {
                        a.push(claim.clone());
                        b.push(claim);
                    }
                }
            }
            let whole = blobs.merged(&all);
            let ab = blobs.merged(&[a.clone(), b.clone()].concat());
            // Which side held a record does not matter, only that it was delivered.
            prop_assert_eq!(&ab, &whole);
            // Commutative.
            prop_assert_eq!(&blobs.merged(&[b.clone(), a.clone()].concat()), &ab);
            // Idempotent: every record delivered twice, or a side merged with itself.
            prop_assert_eq!(&blobs.merged(&[a.clone(), b.clone(), a.clone(), b.clone()].concat()), &ab);
            prop_assert_eq!(blobs.merged(&[a.clone(), a.clone()].concat()), blobs.merged(&a));
            // Delivery order within the union does not matter.
            prop_assert_eq!(&blobs.merged(&shuffled(&[a.clone(), b.clone()].concat(), seed)), &ab);
            // Merging the merged records with a side again changes nothing (the displaced
            // copies, moved out of `records/`, are displaced again).
            let (union_ab, manifest_ab) = &ab;
            let again = blobs.merged(&[union_ab.kept.clone(), b.clone()].concat());
            prop_assert_eq!(&again.1, manifest_ab);
            prop_assert_eq!(&again.0.kept, &union_ab.kept);
            // Every record position is accounted for once.
            prop_assert_eq!(manifest_ab.records, union_ab.kept.len() as u64);
        }
    }
}
