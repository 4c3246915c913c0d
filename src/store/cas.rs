//! Compare-and-swap on refs: the one conditional ref edit of every ref this store moves (runs,
//! merges, notes, tombstones, deletions), telling a lost race (a conflict, or a ref lock held
//! by another writer) from a failure, and the one retry policy: bounded retries with
//! jittered backoff after a lost race.

use gix::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use super::{Error, Repo};

/// One conditional ref change: `name` goes from `expected` (`None`: it must not exist) to
/// `new` (`None`: deleted, which needs an `expected` value).
#[derive(Debug, Clone, Copy)]
pub(super) struct Swap<'a> {
    pub name: &'a str,
    pub expected: Option<ObjectId>,
    pub new: Option<ObjectId>,
}

/// Whether a compare-and-swap took effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub(super) enum Swapped {
    /// Every ref held what was expected and now holds its new value.
    Done,
    /// Another writer got there first (a ref held something else, or its lock was held):
    /// nothing changed. The caller reloads and tries again, or keeps the other value.
    Lost,
}

impl Repo {
    /// Applies `swaps` all or nothing, each only when its ref holds exactly its expected
    /// value, with `message` in the reflogs that exist (none is created) and `committer` as
    /// their identity (`None`: the repository's). A failure other than a lost race is an
    /// error naming `action()`.
    pub(super) fn compare_and_swap(
        &self,
        swaps: &[Swap<'_>],
        message: &str,
        committer: Option<gix::actor::SignatureRef<'_>>,
        action: impl FnOnce() -> String,
    ) -> Result<Swapped, Error> {
        let edits = swaps
            .iter()
            .map(|swap| {
                let expected = match swap.expected {
                    Some(old) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(old)),
                    None => PreviousValue::MustNotExist,
                };
                let change = match swap.new {
                    Some(new) => Change::Update {
                        log: LogChange {
                            mode: RefLog::AndReference,
                            force_create_reflog: false,
                            message: message.into(),
                        },
                        expected,
                        new: gix::refs::Target::Object(new),
                    },
                    None => Change::Delete {
                        expected,
                        log: RefLog::AndReference,
                    },
                };
                Ok(RefEdit {
                    change,
                    name: full_ref_name(swap.name)?,
                    deref: false,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        match self.repo.edit_references_as(edits, committer) {
            Ok(_) => Ok(Swapped::Done),
            Err(err) if err.is_conflict() || is_lock_held(&err) => Ok(Swapped::Lost),
            Err(source) => Err(Error::Git {
                action: action(),
                source,
            }),
        }
    }
}

/// How often a writer reloads and re-applies after losing a race before giving up.
const MAX_ATTEMPTS: u32 = 1000;
/// How long a writer keeps retrying before giving up.
const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(20);
/// Runs `attempt` (given how many races were lost so far) again whenever it loses a
/// compare-and-swap race — returns [`Error::LostRace`] — bounded in count and time, with a
/// jittered backoff; `before_retry` runs before each new attempt. Past the bound,
/// `give_up(attempts)` is the error. The one retry policy of every ref this store moves.
pub(crate) fn retry_lost_races<T>(
    mut attempt: impl FnMut(u32) -> Result<T, Error>,
    mut before_retry: impl FnMut(),
    give_up: impl FnOnce(u32) -> Error,
) -> Result<T, Error> {
    let started = std::time::Instant::now();
    let mut retries = 0;
    loop {
        match attempt(retries) {
            Err(Error::LostRace { .. })
                if retries + 1 < MAX_ATTEMPTS && started.elapsed() < MAX_WAIT =>
            {
                retries += 1;
                before_retry();
                backoff(retries);
            }
            Err(Error::LostRace { .. }) => return Err(give_up(retries + 1)),
            other => return other,
        }
    }
}

/// Whether a failed ref edit failed because another process holds a ref's lock file (gix
/// reports it as an I/O `AlreadyExists`, not as a conflict).
pub(crate) fn is_lock_held(err: &gix::Error) -> bool {
    err.iter_errors().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::AlreadyExists)
    })
}

/// Sleeps a little, growing with the number of lost races, jittered so that racing
/// processes spread out instead of colliding again in lockstep.
fn backoff(retries: u32) {
    let jitter = u64::from_str_radix(&crate::util::unique_hex(4), 16).unwrap_or(0) % 1000;
    let base = u64::from(retries.min(10)) * 500;
    std::thread::sleep(std::time::Duration::from_micros(
        base + jitter * (1 + u64::from(retries.min(10))),
    ));
}

/// Test-only (debug builds): `GIT_PAIR_TEST_HOLD_BEFORE_REF_MS` makes a writer pause after its objects are
/// written and before the ref moves, so crash-safety tests can kill it in that window;
/// `GIT_PAIR_TEST_HOLD_FILE` names a file created when the pause begins, so the test knows
/// when to kill without sleeping.
pub(crate) fn test_hold_before_ref_update() {
    let Some(ms) = crate::util::test_switch("GIT_PAIR_TEST_HOLD_BEFORE_REF_MS")
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return;
    };
    if let Some(marker) = crate::util::test_switch("GIT_PAIR_TEST_HOLD_FILE") {
        let _ = std::fs::write(marker, std::process::id().to_string());
    }
    std::thread::sleep(std::time::Duration::from_millis(ms));
}

/// A ref name as gix's transactions take it; one git would refuse is an error naming it.
pub(super) fn full_ref_name(name: &str) -> Result<gix::refs::FullName, Error> {
    name.try_into()
        .map_err(|e: gix::validate::reference::name::Error| Error::Git {
            action: format!("use ref name {}", name.escape_debug()),
            source: gix::Error::from_error(e),
        })
}
