//! Which reviewer realization binds here, and why (`probe`): probes what is installed for the
//! configured reviewer (the active run's, `pair.reviewer`, the `pair.reviewers` panel, or the
//! reviewer command).

use super::{Context, Error};
use crate::review::{ProbeReport, ProbeRequest, Surfaces};

/// Probes each configured reviewer; `reviewer_command` (validated) replaces the configuration.
pub fn probe(
    ctx: &Context,
    reviewer_command: Option<Vec<String>>,
) -> Result<Vec<ProbeReport>, Error> {
    let o = &ctx.options;
    let surfaces = Surfaces::load(o.surface_file.as_deref()).map_err(crate::review::Error::from)?;
    let command = reviewer_command.or_else(|| o.reviewer_command.clone());
    let names: Vec<String> = if command.is_some() {
        vec!["command".to_owned()]
    } else if !o.reviewers.is_empty() {
        o.reviewers.clone()
    } else {
        let from_run = super::select::active(ctx, None)
            .ok()
            .and_then(|id| ctx.load(&id).ok())
            .map(|s| s.manifest.reviewer);
        vec![from_run.unwrap_or_else(|| o.reviewer.clone())]
    };
    let mut reports = Vec::new();
    for name in &names {
        reports.push(crate::review::probe(
            &surfaces,
            &ProbeRequest {
                configured: name,
                reviewer_command: command.as_deref(),
                path_env: None,
            },
        )?);
    }
    Ok(reports)
}
