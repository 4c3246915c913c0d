//! `git pair pr-body`: print the PR body, or update the generated part of an existing one.

use serde_json::json;

use super::{CommandError, Context, Report};

/// Print the PR body rendered from the run's stored records.
///
/// The generated part sits between <!-- git-pair:begin --> and <!-- git-pair:end -->. With
/// --update FILE, that part of an existing description in FILE is replaced (or appended when
/// absent) and the user's own text is kept; FILE is rewritten in place.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Update the generated part of the description in this file, in place.
    #[arg(long, value_name = "file")]
    pub update: Option<std::path::PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let run_id = ctx.run_id(None).or_else(|e| newest_run(ctx).ok_or(e))?;
    let body = super::finish::render_pr_body(ctx, &run_id)?;
    let Some(path) = &args.update else {
        return Ok(Report::new(
            json!({ "run_id": run_id.as_str(), "body": body }),
            body,
        ));
    };
    let existing = std::fs::read_to_string(path)
        .map_err(|e| CommandError::failed(format!("cannot read {}: {e}", path.display())))?;
    let updated = crate::render::pr_body::update(&existing, &body);
    crate::view::write_atomically(path, updated.as_bytes())?;
    Ok(Report::new(
        json!({ "run_id": run_id.as_str(), "path": path.display().to_string(), "body": updated }),
        updated,
    ))
}

/// The newest run on the current branch, finished or not (a PR body is wanted after finish).
pub fn newest_run(ctx: &Context) -> Option<crate::model::RunId> {
    let branch = ctx.repo.head().ok()?.branch_name().to_owned();
    ctx.repo
        .list_runs()
        .ok()?
        .into_iter()
        .rev()
        .find(|id| ctx.load(id).is_ok_and(|s| s.manifest.branch == branch))
}
