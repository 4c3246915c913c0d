//! Compare-and-swap on refs: the one retry policy of every ref this store moves (runs, merges,
//! notes): bounded retries with jittered backoff after a lost race, and telling a lost race
//! from a held lock.

use super::Error;

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
