//! Which reviewer realization binds here, and why (`probe`): a doctor view that probes every
//! realization the surfaces document defines (shipped or `pair.surfaceFile`), each on its
//! own, and which one binds for the configured reviewer (the active run's, `pair.reviewer`,
//! the `pair.reviewers` panel, or the reviewer command), with its fallbacks.

use super::{Context, Error};
use crate::model::report::probe as report;
use crate::review::{ProbeCache, ProbeReport, ProbeRequest, Surfaces};

/// Probes every realization, then each configured reviewer; `reviewer_command` (validated)
/// replaces the configured reviewer.
pub fn probe(ctx: &Context, reviewer_command: Option<Vec<String>>) -> Result<report::Probe, Error> {
    let o = &ctx.options;
    let surfaces = Surfaces::load(o.surface_file.as_deref()).map_err(crate::review::Error::from)?;
    // The reviewers a review would bind now, in the review's own order (SPEC §6.1): the
    // `--reviewer-cmd` given here, else the panel, else the one reviewer of the active run
    // (or of a new run) — which a configured command is only when nothing names another.
    let run = super::common::select::active(ctx, None)
        .ok()
        .and_then(|id| ctx.load(&id).ok())
        .map(|s| s.manifest);
    let chosen = super::settings::reviewer(run.as_ref(), o, reviewer_command.as_deref());
    let panel = match &run {
        Some(m) => super::settings::review_settings(m, o).0,
        None => o.reviewers.clone(),
    };
    let names: Vec<String> = if reviewer_command.is_none() && !panel.is_empty() {
        panel
    } else {
        vec![chosen.realization]
    };
    let command = reviewer_command.or_else(|| o.reviewer_command.clone());
    let fallback_order = crate::model::settings::fallback_order(run.as_ref(), o);
    // The doctor view probes afresh (never from a remembered probe), each binary once.
    let fresh = ProbeCache::in_memory();
    // A report whether or not anything binds (its winner says which).
    let probe_one = |name: &str| -> Result<ProbeReport, Error> {
        match crate::review::probe(
            &surfaces,
            &ProbeRequest {
                configured: name,
                reviewer_command: command.as_deref(),
                path_env: None,
                cache: Some(&fresh),
                acp_command: o.acp_command.as_deref(),
                acp_handshake: true,
                fallback_order: Some(&fallback_order),
            },
        ) {
            Ok(report) => Ok(report),
            Err(crate::review::Error::NothingBinds { report, .. }) => Ok(*report),
            Err(e) => Err(e.into()),
        }
    };
    let mut reviewers = Vec::new();
    for name in &names {
        reviewers.push(probe_one(name)?);
    }
    let mut realizations = Vec::new();
    for name in surfaces.realizations.keys() {
        // Probed as if configured: the first candidate is the realization itself.
        realizations.extend(probe_one(name)?.probed.into_iter().next());
    }
    Ok(report::Probe {
        realizations: realizations
            .into_iter()
            .map(|c| report::Realization {
                name: c.name,
                binds: c.binds,
                reason: c.reason,
                path: c.path,
            })
            .collect(),
        reviewers: reviewers
            .into_iter()
            .map(|r| report::Reviewer {
                configured: r.configured,
                winner: r.winner,
                fallback_used: r.fallback_used,
                probed: r.probed,
            })
            .collect(),
    })
}
