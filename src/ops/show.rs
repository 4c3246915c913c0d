//! Reading a run back: its manifest and transcript, one round's records and stored material
//! (`show`), and what changed between two reviewed snapshots (`diff`).

use super::{Context, Error};
use crate::model::report::diff::RoundDiff;
use crate::model::report::handoff::Handoff;
use crate::model::report::list::{RunLine, RunList};
use crate::model::report::show::{MaterialView, RoundView, RunView, Show};
use crate::model::{Body, Manifest, Record, RunId};
use crate::store::{Material, RunState};

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
        Error::Usage("name the run: git pair show RUN_ID (git pair list shows them)".into())
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

/// The records of round `round`: its coder records, dispatches and reviews, each with the
/// projection as of that record (for the transcript sections).
pub fn round_records(ctx: &Context, state: &RunState, round: u32) -> Result<RoundView, Error> {
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
    Ok(round_view(state, round, out))
}

/// The `git diff` text between round `since`'s reviewed snapshot (default: the round before,
/// or the run's base for round 1) and round `round`'s, secrets redacted; with the number of
/// files.
pub fn diff(
    ctx: &Context,
    state: &RunState,
    round: u32,
    since: Option<u32>,
) -> Result<RoundDiff, Error> {
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
    Ok(RoundDiff {
        run_id: state.run_id.clone(),
        round,
        since_round: since.or(round.checked_sub(1).filter(|m| *m > 0)),
        files: files.len(),
        diff: String::from_utf8_lossy(&text).into_owned(),
    })
}

/// Every run in brief, newest first (from the summary cache: only runs that moved are read).
pub fn runs(ctx: &Context) -> Result<RunList, Error> {
    let mut runs = Vec::new();
    let malformed_runs = each_run(ctx, None, &mut |line| {
        runs.push(line);
        Ok(true)
    })?;
    Ok(RunList {
        runs,
        malformed_runs,
    })
}

/// Hands every run in brief to `emit`, newest first (the newest `limit` only, when given),
/// one at a time as it is read, until `emit` says stop (`false`); returns the runs that cannot
/// be read. Nothing holds every run: a listing of 100,000 runs prints as it goes.
pub fn each_run(
    ctx: &Context,
    limit: Option<usize>,
    emit: &mut dyn FnMut(RunLine) -> Result<bool, Error>,
) -> Result<Vec<crate::model::report::verify::MalformedRun>, Error> {
    let owners = super::common::select::Owners::for_listing(&ctx.repo)?;
    let mut malformed = Vec::new();
    let mut failed: Option<Error> = None;
    ctx.repo.each_run_summary(limit, &mut |listed| {
        let m = match listed {
            crate::store::Listed::Run(m) => m,
            crate::store::Listed::Malformed(run, reason) => {
                malformed.push(crate::model::report::verify::MalformedRun { run, reason });
                return Ok(true);
            }
        };
        let line = owners
            .belongs_here(&m.run_id, m.claimed, &m.cwd)
            .map(|owned| RunLine {
                owned,
                run_id: m.run_id,
                branch: m.branch,
                task: m.task,
                round: m.round,
                next_action: m.next_action.as_str(),
                verdict: m.verdict.map(|v| v.as_str()),
                created_at: m.created_at,
                max_rounds: m.max_rounds,
            });
        match line.and_then(&mut *emit) {
            Ok(go_on) => Ok(go_on),
            Err(err) => {
                failed = Some(err);
                Ok(false)
            }
        }
    })?;
    match failed {
        Some(err) => Err(err),
        None => Ok(malformed),
    }
}

/// The active run's transcript (a finished run's too, as `status` shows it: the newest run of
/// the branch), with the HANDOFF view rewritten when missing or stale.
pub fn handoff(ctx: &Context) -> Result<Handoff, Error> {
    let run_id = super::common::select::latest(ctx, None)?;
    let path = ctx.refresh_handoff(&run_id)?;
    let text = transcript(ctx, &run_id)?;
    Ok(Handoff {
        run_id,
        handoff_path: path.map(|p| p.display().to_string()),
        text,
    })
}

/// What `show` prints for the run named by `positional` (or `--run`): the whole run, or with
/// `round` that round's records, or with `material` that round's stored material.
pub fn show(
    ctx: &Context,
    positional: Option<&str>,
    round: Option<u32>,
    material: Option<Material>,
) -> Result<Show, Error> {
    let state = run(ctx, positional)?;
    let Some(round) = round else {
        let transcript = transcript(ctx, &state.run_id)?;
        let effective = super::settings::apply(&state.manifest, &ctx.options);
        let spent_usd = crate::cost::spend::measure(&effective, &ctx.spend_sources()?).usd();
        return Ok(Show::Run(RunView {
            manifest: Box::new(state.manifest),
            transcript,
            spent_usd,
        }));
    };
    if let Some(material) = material {
        let bytes = self::material(&state, ctx, round, material)?;
        return Ok(Show::Material(material_view(
            &state, round, material, &bytes,
        )));
    }
    Ok(Show::Round(round_records(ctx, &state, round)?))
}

/// The material view of `bytes`: `show` asks for the diff, the prompt or the output; any
/// other material is shown as output.
fn material_view(state: &RunState, round: u32, material: Material, bytes: &[u8]) -> MaterialView {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let mut view = MaterialView {
        run_id: state.run_id.clone(),
        round,
        diff: None,
        prompt: None,
        output: None,
    };
    match material {
        Material::Diff => view.diff = Some(text),
        Material::Prompt => view.prompt = Some(text),
        _ => view.output = Some(text),
    }
    view
}

/// What `show --pr N` prints: the records of PR `number`'s final review (its dispatches and
/// outcomes), or with `material` that material of its newest dispatch (`pr/<N>/<attempt>/`).
pub fn show_pr(
    ctx: &Context,
    positional: Option<&str>,
    number: u64,
    material: Option<Material>,
) -> Result<Show, Error> {
    let state = run(ctx, positional)?;
    let records = ctx.repo.records(&state)?;
    let mut manifest = Manifest::empty();
    let mut sections = Vec::new();
    let mut newest: Option<(u32, u32)> = None;
    for record in &records {
        manifest.apply(record);
        let of_pr = match &record.body {
            Body::PrDispatch(d) if d.number == number => {
                newest = Some((d.dispatch.round, d.attempt));
                true
            }
            Body::PrReview(r) => r.number == number,
            Body::PrReviewFailed(f) => f.number == number,
            _ => false,
        };
        if of_pr {
            sections.push((record.clone(), manifest.clone()));
        }
    }
    let missing = |what: &str| Error::MissingMaterial {
        run_id: state.run_id.to_string(),
        round: newest.map_or(0, |(round, _)| round),
        what: format!("{what} of PR #{number}'s final review"),
    };
    if let Some(material) = material {
        let (round, attempt) = newest.ok_or_else(|| missing(material.what()))?;
        let path = crate::store::ReviewDir::Pr { number, attempt }.path(material);
        let bytes = ctx
            .repo
            .run_file(&state, &path)?
            .ok_or_else(|| missing(material.what()))?;
        return Ok(Show::Material(material_view(
            &state, round, material, &bytes,
        )));
    }
    if sections.is_empty() {
        return Err(missing("record"));
    }
    Ok(Show::Round(round_view(
        &state,
        newest.map_or(0, |(round, _)| round),
        sections,
    )))
}

/// Records shown with the projection as of each (for the transcript's sections).
fn round_view(state: &RunState, round: u32, sections: Vec<(Record, Manifest)>) -> RoundView {
    RoundView {
        run_id: state.run_id.clone(),
        round,
        records: sections
            .iter()
            .map(|(record, _)| {
                serde_json::from_slice::<serde_json::Value>(&record.to_json())
                    .expect("records are JSON")
            })
            .collect(),
        sections,
    }
}
