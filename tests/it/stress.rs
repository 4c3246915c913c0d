//! Stress (run by `tests/stress.sh`, not by the default suite: `#[ignore]`): many concurrent
//! writers on one run, SIGKILL at random instants across the commands that write, and three
//! clones converging over a long random sequence. Each asserts what "lose nothing" means:
//! every record lands once, `git fsck --strict` stays clean, the run stays readable with the
//! right next step, no reviewer outlives a killed `git pair`, and the next command completes
//! the run.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{Rng, TestEnv, alive, eventually, fixtures};

fn seed() -> u64 {
    std::env::var("STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x05EE_D0F5_7E55)
}

#[test]
#[ignore = "stress: tests/stress.sh"]
fn stress_sixteen_writers_twenty_records_each_lose_nothing() {
    let env = TestEnv::new();
    let run_id = env.start("sixteen writers");
    let writers: Vec<_> = (0..16)
        .map(|w| {
            let env_cmds: Vec<std::process::Command> = (0..20)
                .map(|r| {
                    let mut c = env.pair_cmd(&[
                        "coder-done",
                        "--summary",
                        &format!("writer {w:02} record {r:02}"),
                    ]);
                    c.stdout(Stdio::null()).stderr(Stdio::piped());
                    c
                })
                .collect();
            std::thread::spawn(move || {
                for mut c in env_cmds {
                    let out = c.output().expect("spawn");
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer thread");
    }
    let records = env.records(&run_id);
    assert_eq!(records.len(), 1 + 16 * 20, "every record lands, once");
    let m = env.manifest(&run_id);
    assert_eq!(
        m["rounds"].as_array().expect("rounds").len(),
        1,
        "no duplicate round"
    );
    assert_eq!(m["rounds"][0]["summaries"], 320);
    let handoff = env.read("HANDOFF.md");
    for w in 0..16 {
        for r in 0..20 {
            assert!(handoff.contains(&format!("writer {w:02} record {r:02}")));
        }
    }
    env.assert_fsck_clean();
}

/// Drives the active run to `done` from wherever it is, with an approving stub reviewer.
fn complete(env: &TestEnv, approve: &str, step: usize) {
    for _ in 0..6 {
        let status = env.pair(&["status", "--json"]);
        assert_eq!(status.code, 0, "step {step}: status unreadable\n{status}");
        let next = status.json()["next_action"]
            .as_str()
            .expect("next_action")
            .to_owned();
        match next.as_str() {
            "done" => return,
            "code" => {
                env.write("work.txt", &format!("step {step} {}\n", crate::common::NOW));
                let out = env.pair(&["coder-done", "--summary", "carry on"]);
                assert_eq!(out.code, 0, "step {step}: {out}");
            }
            "review" | "resume:review" => {
                let out = env.pair(&["review", "--reviewer-cmd", approve]);
                assert!(out.code == 0 || out.code == 1, "step {step}: {out}");
            }
            "finish" => {
                let out = env.pair(&["finish"]);
                assert_eq!(out.code, 0, "step {step}: {out}");
            }
            "wait:review" => std::thread::sleep(Duration::from_millis(50)),
            other => panic!("step {step}: unexpected next_action {other}"),
        }
    }
    panic!("step {step}: the run did not complete");
}

#[test]
#[ignore = "stress: tests/stress.sh"]
fn stress_sigkill_at_random_instants_loses_nothing_and_leaves_no_orphan() {
    let kills: usize = std::env::var("STRESS_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let mut rng = Rng(seed());
    let net = crate::sync::Net::new(2);
    let (env, other) = (&net.clones[0], &net.clones[1]);
    let pid_file = env.home.join("reviewer.pid");
    // A reviewer that takes a moment (so kills land while it runs) and says who it is.
    let slow = format!(
        "[\"sh\", \"-c\", \"echo $$ > {}; sleep 0.3; cat >/dev/null; echo 'VERDICT: APPROVED'\"]",
        pid_file.display()
    );
    let approve = format!(
        "[\"{}\"]",
        fixtures().join("reviewers/approve.sh").display()
    );
    let commands = [
        "coder-done",
        "review",
        "finish",
        "push",
        "pull",
        "checkpoint",
    ];
    for step in 0..kills {
        let what = commands[rng.below(commands.len() as u64) as usize];
        // Preconditions for `what`, by normal commands.
        env.pair_json(&["start", "--replace", "--task", &format!("kill {step}")]);
        env.write("work.txt", &format!("change {step}\n"));
        let args: Vec<String> = match what {
            "coder-done" => vec!["coder-done".into(), "--summary".into(), format!("s{step}")],
            "review" => {
                env.pair_json(&["coder-done", "--summary", "to review"]);
                vec!["review".into(), "--reviewer-cmd".into(), slow.clone()]
            }
            "finish" => {
                env.pair_json(&["coder-done", "--summary", "to finish"]);
                env.pair_json(&["review", "--reviewer-cmd", &approve]);
                vec!["finish".into()]
            }
            "push" => vec!["push".into()],
            "pull" => {
                other.pair_json(&["push"]);
                vec!["pull".into()]
            }
            _ => vec![
                "checkpoint".into(),
                "create".into(),
                "--next".into(),
                "go on".into(),
            ],
        };
        let _ = std::fs::remove_file(&pid_file);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = env
            .pair_cmd(&argv)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let delay = Duration::from_micros(rng.below(120_000));
        let until = Instant::now() + delay;
        while Instant::now() < until {
            if child.try_wait().expect("poll").is_some() {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let _ = child.kill();
        child.wait().expect("reap");

        // Nothing torn, nothing orphaned, the run readable.
        env.assert_fsck_clean();
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
        {
            assert!(
                eventually(Duration::from_secs(10), || !alive(pid)),
                "step {step} ({what}): reviewer {pid} outlived its git pair"
            );
        }
        let status = env.pair(&["status", "--json"]);
        assert_eq!(status.code, 0, "step {step} ({what}): {status}");
        let next = status.json()["next_action"]
            .as_str()
            .expect("next")
            .to_owned();
        let allowed: &[&str] = match what {
            "coder-done" => &["code", "review"],
            "review" => &["review", "resume:review", "finish"],
            "finish" => &["finish", "done"],
            _ => &["code", "review", "finish", "done", "resume:review"],
        };
        assert!(
            allowed.contains(&next.as_str()),
            "step {step} ({what}): next_action {next}"
        );
        // The next commands complete the run; its work is committed the normal way.
        complete(env, &approve, step);
        env.git(&["add", "-A"]);
        env.git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("step {step}"),
        ]);
    }
    // Both clones converge after a last exchange, and nothing was lost on the way.
    env.pair_json(&["push"]);
    other.pair_json(&["pull"]);
    assert_eq!(env.pair_refs(), other.pair_refs());
    other.assert_fsck_clean();
}

#[test]
#[ignore = "stress: tests/stress.sh"]
fn stress_three_clones_converge_over_a_thousand_steps() {
    let steps = std::env::var("STRESS_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    crate::sync::random_sequence(seed(), steps);
}
