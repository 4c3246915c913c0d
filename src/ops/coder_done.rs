//! Recording the coder's round (SPEC §4 `coder-done`, §5 rules): validates the responses,
//! measures the run's sessions so their cost is stored with the record, and appends it.

use super::{Context, Error};
use crate::cost::spend::NewSession;
use crate::model::{self, Body, Coder, Response};
use crate::store::Append;

/// What `coder-done` was asked to record.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub summary: String,
    pub findings_addressed: Option<u32>,
    pub session: Option<String>,
    pub responses: Vec<Response>,
    pub extra_round: bool,
}

/// The recorded round: `coder-done`'s report.
pub use crate::model::report::coder_done::CoderDone as Report;

/// Records a coder round of the active run.
pub fn coder_done(ctx: &Context, request: &Request) -> Result<Report, Error> {
    let summary = request.summary.trim();
    if summary.is_empty() {
        return Err(Error::Usage("--summary must not be empty".into()));
    }
    if let Some(session) = request.session.as_ref().filter(|s| !is_session_id(s)) {
        return Err(Error::Usage(format!(
            "--session '{}' is not a session id (letters, digits, '-', '_')",
            session.escape_debug()
        )));
    }
    let run_id = super::common::select::active(ctx, None)?;
    let state = ctx.load(&run_id)?;
    let mut warnings = Vec::new();
    // What is recorded is shared and shown (transcript, PR body): never a secret.
    let scanner = ctx.scanner()?;
    let (summary, found) = scanner.redact("summary", summary);
    let summary = summary.as_str();
    let mut responses = request.responses.clone();
    let mut redacted = found.len();
    for response in &mut responses {
        if let Some(reason) = &response.reason {
            let (reason, found) = scanner.redact("response", reason);
            redacted += found.len();
            response.reason = Some(reason);
        }
    }
    if redacted > 0 {
        warnings.push(format!(
            "warning: {redacted} secret{} redacted from what is recorded (the summary or the responses)",
            if redacted == 1 { "" } else { "s" }
        ));
    }
    // Measuring never blocks recording the coder's work: a problem becomes a warning.
    let (session, spend) = match ctx.spend_sources() {
        Ok(sources) => {
            let session = request.session.clone().or_else(|| {
                crate::cost::spend::discover_coder_session(
                    &state.manifest,
                    &sources,
                    crate::review::prompt::MARKER_PREFIX,
                )
            });
            let new: Vec<NewSession> = session
                .iter()
                .map(|id| NewSession {
                    id: id.clone(),
                    role: "coder",
                    agent: state.manifest.coder.clone(),
                    reported_usd: None,
                })
                .collect();
            let spend = crate::cost::spend::measure_including(&state.manifest, &new, &sources);
            (session, Some(spend))
        }
        Err(e) => {
            warnings.push(format!("warning: cost not measured: {e}"));
            (request.session.clone(), None)
        }
    };
    let open_findings = open_findings(ctx, &state)?;
    let appended = ctx.repo.append(&run_id, |state| {
        let effective = super::settings::apply(&state.manifest, &ctx.options);
        model::check_coder_done(&effective, request.extra_round)?;
        check_answers(&open_findings, request)?;
        let (round, opens) = state.manifest.coder_round_for_next();
        let body = Body::Coder(Coder {
            summary: summary.to_owned(),
            tool: effective.coder.clone(),
            findings_addressed: request.findings_addressed,
            session_id: session.clone(),
            responses: responses.clone(),
            extra_round: request.extra_round,
            round: Some(round),
        });
        let verb = if opens { "" } else { " (more)" };
        let mut append = Append::record(
            body,
            format!(
                "coder {round}{verb}: {}",
                crate::util::first_line_clipped(summary, 60)
            ),
        );
        append.round = Some(round);
        if let Some(spend) = &spend {
            append.also = crate::cost::spend::growth_records(&state.manifest, spend, round);
        }
        Ok(append)
    })?;
    ctx.refresh_handoff(&run_id)?;
    warnings.extend(unchanged_warnings(ctx, &appended.state)?);
    // The coder's work is always recorded; at the budget's alert the next review stops
    // (SPEC §5), so say it now — from the spend just measured, against the budget in force.
    let effective = super::settings::apply(&appended.state.manifest, &ctx.options);
    let spent = spend.as_ref().and_then(|s| s.usd());
    if spent.and_then(|usd| {
        crate::cost::budget_level(usd, effective.budget_usd, effective.budget_warn_ratio)
    }) == Some(crate::cost::Level::Alert)
    {
        warnings.push(
            "warning: the run's budget is spent: git pair review starts no paid reviewer now; ask the human (to go on: git pair review --over-budget, recorded)"
                .to_owned(),
        );
    }
    let round = appended.state.manifest.current_coder_round().unwrap_or(1);
    Ok(Report {
        run_id,
        round,
        warnings,
    })
}

/// The numbers of the findings the coder answers now: those of the last completed review when
/// it asked for changes (an approval's notes are not answered by a coder round).
fn open_findings(ctx: &Context, state: &crate::store::RunState) -> Result<Vec<u32>, Error> {
    if state.manifest.last_verdict() != Some(crate::model::Verdict::ChangesRequested) {
        return Ok(Vec::new());
    }
    Ok(match last_verdict_review(ctx, state)? {
        Some(review) => review.findings.iter().map(|f| f.n).collect(),
        None => Vec::new(),
    })
}

/// The newest review that reached a verdict, read newest first (not the whole history).
fn last_verdict_review(
    ctx: &Context,
    state: &crate::store::RunState,
) -> Result<Option<crate::model::Review>, Error> {
    let record = ctx.repo.newest_record(
        state,
        "review",
        |r| matches!(&r.body, Body::Review(review) if review.verdict.is_some()),
    )?;
    Ok(record.and_then(|r| match r.body {
        Body::Review(review) => Some(review),
        _ => None,
    }))
}

/// Refuses responses to findings that do not exist and a count above the open findings.
fn check_answers(open: &[u32], request: &Request) -> Result<(), model::Refusal> {
    let listed = || {
        if open.is_empty() {
            "none".to_owned()
        } else {
            open.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    if let Some(r) = request
        .responses
        .iter()
        .find(|r| !open.contains(&r.finding))
    {
        return Err(model::Refusal::UnknownFinding {
            finding: r.finding,
            open: listed(),
        });
    }
    let open_count = u32::try_from(open.len()).unwrap_or(u32::MAX);
    if let Some(claimed) = request.findings_addressed.filter(|n| *n > open_count) {
        return Err(model::Refusal::TooManyAddressed {
            claimed,
            open: open_count,
        });
    }
    Ok(())
}

/// Warns when the work tree holds nothing new: it equals the run's base (nothing to review)
/// or the snapshot the reviewer last saw (the same change would be reviewed again).
fn unchanged_warnings(ctx: &Context, state: &crate::store::RunState) -> Result<Vec<String>, Error> {
    let work_tree = crate::worktree::snapshot::tree_id(&ctx.repo)?;
    let mut warnings = Vec::new();
    let base_tree = match state.manifest.base {
        Some(base) => Some(ctx.repo.commit_tree(base.into())?),
        None => None,
    };
    if base_tree == Some(work_tree) {
        let base = state
            .manifest
            .base
            .map(|b| b.to_string())
            .unwrap_or_default();
        let base = base.as_str();
        warnings.push(format!(
            "warning: the work tree equals the run's base ({}): there is nothing to review; make the change here first",
            base.get(..12).unwrap_or(base)
        ));
        return Ok(warnings);
    }
    let ever_reviewed = state
        .manifest
        .rounds
        .iter()
        .any(|e| e.role == crate::model::Role::Reviewer && e.verdict.is_some());
    let last_reviewed = if ever_reviewed {
        last_verdict_review(ctx, state)?
    } else {
        None
    };
    if let Some(review) = last_reviewed.filter(|r| r.snapshot == Some(work_tree.into())) {
        warnings.push(format!(
            "warning: nothing changed since the snapshot reviewed in round {}: the reviewer would see the same change",
            review.round
        ));
    }
    Ok(warnings)
}

/// Reads a `--responses` file: `[{"finding": 1, "status": "addressed|deferred|disputed", "reason": "…"}]`.
pub fn read_responses(path: &std::path::Path) -> Result<Vec<Response>, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::ReadFile {
        what: "--responses file",
        path: path.display().to_string(),
        source,
    })?;
    serde_json::from_slice::<Vec<Response>>(&bytes).map_err(|e| Error::BadFile {
        what: "--responses file",
        path: path.display().to_string(),
        expected: "a JSON array of {finding, status, reason}",
        detail: e.to_string(),
    })
}

fn is_session_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}
