//! The agent lifecycle hooks (`git pair hook session-start | user-prompt | session-end`,
//! SPEC §10): the session's compaction count in `.git/pair/sessions/`, filed under a hash of
//! the session id ([`crate::hook::session`] decides), the compaction recorded on the active
//! run when there is one, and the reminder the agent is given.
//!
//! Never fails: every error ends in [`report::SessionHook::Quiet`] (nothing printed, exit 0).
//! Without a compaction and without a run the work is: parse stdin, open the repository, stat
//! one file.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::{Context, Error};
use crate::hook::session::{self, Event, Handoff, Input, State, Store};
use crate::model::report::hook as report;

/// Session state untouched this long belongs to a session that never ended cleanly (a crash,
/// a killed terminal): a fresh session start removes it.
const STALE_AFTER: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// Runs the hook for `event` on the agent's `stdin`; `open` opens the repository given the
/// parsed input (whose `cwd` the agent set).
pub fn run(
    event: Event,
    stdin: &[u8],
    open: impl FnOnce(&Input) -> Result<Context, Error>,
) -> report::SessionHook {
    let Some(input) = session::parse_input(event, stdin) else {
        return report::SessionHook::Quiet {};
    };
    let Ok(ctx) = open(&input) else {
        return report::SessionHook::Quiet {};
    };
    match decide_and_store(&ctx, event, &input) {
        Ok(Some(context)) => report::SessionHook::Context {
            hook_specific_output: report::HookSpecificOutput {
                hook_event_name: event.vendor_name().to_owned(),
                additional_context: context,
            },
        },
        Ok(None) | Err(_) => report::SessionHook::Quiet {},
    }
}

/// Where the state of every session lives.
pub fn sessions_dir(ctx: &Context) -> PathBuf {
    ctx.repo.pair_dir().join("sessions")
}

fn decide_and_store(ctx: &Context, event: Event, input: &Input) -> Result<Option<String>, Error> {
    let dir = sessions_dir(ctx);
    let path = dir.join(format!("{}.json", session::session_key(&input.session_id)));
    let stored = match std::fs::read(&path) {
        Ok(bytes) => Some(State::parse(&bytes).unwrap_or_default()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(Error::ReadFile {
                what: "session state",
                path: path.display().to_string(),
                source,
            });
        }
    };
    let outcome = session::decide(event, input, stored);
    match outcome.store {
        Store::Keep => {}
        Store::Write(state) => write_state(&path, state)?,
        Store::Remove => remove(&path)?,
    }
    if event == Event::SessionStart && !outcome.counted {
        prune_stale(&dir);
    }
    let Some(compactions) = outcome.remind else {
        return Ok(None);
    };
    // The standing authorization (`pair.handoffAuthorized`, from the one Setting table); the
    // run's own setting, if any, is applied where the compaction is recorded.
    let authorized = ctx.options.handoff_authorized;
    // Recorded on the run, so that `checkpoint create --authorized` sees the compactions too.
    // A run that cannot be found or written does not stop the reminder.
    let run_id = if outcome.counted {
        super::checkpoint::compaction(ctx, authorized)
            .ok()
            .map(|c| c.run_id.to_string())
    } else {
        None
    };
    let in_progress = crate::worktree::in_progress(&ctx.repo)
        .iter()
        .map(|(what, marker)| what.describe(marker))
        .collect();
    Ok(Some(session::reminder(
        compactions,
        &Handoff {
            authorized,
            run_id,
            in_progress,
        },
    )))
}

/// Writes `state` to `path` with the one atomic writer: a reader sees the old state or the
/// new one, never half of one.
fn write_state(path: &Path, state: State) -> Result<(), Error> {
    crate::util::fs::AtomicWrite::new(crate::util::fs::Mode::Umasked(0o666))
        .write(path, &state.to_bytes())
        .map_err(|(_, _, source)| Error::WriteFile {
            what: "session state",
            path: path.display().to_string(),
            source,
        })
}

fn remove(path: &Path) -> Result<(), Error> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::WriteFile {
            what: "session state",
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Removes session state nobody touched for [`STALE_AFTER`]; best effort.
fn prune_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
