//! Reading a run back: its manifest and transcript, one round's records and stored material
//! (`show`), and what changed between two reviewed snapshots (`diff`).

use super::{Context, Error};
use crate::model::{Body, Manifest, Record, RunId};
use crate::store::{Material, RunState};

/// One round's records, each with the projection as of that record (for rendering).
pub struct RoundRecords {
    pub run_id: RunId,
    pub round: u32,
    pub records: Vec<(Record, Manifest)>,
}

/// The run named by the positional argument or `--run` (validated; both must agree), loaded.
pub fn run(ctx: &Context, positional: Option<&str>) -> Result<RunState, Error> {
    if let (Some(given), Some(flag)) = (positional, ctx.run_flag())
        && given != flag
    {
        return Err(Error::Usage(format!(
            "two runs named: {given} and --run {flag}; name one"
        )));
    }
    let run_id = super::common::select::named(ctx, positional)?.ok_or_else(|| {
        Error::Usage("name the run: git pair show <run> (git pair list shows them)".into())
    })?;
    ctx.load(&run_id)
}

/// The run's transcript (the HANDOFF view's content).
pub fn transcript(ctx: &Context, run_id: &RunId) -> Result<String, Error> {
    Ok(crate::ops::common::view::transcript(&ctx.repo, run_id)?)
}

fn check_round(state: &RunState, round: u32) -> Result<(), Error> {
    if round == 0 || round > state.manifest.current_coder_round().unwrap_or(0) {
        return Err(Error::NoSuchRound {
            run_id: state.run_id.to_string(),
            round,
        });
    }
    Ok(())
}

/// The stored `material` of round `round`.
pub fn material(
    state: &RunState,
    ctx: &Context,
    round: u32,
    material: Material,
) -> Result<Vec<u8>, Error> {
    check_round(state, round)?;
    ctx.repo
        .round_file(state, round, material)?
        .ok_or_else(|| Error::MissingMaterial {
            run_id: state.run_id.to_string(),
            round,
            what: material.what().to_owned(),
        })
}

/// The records of round `round`: its coder records, dispatches and reviews.
pub fn round_records(ctx: &Context, state: &RunState, round: u32) -> Result<RoundRecords, Error> {
    check_round(state, round)?;
    let records = ctx.repo.records(state)?;
    let coder_ids: Vec<&str> = crate::model::coder_rounds(&records)
        .into_iter()
        .filter(|(n, _, _)| *n == round)
        .map(|(_, r, _)| r.id.as_str())
        .collect();
    let mut manifest = Manifest::empty();
    let mut out = Vec::new();
    for record in &records {
        manifest.apply(record);
        let in_round = match &record.body {
            Body::Coder(_) => coder_ids.contains(&record.id.as_str()),
            Body::Review(review) => review.round == round,
            Body::ReviewDispatch(dispatch) => dispatch.round == round,
            _ => false,
        };
        if in_round {
            out.push((record.clone(), manifest.clone()));
        }
    }
    Ok(RoundRecords {
        run_id: state.run_id.clone(),
        round,
        records: out,
    })
}

/// The `git diff` text between round `since`'s reviewed snapshot (default: the round before,
/// or the run's base for round 1) and round `round`'s, secrets redacted; with the number of
/// files.
pub fn diff(
    ctx: &Context,
    state: &RunState,
    round: u32,
    since: Option<u32>,
) -> Result<(String, usize), Error> {
    let snapshot_of = |n: u32| -> Result<gix::ObjectId, Error> {
        ctx.repo
            .round_snapshot(state, n)?
            .ok_or_else(|| Error::NoSnapshot {
                run_id: state.run_id.to_string(),
                round: n,
            })
    };
    let new = snapshot_of(round)?;
    let old = match since {
        Some(m) if m >= round => {
            return Err(Error::Usage(
                "--since-round must name an earlier round than --round".into(),
            ));
        }
        Some(m) => Some(snapshot_of(m)?),
        None if round > 1 => Some(snapshot_of(round - 1)?),
        None => match state.manifest.base {
            Some(base) => Some(ctx.repo.commit_tree(base.into())?),
            None => None,
        },
    };
    let files = ctx.repo.diff_trees(old, new)?;
    let mut text = Vec::new();
    crate::diff::render(&files, &mut text).map_err(|source| Error::Render { source })?;
    // Snapshots hold the work tree as it was, secrets included: never print one.
    let text = ctx.scanner()?.redact_diff_bytes(&text).0;
    Ok((String::from_utf8_lossy(&text).into_owned(), files.len()))
}

/// Every run's summary, newest first (from the summary cache: only runs that moved are read).
pub fn runs(ctx: &Context) -> Result<Vec<crate::store::RunSummary>, Error> {
    let mut runs = ctx.repo.run_summaries()?;
    runs.reverse();
    Ok(runs)
}

/// The active run's transcript, with the HANDOFF view rewritten when missing or stale.
pub fn handoff(ctx: &Context) -> Result<(RunId, Option<std::path::PathBuf>, String), Error> {
    let run_id = super::common::select::active(ctx, None)?;
    let path = ctx.refresh_handoff(&run_id)?;
    let text = transcript(ctx, &run_id)?;
    Ok((run_id, path, text))
}
