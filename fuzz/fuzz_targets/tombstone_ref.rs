//! Tombstone and run ref names as a remote sends them: `ref_run_id` never panics, and a name
//! it accepts is exactly the ref git pair would write for that run (`dropped_ref`, `run_ref`),
//! so a fetched name can never address another run or escape its namespace.
#![no_main]

use git_pair::store::{DROPPED_PREFIX, RUNS_PREFIX, dropped_ref, ref_run_id, run_ref};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for (prefix, name) in [
        (DROPPED_PREFIX, format!("{DROPPED_PREFIX}{text}")),
        (RUNS_PREFIX, format!("{RUNS_PREFIX}{text}")),
        (DROPPED_PREFIX, text.to_owned()),
    ] {
        if let Some(run) = ref_run_id(&name, prefix) {
            let written = if prefix == DROPPED_PREFIX {
                dropped_ref(&run)
            } else {
                run_ref(&run)
            };
            assert_eq!(written, name, "accepted {name:?} as run {run}");
            assert!(!run.to_string().contains(['/', '.', ' ', '\n']));
        }
    }
});
