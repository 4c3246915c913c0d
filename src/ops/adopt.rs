//! `adopt` (SPEC §4, §5): makes a run that arrived from another clone (by `pull`, or a fetch)
//! this clone's own, so it can become the active run here, the commit gate's subject and the
//! Stop hook's. Refuses an unknown or malformed id, a finished run, and a branch on which this
//! clone already has an unfinished run; nothing is written then. Adopting a run that is already
//! this clone's writes nothing.

use super::common::select::{self, Owners};
use super::{Context, Error};
use crate::model::RunId;
use crate::model::report::adopt::Adopted;
use crate::store::Claim;

/// Makes `run` this clone's own.
pub fn adopt(ctx: &Context, run: &str) -> Result<Adopted, Error> {
    let run_id = RunId::parse(run)?;
    if ctx.repo.run_tip(&run_id)?.is_none() {
        return Err(crate::store::Error::UnknownRun {
            run_id: run_id.to_string(),
        }
        .into());
    }
    let manifest = ctx.load(&run_id)?.manifest;
    if manifest.is_finished() {
        let outcome = if manifest.outcome.abandoned {
            "abandoned".to_owned()
        } else {
            manifest
                .outcome
                .verdict
                .map_or("finished", |v| v.as_str())
                .to_owned()
        };
        return Err(Error::AdoptFinished {
            run_id: run_id.to_string(),
            outcome,
        });
    }
    let owners = Owners::new(&ctx.repo);
    let adopted = if owners.belongs_here(&run_id, manifest.claimed, &manifest.cwd)? {
        false
    } else {
        // One run at a time per branch, in this clone too.
        if let Some(other) = select::newest_unfinished(&ctx.repo, &manifest.branch)? {
            return Err(Error::AdoptBranchBusy {
                run_id: run_id.to_string(),
                branch: manifest.branch.clone(),
                other: other.to_string(),
            });
        }
        ctx.repo.claim_run(&run_id, Claim::Adopted)?
    };
    let current = ctx.repo.head()?.branch_name().to_owned();
    let on_branch = current == manifest.branch;
    let active =
        on_branch && select::newest_unfinished(&ctx.repo, &current)? == Some(run_id.clone());
    // The transcript view follows the active run (as after `start`); a pull no longer wrote it.
    let handoff_path = if active && ctx.repo.work_dir().is_ok() {
        ctx.refresh_handoff(&run_id)?
    } else {
        None
    };
    Ok(Adopted {
        next_action: super::status::next_action(ctx, &manifest).as_str(),
        run_id,
        branch: manifest.branch,
        adopted,
        active,
        current_branch: current,
        handoff_path: handoff_path.map(|p| p.display().to_string()),
    })
}
