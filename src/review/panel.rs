//! Panel arithmetic (SPEC §6.4), pure: the round verdict from several reviewers' results
//! under a quorum, and how many reviewers may run at once. Running them is the caller's job.

use serde::{Deserialize, Serialize};

use crate::review::binding::BoundRealization;
use crate::review::parse::Verdict;

/// The round's verdict from each panel member's verdict (`None` for a member whose review
/// failed). APPROVED only if at least `quorum` members completed (all of them when `None`)
/// and every completed member approved; CHANGES_REQUESTED when the quorum completed and one
/// did not approve; `None` (no verdict) when too few completed. A failed member never
/// discards the others' results.
pub fn panel_verdict(results: &[Option<Verdict>], quorum: Option<usize>) -> Option<Verdict> {
    let completed: Vec<Verdict> = results.iter().flatten().copied().collect();
    // A quorum of 0 still needs one reviewer: no verdict is ever made from nothing.
    let needed = quorum.unwrap_or(results.len()).max(1);
    if completed.len() < needed {
        return None;
    }
    if completed.iter().all(|v| *v == Verdict::Approved) {
        Some(Verdict::Approved)
    } else {
        Some(Verdict::ChangesRequested)
    }
}

/// How many panel members run at once and what sets that limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parallelism {
    /// Reviewers running at the same time, at least 1.
    pub limit: usize,
    /// What binds: `reviewers`, `maxParallel`, or `<realization> ceiling`.
    pub bound_by: String,
}

/// `min(reviewers, max_parallel, each member's concurrency ceiling)`, naming the binding
/// limit (the first one reaching the minimum, in that order).
pub fn panel_parallelism(
    members: &[&BoundRealization],
    max_parallel: Option<usize>,
) -> Parallelism {
    let mut best = Parallelism {
        limit: members.len().max(1),
        bound_by: "reviewers".to_owned(),
    };
    if let Some(max) = max_parallel
        && max.max(1) < best.limit
    {
        best = Parallelism {
            limit: max.max(1),
            bound_by: "maxParallel".to_owned(),
        };
    }
    for m in members {
        if m.max_concurrency() < best.limit {
            best = Parallelism {
                limit: m.max_concurrency().max(1),
                bound_by: format!("{} ceiling", m.name),
            };
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::surface::Surfaces;
    use Verdict::{Approved as A, ChangesRequested as C};

    #[test]
    fn verdict_table() {
        type Row<'a> = (&'a [Option<Verdict>], Option<usize>, Option<Verdict>);
        let cases: &[Row] = &[
            (&[Some(A), Some(A)], None, Some(A)),
            (&[Some(A), Some(C)], None, Some(C)),
            (&[Some(A), None], None, None),
            (&[Some(A), None], Some(1), Some(A)),
            (&[Some(C), None], Some(1), Some(C)),
            (&[None, None], Some(1), None),
            (&[None, None], Some(0), None),
            (&[Some(A), Some(A), None], Some(2), Some(A)),
            (&[Some(A), None, None], Some(2), None),
            (&[Some(A)], Some(3), None),
            (&[], None, None),
        ];
        for (results, quorum, want) in cases {
            assert_eq!(
                panel_verdict(results, *quorum),
                *want,
                "{results:?} quorum {quorum:?}"
            );
        }
    }

    fn bound(name: &str, ceiling: usize) -> BoundRealization {
        let surfaces = Surfaces::shipped().expect("shipped");
        let mut realization = surfaces.get("builtin").expect("builtin").clone();
        realization.max_concurrency = ceiling;
        BoundRealization {
            name: name.to_owned(),
            realization,
            program: None,
            command_args: vec![],
            capabilities: Default::default(),
            fallback_used: false,
        }
    }

    #[test]
    fn parallelism_names_the_binding_limit() {
        let (a, b) = (bound("codex", 4), bound("claude", 1));
        let cases: Vec<(Vec<&BoundRealization>, Option<usize>, usize, &str)> = vec![
            (vec![&a, &a], None, 2, "reviewers"),
            (vec![&a, &a, &a], Some(2), 2, "maxParallel"),
            (vec![&a, &b], Some(8), 1, "claude ceiling"),
            (vec![&a, &a], Some(0), 1, "maxParallel"),
            (vec![], None, 1, "reviewers"),
        ];
        for (members, max, limit, by) in cases {
            let p = panel_parallelism(&members, max);
            assert_eq!((p.limit, p.bound_by.as_str()), (limit, by), "{max:?}");
        }
    }
}
