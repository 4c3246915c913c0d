//! Lose nothing: concurrent writers against one run, and writers killed mid-write.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::TestEnv;

#[test]
fn sixteen_concurrent_coder_dones_all_land() {
    sixteen_concurrent_coder_dones(true);
}

/// Without the writer lock every process races on the ref itself: this drives the
/// compare-and-swap + reload-and-reapply path with real concurrency.
#[test]
fn sixteen_concurrent_coder_dones_all_land_through_compare_and_swap_alone() {
    sixteen_concurrent_coder_dones(false);
}

fn sixteen_concurrent_coder_dones(writer_lock: bool) {
    let env = TestEnv::new();
    let run_id = env.start("race");
    let children: Vec<_> = (0..16)
        .map(|i| {
            let mut cmd =
                env.pair_cmd(&["coder-done", "--summary", &format!("summary number {i:02}")]);
            if !writer_lock {
                cmd.env("GIT_PAIR_TEST_NO_WRITER_LOCK", "1");
            }
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
            cmd.spawn().expect("spawn")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "a concurrent coder-done failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let records = env.records(&run_id);
    assert_eq!(records.len(), 17, "{records:#?}");
    assert_eq!(records.iter().filter(|r| r.contains("-coder-")).count(), 16);
    let m = env.manifest(&run_id);
    assert_eq!(m["records"], 17);
    assert_eq!(m["rounds"].as_array().expect("rounds").len(), 1);
    assert_eq!(m["rounds"][0]["summaries"], 16);
    // The chain is linear: every record has its own commit.
    let base = env.git(&["rev-parse", "HEAD"]);
    let count = env.git(&[
        "rev-list",
        "--count",
        &format!("{}..refs/pair/runs/{run_id}", base.trim()),
    ]);
    assert_eq!(count.trim(), "17");
    let handoff = env.read("HANDOFF.md");
    for i in 0..16 {
        assert!(
            handoff.contains(&format!("summary number {i:02}")),
            "missing {i}:\n{handoff}"
        );
    }
    assert_eq!(env.pair(&["handoff"]).stdout, handoff);
    env.assert_fsck_clean();
}

#[test]
fn a_writer_killed_after_writing_objects_leaves_the_old_state() {
    let env = TestEnv::new();
    let run_id = env.start("crash");
    env.pair_json(&["coder-done", "--summary", "before the crash"]);
    let tip_before = env.git(&["rev-parse", &format!("refs/pair/runs/{run_id}")]);
    let marker = env.home.join("holding");
    let mut cmd = env.pair_cmd(&["coder-done", "--summary", "never lands"]);
    cmd.env("GIT_PAIR_TEST_HOLD_BEFORE_REF_MS", "60000")
        .env("GIT_PAIR_TEST_HOLD_FILE", &marker)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !marker.exists() {
        assert!(
            Instant::now() < deadline,
            "the writer never reached the ref update"
        );
        std::thread::yield_now();
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");

    assert_eq!(
        env.git(&["rev-parse", &format!("refs/pair/runs/{run_id}")]),
        tip_before
    );
    assert_eq!(env.records(&run_id).len(), 2);
    assert!(!env.read("HANDOFF.md").contains("never lands"));
    env.assert_fsck_clean();
    // The run goes on normally afterwards.
    env.pair_json(&["coder-done", "--summary", "after the crash"]);
    assert_eq!(env.records(&run_id).len(), 3);
    env.assert_fsck_clean();
}

#[test]
fn writers_killed_at_arbitrary_moments_leave_old_or_new_state() {
    let env = TestEnv::new();
    let run_id = env.start("kill storm");
    let mut expected_min = 1;
    for i in 0..12u64 {
        let mut cmd = env.pair_cmd(&["coder-done", "--summary", &format!("attempt {i}")]);
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn");
        // Kill after a varying amount of work: spin on try_wait for i*1.5 ms.
        let until = Instant::now() + Duration::from_micros(i * 1500);
        while Instant::now() < until {
            if child.try_wait().expect("poll").is_some() {
                break;
            }
            std::thread::yield_now();
        }
        let _ = child.kill();
        child.wait().expect("reap");
        let records = env.records(&run_id).len();
        assert!(
            records == expected_min || records == expected_min + 1,
            "after kill {i}: {records} records, expected {expected_min} or one more"
        );
        expected_min = records;
        let m = env.manifest(&run_id);
        assert_eq!(
            m["records"], records as u64,
            "manifest and records disagree"
        );
        env.assert_fsck_clean();
    }
    env.pair_json(&["coder-done", "--summary", "survivor"]);
    assert_eq!(env.records(&run_id).len(), expected_min + 1);
}
