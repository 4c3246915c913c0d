//! The fold, the next action and the rules, tested on projected records.

use super::*;
use crate::model::record::{Body, Coder, Finding, Record, Review, ReviewDispatch, Start, Verdict};
use crate::model::{check_coder_done, check_finish, check_review};

fn rec(seq: u64, body: Body) -> Record {
    Record::new(seq, format!("2026-11-29T23:{:02}:00Z", seq % 60), body)
}

fn start(max_rounds: u32) -> Body {
    Body::Start(Start {
        run_id: "20261129-231500-a1b2c3".into(),
        task: "t".into(),
        cwd: "/w".into(),
        branch: "main".into(),
        base: Some(crate::model::CommitId::parse(&"0".repeat(40)).expect("hex")),
        coder: "claude".into(),
        reviewer: "codex".into(),
        max_rounds,
        budget_usd: None,
        config: Default::default(),
        flags: None,
        claimed: false,
        carrier: false,
        base_tree: None,
    })
}

fn coder(summary: &str) -> Body {
    Body::Coder(Coder {
        summary: summary.into(),
        tool: "claude".into(),
        findings_addressed: None,
        session_id: None,
        responses: vec![],
        extra_round: false,
        round: None,
    })
}

fn review(dispatch: &str, round: u32, verdict: Option<Verdict>, findings: &[&str]) -> Body {
    Body::Review(Review {
        model: None,
        effort: None,
        dispatch: dispatch.into(),
        round,
        verdict,
        outcome: if verdict.is_some() {
            "completed"
        } else {
            "died"
        }
        .into(),
        tool: "codex".into(),
        findings: findings
            .iter()
            .enumerate()
            .map(|(i, t)| Finding {
                n: i as u32 + 1,
                category: "bug".into(),
                severity: None,
                location: String::new(),
                text: (*t).into(),
            })
            .collect(),
        reviewers: vec![],
        fallback_used: false,
        snapshot: None,
        coverage_warning: None,
        error: None,
    })
}

#[test]
fn the_loop_moves_through_next_actions() {
    let mut m = Manifest::empty();
    m.apply(&rec(1, start(2)));
    assert_eq!(m.next_action, NextAction::Code);
    m.apply(&rec(2, coder("one")));
    assert_eq!(m.next_action, NextAction::Review);
    let dispatch = rec(
        3,
        Body::ReviewDispatch(ReviewDispatch {
            round: 1,
            reviewers: vec!["codex".into()],
            snapshot: crate::model::TreeId::parse(&"1".repeat(40)).expect("hex"),
            mode: "code".into(),
            again: false,
            runner: None,
            redacted: Vec::new(),
            over_budget: false,
            parallelism: None,
            carried: Vec::new(),
        }),
    );
    m.apply(&dispatch);
    assert_eq!(m.next_action, NextAction::ResumeReview);
    m.apply(&rec(
        4,
        review(&dispatch.id, 1, Some(Verdict::ChangesRequested), &["a"]),
    ));
    assert_eq!(m.next_action, NextAction::Code);
    m.apply(&rec(5, coder("two")));
    m.apply(&rec(
        6,
        review("x", 2, Some(Verdict::ChangesRequested), &["b"]),
    ));
    assert_eq!(m.next_action, NextAction::StopRoundCap);
    assert_eq!(m.rounds.len(), 4);
    assert_eq!(m.rounds[2].n, 2);
}

#[test]
fn findings_addressed_in_one_round_saturate_instead_of_overflowing() {
    // Found by the `manifest_project` fuzz target: the sum overflowed (a panic with
    // overflow checks, a wrap to a small count without).
    let addressed = |n: u32| {
        let Body::Coder(mut c) = coder("again") else {
            unreachable!("coder() builds a coder record")
        };
        c.findings_addressed = Some(n);
        Body::Coder(c)
    };
    let m = Manifest::project(&[
        rec(1, start(2)),
        rec(2, addressed(u32::MAX)),
        rec(3, addressed(7)),
    ]);
    assert_eq!(m.rounds[0].findings_addressed, Some(u32::MAX));
    assert_eq!(m.rounds[0].summaries, Some(2));
}

#[test]
fn a_second_coder_done_before_review_adds_to_the_round() {
    let m = Manifest::project(&[rec(1, start(5)), rec(2, coder("a")), rec(3, coder("b"))]);
    assert_eq!(m.rounds.len(), 1);
    assert_eq!(m.rounds[0].summaries, Some(2));
    assert_eq!(m.coder_round_for_next(), (1, false));
}

#[test]
fn a_failed_review_uses_no_round() {
    let m = Manifest::project(&[
        rec(1, start(5)),
        rec(2, coder("a")),
        rec(3, review("d", 1, None, &[])),
    ]);
    assert_eq!(m.next_action, NextAction::Review);
    assert_eq!(m.coder_round_for_next(), (1, false));
}

#[test]
fn the_same_open_findings_twice_is_a_stall() {
    let m = Manifest::project(&[
        rec(1, start(5)),
        rec(2, coder("a")),
        rec(
            3,
            review(
                "d",
                1,
                Some(Verdict::ChangesRequested),
                &["Leaks  a handle"],
            ),
        ),
        rec(4, coder("b")),
        rec(
            5,
            review("e", 2, Some(Verdict::ChangesRequested), &["leaks a handle"]),
        ),
    ]);
    assert_eq!(m.next_action, NextAction::StopStalled);
}

#[test]
fn approval_leads_to_finish_then_done() {
    let mut m = Manifest::project(&[
        rec(1, start(5)),
        rec(2, coder("a")),
        rec(3, review("d", 1, Some(Verdict::Approved), &[])),
    ]);
    assert_eq!(m.next_action, NextAction::Finish);
    assert!(check_finish(&m, Verdict::Approved, false, false).is_ok());
    m.apply(&rec(
        4,
        Body::Finish(crate::model::Finish {
            pr_final: false,
            verdict: Verdict::Approved,
            override_: false,
            pr: None,
            accept_partial: false,
        }),
    ));
    assert_eq!(m.next_action, NextAction::Done);
    assert!(check_coder_done(&m, false).is_err());
}

#[test]
fn round_cap_refuses_coder_done_without_extra_round() {
    let m = Manifest::project(&[
        rec(1, start(1)),
        rec(2, coder("a")),
        rec(3, review("d", 1, Some(Verdict::ChangesRequested), &["x"])),
    ]);
    let refusal = check_coder_done(&m, false).expect_err("capped");
    assert!(refusal.to_string().contains("round cap"));
    assert!(check_coder_done(&m, true).is_ok());
}

#[test]
fn review_needs_an_unreviewed_coder_round() {
    let m = Manifest::project(&[rec(1, start(5))]);
    assert!(check_review(&m, false).is_err());
    let m = Manifest::project(&[
        rec(1, start(5)),
        rec(2, coder("a")),
        rec(3, review("d", 1, Some(Verdict::ChangesRequested), &["x"])),
    ]);
    assert!(check_review(&m, false).is_err());
    assert!(check_review(&m, true).is_ok());
}

#[test]
fn concurrent_records_are_flagged_not_dropped() {
    let m = Manifest::project(&[rec(1, start(5)), rec(2, coder("a")), rec(2, coder("b"))]);
    assert_eq!(m.records, 3);
    assert_eq!(m.conflicts.len(), 1);
    assert_eq!(m.rounds[0].summaries, Some(2));
}

#[test]
fn manifest_round_trips_and_keeps_unknown_fields() {
    let m = Manifest::project(&[rec(1, start(5)), rec(2, coder("a"))]);
    let mut value = serde_json::to_value(&m).expect("serializes");
    value["from_the_future"] = serde_json::json!({"x": 1});
    let back: Manifest = serde_json::from_value(value).expect("parses");
    assert_eq!(back.extra["from_the_future"]["x"], 1);
    assert_eq!(back.rounds, m.rounds);
}

#[test]
fn next_action_values_are_the_documented_ones() {
    let values: Vec<_> = NextAction::ALL.iter().map(|a| a.as_str()).collect();
    for a in NextAction::ALL {
        assert_eq!(serde_json::to_value(a).expect("ser"), a.as_str());
    }
    assert_eq!(
        values,
        [
            "code",
            "review",
            "finish",
            "stop:round-cap",
            "stop:budget",
            "stop:stalled",
            "stop:partial",
            "review:pr",
            "resume:review",
            "wait:review",
            "done"
        ]
    );
}

#[test]
fn the_runs_reviewer_is_the_one_that_ran_except_in_a_legacy_run() {
    let ran = |tool: &str| {
        let mut body = review("d", 1, Some(Verdict::Approved), &[]);
        if let Body::Review(r) = &mut body {
            r.tool = tool.into();
        }
        body
    };
    let new_run = |flags: Vec<String>| {
        let mut body = start(3);
        if let Body::Start(s) = &mut body {
            s.flags = Some(flags);
        }
        body
    };
    let mut m = Manifest::empty();
    m.apply(&rec(1, new_run(vec![])));
    assert_eq!(m.reviewer, "codex");
    m.apply(&rec(2, coder("one")));
    m.apply(&rec(3, ran("command:approve.sh")));
    assert_eq!(m.reviewer, "command:approve.sh");
    m.apply(&rec(
        4,
        Body::Set(crate::model::SetSetting {
            key: "reviewer".into(),
            value: Some("builtin".into()),
        }),
    ));
    assert_eq!(m.reviewer, "builtin", "a later set names the next reviewer");

    // A run owning the reviewer by flag still owns it in run_settings.
    let mut m = Manifest::empty();
    m.apply(&rec(1, new_run(vec!["reviewer".into()])));
    m.apply(&rec(2, coder("one")));
    m.apply(&rec(3, ran("claude")));
    assert_eq!(m.reviewer, "claude");
    let owned = crate::model::settings::effective(&m, &NoConfig);
    assert_eq!(owned[0].value, "codex");

    // A run from before settings followed configuration keeps its reviewer setting here.
    let mut m = Manifest::empty();
    m.apply(&rec(1, start(3)));
    m.apply(&rec(2, coder("one")));
    m.apply(&rec(3, ran("claude")));
    assert_eq!(m.reviewer, "codex");
}

/// Configuration that configures nothing.
struct NoConfig;

impl crate::model::settings::Configuration for NoConfig {
    fn value(&self, setting: crate::model::Setting) -> serde_json::Value {
        (setting.spec().default)()
    }
    fn configures(&self, _: crate::model::Setting) -> bool {
        false
    }
}

#[test]
fn a_stored_manifest_reads_back_as_written_even_its_long_numbers() {
    // fuzz/manifest_stored's find: an unknown key holding a number with a long mantissa came
    // back an ulp off after an encode and a decode.
    let text = r#"{"v":1,"run_id":"20261202-043441-2897e7","task":"seed","cwd":"/tmp/x","branch":"master","coder":"claude","reviewer":"builtin","max_rounds":5,"budget_usd":0.1,"x":111111111111111111111111111111111111111111111111111111111111111111111111111111111110.8,"created_at":"2026-12-02T04:34:41Z","rounds":[],"reviewer_fallback":false,"outcome":{"verdict":null,"rounds":0,"override":false},"pr":null,"next_action":"code","conflicts":[],"records":1,"last_seq":1}"#;
    let manifest: Manifest = serde_json::from_str(text).expect("a manifest");
    let again = serde_json::to_vec(&manifest).expect("encodes");
    let back: Manifest = serde_json::from_slice(&again).expect("decodes");
    assert_eq!(back, manifest);
}

#[test]
fn the_stored_projection_keeps_the_newest_rounds_and_answers_as_the_whole_one() {
    let mut records = vec![rec(1, start(100))];
    let mut seq = 1;
    for round in 1..=40u32 {
        seq += 1;
        records.push(rec(seq, coder(&format!("round {round}"))));
        // A review that failed, then the one that decided the round: the same findings every
        // round (a stalled loop), an approval at round 3.
        seq += 1;
        records.push(rec(seq, review(&format!("f{round}"), round, None, &[])));
        seq += 1;
        let verdict = match round {
            3 => Verdict::Approved,
            _ => Verdict::ChangesRequested,
        };
        records.push(rec(
            seq,
            review(&format!("d{round}"), round, Some(verdict), &["same"]),
        ));
    }
    let bounded = Manifest::project(&records);
    let mut whole = Manifest::unbounded();
    for record in &records {
        whole.apply(record);
    }
    assert_eq!(whole.rounds.len(), 120);
    // The newest 16 rounds: a coder entry and two reviewer entries each.
    assert_eq!(bounded.rounds.len(), 48, "{:?}", bounded.rounds);
    assert_eq!(bounded.rounds_folded, 120 - 48);
    assert_eq!(bounded.rounds.first().map(|e| e.n), Some(25));
    assert_eq!(bounded.rounds, whole.rounds[72..]);
    for m in [&bounded, &whole] {
        assert_eq!(m.current_coder_round(), Some(40));
    }
    assert_eq!(bounded.last_verdict(), whole.last_verdict());
    assert!(bounded.is_stalled() && whole.is_stalled());
    assert_eq!(bounded.next_action, whole.next_action);
    // Stored and read back, the bound holds (the window is not stored).
    let stored: Manifest =
        serde_json::from_slice(&serde_json::to_vec(&bounded).expect("json")).expect("read");
    assert_eq!(stored, bounded);
}
