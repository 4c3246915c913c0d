//! Starting a run (SPEC §4 `start`): refuse a dirty work tree or an unborn HEAD, then create
//! the run with its start record and its HANDOFF view. The run's objects are written, and the
//! branch's unfinished run looked for, on a second thread while the work tree is checked; the
//! run's ref is created only once the tree is known clean, so a refusal leaves no run.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::{Context, Error};
use crate::model::{Body, RunId, Setting, Start};
use crate::store::{Append, Appended, Head};
use crate::util::time;

/// From how many loose run refs `start` packs them.
const PACK_RUN_REFS_FROM: usize = 256;

/// What `start` was asked for; `None` means "from configuration".
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub task: String,
    pub base: Option<String>,
    pub coder: Option<String>,
    pub reviewer: Option<String>,
    pub max_rounds: Option<u32>,
    pub budget_usd: Option<f64>,
    /// Abandon the branch's unfinished run first (recorded) instead of refusing.
    pub replace: bool,
}

/// The run that was created: `start`'s report.
pub use crate::model::report::start::Started as Report;

/// Creates a run on the current branch.
pub fn start(ctx: &Context, request: &Request, progress: &dyn Fn(&str)) -> Result<Report, Error> {
    let chosen = validate(ctx, request, progress)?;
    let (work_dir, head, base) = resolve_base(ctx, request)?;
    let run_id = new_run_id(ctx)?;
    let append = start_record(ctx, request, &chosen, &run_id, &work_dir, &head, base);
    let (appended, replaced) = create_run(ctx, request, &run_id, &head, base, append, progress)?;
    let handoff_path = ctx.refresh_handoff(&run_id)?;
    let Chosen {
        task,
        coder,
        reviewer,
        max_rounds,
        ..
    } = chosen;
    Ok(Report {
        ref_name: crate::store::run_ref(&run_id),
        run_id,
        handoff_path: handoff_path.map(|p| p.display().to_string()),
        max_rounds,
        coder,
        reviewer,
        base: base.to_string(),
        branch: appended.state.manifest.branch,
        task,
        replaced,
    })
}

/// What the run is started with: the request's values, else configuration's, checked.
struct Chosen {
    /// Trimmed, secrets redacted.
    task: String,
    coder: String,
    /// The reviewer by its one name, as it would bind (`command:approve.sh` for a configured
    /// command); a realization name whenever the request names the reviewer.
    reviewer: String,
    max_rounds: u32,
    budget_usd: Option<f64>,
}

/// Checks the request (and the configuration it falls back on) before anything is read from
/// the repository; a task's secrets are redacted, with a note.
fn validate(ctx: &Context, request: &Request, progress: &dyn Fn(&str)) -> Result<Chosen, Error> {
    let task = request.task.trim();
    if task.is_empty() {
        return Err(Error::Usage("--task must not be empty".into()));
    }
    // The task is recorded, shared and shown everywhere: never a secret.
    let (task, found) = ctx.scanner()?.redact("task", task);
    if !found.is_empty() {
        progress(&format!(
            "note: {} secret{} redacted from the task",
            found.len(),
            if found.len() == 1 { "" } else { "s" }
        ));
    }
    let max_rounds = request.max_rounds.unwrap_or(ctx.options.max_rounds);
    if max_rounds == 0 {
        return Err(Error::Usage(format!(
            "--{} must be at least 1",
            Setting::MaxRounds.name()
        )));
    }
    let budget_usd = request.budget_usd.or(ctx.options.budget_usd);
    if budget_usd.is_some_and(|b| !b.is_finite() || b < 0.0) {
        return Err(Error::Usage(format!(
            "--{} must be a non-negative number",
            Setting::BudgetUsd.name()
        )));
    }
    let coder = request
        .coder
        .clone()
        .unwrap_or_else(|| ctx.options.coder.clone());
    let reviewer = request
        .reviewer
        .clone()
        .unwrap_or_else(|| ctx.options.reviewer.clone());
    for (setting, value) in [(Setting::Coder, &coder), (Setting::Reviewer, &reviewer)] {
        if !super::settings::is_tool_name(value) {
            return Err(Error::Usage(format!(
                "--{} '{}' is not a tool name (letters, digits, '-', '_', '.')",
                setting.name(),
                value.escape_debug()
            )));
        }
    }
    super::settings::known_reviewer(ctx, &reviewer)?;
    for name in &ctx.options.reviewers {
        super::settings::known_reviewer(ctx, name)?;
    }
    // Named as it would bind, by the one order (SPEC §6.1): a configured reviewer command
    // reviews unless the run or `pair.reviewer` names a reviewer.
    let reviewer = match &request.reviewer {
        Some(_) => reviewer,
        None => super::settings::reviewer(None, &ctx.options, None).name,
    };
    Ok(Chosen {
        task,
        coder,
        reviewer,
        max_rounds,
        budget_usd,
    })
}

/// The work tree, HEAD (refused when unborn) and the commit the run is measured against.
fn resolve_base(ctx: &Context, request: &Request) -> Result<(PathBuf, Head, ObjectId), Error> {
    let work_dir = ctx.repo.work_dir()?.to_path_buf();
    let head = ctx.repo.head()?;
    if let Head::Branch { name, commit: None } = &head {
        return Err(Error::UnbornHead {
            branch: name.clone(),
        });
    }
    let base = match &request.base {
        Some(rev) => ctx.repo.resolve_commit(rev)?,
        None => head.commit().expect("unborn HEAD was refused above"),
    };
    Ok((work_dir, head, base))
}

/// A run id no run has yet.
pub(super) fn new_run_id(ctx: &Context) -> Result<RunId, Error> {
    // Ids are unique with overwhelming probability; one already taken (two starts in the same
    // millisecond drawing the same suffix) is drawn again.
    let mut run_id = RunId::generate_ms(time::now_unix_ms());
    for _ in 0..16 {
        if ctx.repo.run_tip(&run_id)?.is_none() {
            break;
        }
        run_id = RunId::generate_ms(time::now_unix_ms());
    }
    Ok(run_id)
}

/// The start record, with the settings given as flags (they belong to the run).
fn start_record(
    ctx: &Context,
    request: &Request,
    chosen: &Chosen,
    run_id: &RunId,
    work_dir: &Path,
    head: &Head,
    base: ObjectId,
) -> Append {
    // The order of `flags` is stored: the request's, not the settings table's.
    let given = [
        (Setting::Coder, request.coder.is_some()),
        (Setting::Reviewer, request.reviewer.is_some()),
        (Setting::MaxRounds, request.max_rounds.is_some()),
        (Setting::BudgetUsd, request.budget_usd.is_some()),
    ];
    let start = Start {
        run_id: run_id.to_string(),
        task: chosen.task.clone(),
        cwd: work_dir.display().to_string(),
        branch: head.branch_name().to_owned(),
        base: Some(base.into()),
        coder: chosen.coder.clone(),
        reviewer: chosen.reviewer.clone(),
        max_rounds: chosen.max_rounds,
        budget_usd: chosen.budget_usd,
        config: ctx.options.to_record(),
        flags: Some(
            given
                .into_iter()
                .filter(|(_, given)| *given)
                .map(|(setting, _)| setting.name().to_owned())
                .collect(),
        ),
        // `publish_run` records the run as this clone's own with the run's ref.
        claimed: true,
        carrier: false,
        // What `verify` compares with where the base commit itself is not at hand (a run does
        // not carry it). A base whose tree cannot be read gets none: verify then finds no
        // "before" side without the commit, and approves nothing through it.
        // Kept as a commit → tree pair: the Stop hook compares the work tree with it.
        base_tree: ctx.repo.keep_commit_tree(base).ok().map(Into::into),
    };
    let subject = format!(
        "start: {}",
        crate::util::first_line_clipped(&chosen.task, 60)
    );
    Append::record(Body::Start(start), subject)
}

/// Creates the run once the work tree is known clean, abandoning the branch's unfinished run
/// first if asked (else refusing); returns the run as created and the run it replaced.
fn create_run(
    ctx: &Context,
    request: &Request,
    run_id: &RunId,
    head: &Head,
    base: ObjectId,
    append: Append,
    progress: &dyn Fn(&str),
) -> Result<(Appended, Option<RunId>), Error> {
    // While the work tree is checked, another thread writes the run's objects (unreachable
    // until its ref is created below, so a refusal leaves no run) and looks for the branch's
    // unfinished run (read-only).
    progress("checking that the work tree is clean…");
    let helper_repo = ctx.repo.detached();
    let branch = head.branch_name();
    let (dirty, ahead) = std::thread::scope(|scope| {
        let ahead = scope.spawn(move || {
            let prepared = helper_repo.prepare_run(run_id, Some(base), append);
            let unfinished = super::common::select::newest_unfinished(&helper_repo, branch);
            (prepared, unfinished)
        });
        let dirty = crate::worktree::first_dirty(&ctx.repo);
        let ahead = ahead
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (dirty, ahead)
    });
    if let Some(dirty) = dirty? {
        return Err(Error::Dirty {
            path: dirty.path,
            what: dirty.what.to_string(),
        });
    }
    let (prepared, unfinished) = ahead;
    let prepared = prepared?;
    let replaced = match unfinished.ok().flatten() {
        Some(old) if !request.replace => {
            return Err(crate::model::Refusal::UnfinishedRun {
                run_id: old.to_string(),
                branch: branch.to_owned(),
            }
            .into());
        }
        other => other,
    };
    if let Some(old) = &replaced {
        super::finish::abandon_run(ctx, old, Some(format!("replaced by run {run_id}")))?;
    }
    let appended = ctx.repo.publish_run(prepared)?;
    // Thousands of loose run refs make every listing read thousands of files: pack them now
    // and then (best effort; a busy packed-refs is left for next time).
    let _ = ctx.repo.pack_run_refs(PACK_RUN_REFS_FROM);
    let _ = ctx
        .repo
        .pack_loose_refs(crate::store::OWNED_PREFIX, PACK_RUN_REFS_FROM);
    Ok((appended, replaced))
}
