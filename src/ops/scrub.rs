//! `scrub`: removing one file from the part of a run no remote has yet (SPEC §14), so that a
//! push no longer carries it: every stored snapshot's copy is replaced by a placeholder, the
//! records stay. A file a remote already holds is refused: only `drop` removes it there.

use super::{Context, Error};
use crate::model::RunId;
use crate::model::report::scrub as report;
use crate::store::Scrub;

/// Scrubs `path` from run `run`'s unpublished commits.
pub fn scrub(ctx: &Context, run: &str, path: &str) -> Result<report::Scrubbed, Error> {
    let run_id = RunId::parse(run)?;
    let path = path.trim_start_matches("./").trim_end_matches('/');
    if path.is_empty()
        || path.starts_with('/')
        || path.chars().any(char::is_control)
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(Error::Usage(format!(
            "scrub takes a file's path in the work tree (e.g. config/.env), got '{}'",
            path.escape_debug()
        )));
    }
    let repo = &ctx.repo;
    // Every remote's copy of the run, as last fetched or pushed: the published part.
    let published: Vec<gix::ObjectId> = repo
        .refs_under(crate::store::STAGING_ROOT)?
        .into_iter()
        .filter(|(name, _)| {
            name.rsplit_once("/pair/runs/")
                .is_some_and(|(_, id)| id == run_id.as_str())
        })
        .map(|(_, id)| id)
        .collect();
    match repo.scrub_run(&run_id, path, &published)? {
        Scrub::Published { places } => Err(Error::ScrubPublished {
            run_id: run_id.to_string(),
            path: path.to_owned(),
            places,
        }),
        Scrub::Nothing => Err(Error::ScrubNothing {
            run_id: run_id.to_string(),
            path: path.to_owned(),
        }),
        Scrub::Done(done) => {
            // The rendered views follow the run's new tip on their next refresh.
            let _ = ctx.refresh_handoff(&run_id);
            Ok(report::Scrubbed {
                run_id,
                path: path.to_owned(),
                old_tip: done.old_tip.to_string(),
                new_tip: done.new_tip.to_string(),
                commits_rewritten: done.commits,
                replaced: done.replaced,
            })
        }
    }
}
