//! `git pair log`: a run's story from its records, one entry per round (the stored
//! transcript in short).

use std::collections::BTreeMap;

use super::{Context, Error};
use crate::model::report::log::{CoderStep, ReviewStep, RoundLog, RunLog};
use crate::model::{Body, coder_rounds};

/// The story of the run named (positional or `--run`), else this branch's newest.
pub fn log(ctx: &Context, positional: Option<&str>) -> Result<RunLog, Error> {
    if let (Some(given), Some(flag)) = (positional, ctx.run_flag())
        && given != flag
    {
        return Err(Error::Usage(format!(
            "two runs named: {given} and --run {flag}; name one"
        )));
    }
    let run_id = super::common::select::latest(ctx, positional)?;
    let state = ctx.load(&run_id)?;
    let records = ctx.repo.records(&state)?;
    let mut rounds: BTreeMap<u32, RoundLog> = BTreeMap::new();
    for (n, _, coder) in coder_rounds(&records) {
        round(&mut rounds, n).coder.push(CoderStep {
            tool: coder.tool.clone(),
            summary: coder.summary.lines().next().unwrap_or_default().to_owned(),
            findings_addressed: coder.findings_addressed,
        });
    }
    for record in &records {
        // (round, step, findings): a coder round's review, or a PR's final review (posted,
        // or one that put nothing on the PR).
        let (n, step, findings) = match &record.body {
            Body::Review(review) => (
                review.round,
                ReviewStep {
                    tool: review.tool.clone(),
                    verdict: review.verdict.map(|v| v.as_str().to_owned()),
                    outcome: review.outcome.clone(),
                    findings: review.findings.len(),
                    by_severity: BTreeMap::new(),
                    partial: review.is_partial(),
                    pr: None,
                },
                &review.findings,
            ),
            Body::PrReview(review) => (
                review.round,
                ReviewStep {
                    tool: review.tool.clone(),
                    verdict: Some(review.verdict.as_str().to_owned()),
                    outcome: review.outcome.clone().unwrap_or_else(|| "completed".into()),
                    findings: review.findings.len(),
                    by_severity: BTreeMap::new(),
                    partial: false,
                    pr: Some(review.number),
                },
                &review.findings,
            ),
            Body::PrReviewFailed(failed) => (
                failed.round,
                ReviewStep {
                    tool: failed.tool.clone(),
                    // Nothing reached the PR: no verdict stands.
                    verdict: None,
                    outcome: failed.outcome.clone(),
                    findings: 0,
                    by_severity: BTreeMap::new(),
                    partial: false,
                    pr: Some(failed.number),
                },
                &Vec::new(),
            ),
            _ => continue,
        };
        let mut step = step;
        if step.findings > 0 {
            for finding in findings {
                let key = finding.severity.map_or("none", |s| s.as_str());
                *step.by_severity.entry(key).or_insert(0) += 1;
            }
        }
        round(&mut rounds, n).reviews.push(step);
    }
    let stored = &state.manifest;
    let m = super::settings::apply(stored, &ctx.options);
    let spend = crate::cost::spend::measure(&m, &ctx.spend_sources()?);
    let next = m.next_action(super::status::observed(&m, Some(&spend)));
    let outcome = if m.outcome.abandoned {
        Some("abandoned".to_owned())
    } else {
        m.outcome.verdict.map(|v| v.as_str().to_owned())
    };
    Ok(RunLog {
        run_id: run_id.to_string(),
        task: m.task.clone(),
        branch: m.branch.clone(),
        outcome,
        pr: m.pr,
        spent_usd: crate::render::common::usd_json(spend.usd()),
        unpriced_models: spend.unknown_models.clone(),
        rounds: rounds.into_values().collect(),
        next_action: next.as_str(),
    })
}

fn round(rounds: &mut BTreeMap<u32, RoundLog>, n: u32) -> &mut RoundLog {
    rounds.entry(n).or_insert_with(|| RoundLog {
        n,
        coder: Vec::new(),
        reviews: Vec::new(),
    })
}
