//! The PR of a run: its body rendered from stored records (SPEC §11) into `.git/pair/pr/`,
//! its number recorded once, and opening it with `gh` (the one place that runs `gh`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::report::pr_body::PrBody;
use crate::model::{Body, Refusal, RunId};
use crate::ops::{Context, Error};
use crate::store::Append;

/// The PR body of a run, from its stored records and its spend as measured now.
pub fn render_body(ctx: &Context, run_id: &RunId) -> Result<String, Error> {
    let state = ctx.load(run_id)?;
    let records = ctx.repo.records(&state)?;
    let (spent, unpriced) = match ctx.spend_sources() {
        Ok(sources) => {
            let spend = crate::cost::spend::measure(&state.manifest, &sources);
            (spend.usd(), spend.unknown_models)
        }
        Err(_) => {
            let (usd, unpriced) = crate::cost::spend::stored(&state.manifest, None);
            ((usd > 0.0).then_some(usd), unpriced)
        }
    };
    Ok(crate::render::pr_body::render(&records, spent, &unpriced))
}

/// `pr-body`: the newest run's PR body, or with `update` the description in that file
/// with its generated part replaced (the file rewritten).
pub fn pr_body(ctx: &Context, update: Option<&Path>) -> Result<PrBody, Error> {
    let run_id = crate::ops::common::select::latest(ctx, None)?;
    Ok(match update {
        None => PrBody {
            body: render_body(ctx, &run_id)?,
            run_id,
            path: None,
        },
        Some(path) => PrBody {
            body: update_description(ctx, &run_id, path)?,
            run_id,
            path: Some(path.display().to_string()),
        },
    })
}

/// Where the PR body of `run_id` is rendered: `.git/pair/pr/<run>.md`.
pub fn body_path(ctx: &Context, run_id: &RunId) -> PathBuf {
    ctx.repo.pair_dir().join("pr").join(format!("{run_id}.md"))
}

/// Renders the PR body into `.git/pair/pr/<run>.md` (never into the work tree).
pub fn write_body(ctx: &Context, run_id: &RunId) -> Result<PathBuf, Error> {
    let body = render_body(ctx, run_id)?;
    let path = body_path(ctx, run_id);
    crate::ops::common::view::write_atomically(&path, body.as_bytes())?;
    Ok(path)
}

/// Replaces the generated part of the description in `path` (or appends it), keeping the
/// user's own text; returns the new description.
pub fn update_description(ctx: &Context, run_id: &RunId, path: &Path) -> Result<String, Error> {
    let body = render_body(ctx, run_id)?;
    let existing = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
        what: "description file",
        path: path.display().to_string(),
        source,
    })?;
    let updated = crate::render::pr_body::update(&existing, &body);
    crate::ops::common::view::write_atomically(path, updated.as_bytes())?;
    Ok(updated)
}

/// Records `number` as the run's PR, once; a different number on a run that has one is
/// refused (a run never gets a second PR).
pub fn record_number(ctx: &Context, run_id: &RunId, number: u64) -> Result<(), Error> {
    let second = |n: u64| Refusal::SecondPr {
        run_id: run_id.to_string(),
        number: n,
    };
    match ctx.load(run_id)?.manifest.pr {
        Some(n) if n == number => return Ok(()),
        Some(n) => return Err(second(n).into()),
        None => {}
    }
    ctx.repo.append(run_id, |s| {
        if let Some(n) = s.manifest.pr.filter(|n| *n != number) {
            return Err(second(n));
        }
        Ok(Append::record(
            Body::Pr { number },
            format!("pr: #{number}"),
        ))
    })?;
    Ok(())
}

/// Opens the PR with `gh pr create --body-file`; returns its number when gh printed the URL.
pub fn open(
    ctx: &Context,
    run_id: &RunId,
    body: &Path,
    progress: &dyn Fn(&str),
) -> Result<Option<u64>, Error> {
    let m = ctx.load(run_id)?.manifest;
    let title = crate::util::first_line_clipped(&m.task, 70);
    progress("opening the PR with gh…");
    let out = crate::process::run_tool(
        "gh",
        &[
            "pr",
            "create",
            "--title",
            &title,
            "--body-file",
            &body.display().to_string(),
        ],
        ctx.repo.work_dir()?,
        Duration::from_secs(120),
    )
    .map_err(|source| Error::Gh {
        body: body.display().to_string(),
        source,
    })?;
    // gh prints the new PR's URL: …/pull/<n>
    Ok(out
        .lines()
        .filter_map(|l| l.trim().rsplit_once("/pull/"))
        .find_map(|(_, n)| n.trim_end_matches('/').parse().ok()))
}
