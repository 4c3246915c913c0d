//! A plan review with no run (`review --plan FILE` outside a repository, or with no active
//! run): the plan alone is reviewed by the configured reviewer in an empty directory, and the
//! verdict and findings are printed. Nothing is stored anywhere.

use super::execute::{SnapshotDirs, execute};
use super::plan::{MemberResult, Request, Settings, settings_from};
use crate::config::Options;
use crate::model::report::review::PlanReview;
use crate::model::{Manifest, RunId};
use crate::ops::Error;

/// Reviews `request.plan` with the reviewer `options` configure; stores nothing.
pub fn review_plan_alone(
    options: &Options,
    request: &Request,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<PlanReview, Error> {
    let scanner = crate::secrets::Scanner::load(options.secrets_file.as_deref())?;
    // No run: every setting is configuration's.
    let mut blank = Manifest::empty();
    blank.run_settings = Some(Default::default());
    let settings: Settings = settings_from(options, scanner, request, &blank)?;
    // An id for the prompt's attempt marker only: no run is created.
    let run_id = RunId::generate_ms(crate::util::time::now_unix_ms());
    let plan = super::prepare::prepare_plan_alone(&run_id, &settings)?;
    // The reviewer runs in an empty directory: there is no change to look at.
    let empty = tempfile::Builder::new()
        .prefix("git-pair-plan-")
        .tempdir()
        .map_err(|source| Error::WriteFile {
            what: "temporary directory",
            path: std::env::temp_dir().display().to_string(),
            source,
        })?;
    let dirs = SnapshotDirs {
        snapshot: Some(empty.path()),
        run_snapshot: Some(empty.path()),
    };
    let results: Vec<MemberResult> =
        execute(&plan, &settings, &dirs, None, progress, &mut |_, _| {})
            .into_iter()
            .map(|r| super::record::redact_result(&settings.scanner, r))
            .collect();
    let combined = super::record::combine(&plan, &results, settings.quorum);
    Ok(PlanReview {
        stored: false,
        mode: "plan",
        verdict: combined.verdict,
        findings: combined.findings,
        outcome: combined.outcome,
        reviewers: plan.reviewer_labels(),
        model: settings.model.clone(),
        effort: settings.effort.clone(),
        error: combined.error,
    })
}
