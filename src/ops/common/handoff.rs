//! Where a handoff went (SPEC §10): whether a checkpoint made in this work tree was verified
//! in another one since, so this context is the retired source. `status` and the Stop hook
//! ask; the rule itself is `crate::model::checkpoint::rules::handed_over`.

use crate::model::CheckpointState;
use crate::model::checkpoint::rules;
use crate::ops::{Context, Error};
use crate::store::RunState;

/// Whether the run's latest checkpoint was made in this work tree and verified in another
/// since (after a `git pair pull`): then this context is the handoff's source, and the work
/// went there. Reads the run's records only when the latest checkpoint was verified.
pub fn handed_over(ctx: &Context, state: &RunState) -> Result<Option<rules::HandedOver>, Error> {
    let Some(latest) = &state.manifest.checkpoint else {
        return Ok(None);
    };
    if !matches!(
        latest.state,
        CheckpointState::VerifiedSourceActive | CheckpointState::Archived
    ) {
        return Ok(None);
    }
    let path = ctx.repo.work_dir()?.display().to_string();
    let records = ctx.repo.records(state)?;
    Ok(rules::handed_over(
        &latest.id,
        &crate::process::host_name(),
        &path,
        records.iter().map(|r| &r.body),
    ))
}

/// The newest run of this branch that only carries a checkpoint made here with no run
/// active, when that checkpoint was handed over since: the run and where the work went.
pub fn handed_over_carrier(ctx: &Context) -> Result<Option<(RunState, rules::HandedOver)>, Error> {
    let Some(run_id) = super::select::newest_carrier(ctx)? else {
        return Ok(None);
    };
    let state = ctx.load(&run_id)?;
    Ok(handed_over(ctx, &state)?.map(|went| (state, went)))
}
