//! End-to-end tests of the cost API over the shared fixtures (whose dollar figures are
//! documented in `fixtures/agent-logs/README.md`) and small generated log trees.

use super::*;

const CLAUDE_ID: &str = "11111111-2222-4333-8444-555555555555";
const CODEX_ID: &str = "0199f0aa-1111-7222-8333-444455556666";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/agent-logs")
}

fn fixture_roots() -> LogRoots {
    LogRoots {
        gemini: vec![fixtures().join("gemini")],
        qwen: vec![fixtures().join("qwen")],
        copilot: vec![fixtures().join("copilot")],
        claude: vec![fixtures().join("claude")],
        codex: vec![fixtures().join("codex")],
    }
}

/// The table the fixtures' figures are computed with, as `pair.pricingFile` would apply it.
fn fixture_pricing() -> Pricing {
    Pricing::builtin_with_override_file(&fixtures().join("pricing.json")).unwrap()
}

fn model<'a>(cost: &'a SessionCost, name: &str) -> &'a ModelCost {
    cost.models.iter().find(|m| m.model == name).unwrap()
}

#[test]
fn claude_fixture_prices_to_documented_figure() {
    let cost = price_session(&fixture_roots(), CLAUDE_ID, &fixture_pricing(), None, None).unwrap();
    // README: 3 priced messages, $0.128299 (0.023589 sonnet + 0.025150 opus + 0.079560 opus fast).
    assert_eq!(cost.agent, Agent::Claude);
    assert_eq!(cost.total_usd, 0.128299);
    assert_eq!(cost.requests, 3);
    assert_eq!(model(&cost, "claude-sonnet-4-6").cost_usd, Some(0.023589));
    let opus = model(&cost, "claude-opus-4-7");
    assert_eq!(opus.cost_usd, Some(round_nano(0.025150 + 0.079560)));
    assert_eq!((opus.requests, opus.fast_requests), (2, 1));
    assert_eq!(cost.unknown_models, Vec::<String>::new());
    assert_eq!(cost.skipped_lines, 0);
    let t = cost.tokens;
    assert_eq!(
        (
            t.input,
            t.output,
            t.cache_write_5m,
            t.cache_write_1h,
            t.cache_read
        ),
        (
            3 + 5 + 2,
            412 + 230 + 100,
            1500,
            2000,
            18000 + 20000 + 21500
        )
    );
    // The claude -p result for this session reports the same dollars.
    let reported = std::fs::read_to_string(fixtures().join("claude-p-outputs.jsonl")).unwrap();
    assert!(reported.contains(r#""total_cost_usd":0.128299"#));
}

#[test]
fn sidechain_replay_counts_once_where_ccusage_counts_twice() {
    // ccusage 20.0.24 prices this fixture at $0.153449: it keys messages by
    // message.id + requestId, so the sidechain replay of msg_B (requestId req_B2) counts
    // again. We key by message.id: the replay is the same API response.
    let ours = price_session(&fixture_roots(), CLAUDE_ID, &fixture_pricing(), None, None).unwrap();
    let msg_b = 0.025150;
    assert_eq!(round_nano(ours.total_usd + msg_b), 0.153449);
    let claude_opus_tokens = model(&ours, "claude-opus-4-7").tokens;
    assert_eq!(
        claude_opus_tokens.output,
        230 + 100,
        "msg_B's 230 output tokens once"
    );
}

#[test]
fn codex_fixture_prices_to_documented_figure() {
    let cost = price_session(&fixture_roots(), CODEX_ID, &fixture_pricing(), None, None).unwrap();
    // README: input 30000, cached 25000, output 1500 → $0.034125.
    assert_eq!(cost.agent, Agent::Codex);
    assert_eq!(cost.total_usd, 0.034125);
    let t = cost.tokens;
    assert_eq!(
        (
            t.input + t.cached_input,
            t.cached_input,
            t.output,
            t.reasoning_output
        ),
        (30000, 25000, 1500, 900)
    );
    assert_eq!(
        cost.requests, 2,
        "the re-emitted unchanged total is skipped"
    );
    assert_eq!(
        model(&cost, "gpt-5.3-codex").priced_as.as_deref(),
        Some("gpt-5.3-codex")
    );
}

#[test]
fn log_bytes_price_as_the_same_single_file_does() {
    // The in-memory entry (what the fuzz targets drive) is the file path without the file.
    let cases = [
        (
            Agent::Claude,
            "claude/projects/-home-dev-my-repo/11111111-2222-4333-8444-555555555555.jsonl",
        ),
        (
            Agent::Codex,
            "codex/sessions/2026/09/01/rollout-2026-09-01T11-00-00-0199f0aa-1111-7222-8333-444455556666.jsonl",
        ),
    ];
    for (agent, file) in cases {
        let path = fixtures().join(file);
        let from_file = price_files(
            agent,
            "",
            std::slice::from_ref(&path),
            &fixture_pricing(),
            None,
            None,
        )
        .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let from_bytes = price_log_bytes(agent, &bytes, &fixture_pricing(), None);
        assert_eq!(
            SessionCost {
                files: vec![path],
                cache_stats: from_file.cache_stats,
                ..from_bytes
            },
            from_file,
            "{file}"
        );
        // A truncated last line is skipped or counted, never a panic.
        let cut = price_log_bytes(agent, &bytes[..bytes.len() - 7], &fixture_pricing(), None);
        assert!(cut.total_usd <= from_file.total_usd, "{file}");
    }
}

#[test]
fn session_ids_from_agent_outputs_find_their_logs() {
    // The ids reviewers print (codex exec --json thread.started, claude -p session_id).
    let exec = std::fs::read_to_string(fixtures().join("codex-exec-stdout.jsonl")).unwrap();
    assert!(exec.contains(&format!(r#""thread_id":"{CODEX_ID}""#)));
    let p = std::fs::read_to_string(fixtures().join("claude-p-outputs.jsonl")).unwrap();
    assert!(p.contains(&format!(r#""session_id":"{CLAUDE_ID}""#)));
    for id in [CODEX_ID, CLAUDE_ID] {
        let cost = price_session(&fixture_roots(), id, &fixture_pricing(), None, None).unwrap();
        assert_eq!(cost.files.len(), 1, "{id}");
    }
}

#[test]
fn window_counts_only_requests_inside_it() {
    let t = |s| Timestamp::parse(s);
    let cases: &[(Option<Timestamp>, Option<Timestamp>, f64)] = &[
        (None, None, 0.128299),
        (
            t("2026-09-01T10:00:10Z"),
            t("2026-09-01T10:00:59Z"),
            0.025150,
        ),
        (t("2026-09-01T10:00:00Z"), t("2026-09-01T10:00:05Z"), 0.0),
        (
            t("2026-09-01T10:00:05Z"),
            t("2026-09-01T10:00:06Z"),
            0.023589,
        ),
        (t("2026-09-01T10:01:00Z"), None, 0.079560),
        (t("2026-09-02T00:00:00Z"), None, 0.0),
    ];
    for (from, to, want) in cases {
        let window = TimeWindow {
            from: *from,
            to: *to,
        };
        let cost = price_session(
            &fixture_roots(),
            CLAUDE_ID,
            &fixture_pricing(),
            Some(window),
            None,
        )
        .unwrap();
        assert_eq!(cost.total_usd, *want, "{window:?}");
    }
}

#[test]
fn unknown_and_bad_ids_are_typed_errors() {
    let roots = fixture_roots();
    let err = price_session(&roots, "does-not-exist", &fixture_pricing(), None, None).unwrap_err();
    assert!(matches!(err, CostError::SessionNotFound { .. }));
    let text = err.to_string();
    assert!(text.contains("does-not-exist"), "{text}");
    assert!(
        text.contains("fixtures/agent-logs/claude/projects"),
        "{text}"
    );
    assert!(
        text.contains("fixtures/agent-logs/codex/sessions"),
        "{text}"
    );
    for bad in ["../../etc/passwd", "", "a/b", "x.jsonl"] {
        let err = price_session(&roots, bad, &fixture_pricing(), None, None).unwrap_err();
        assert!(matches!(err, CostError::InvalidSessionId { .. }), "{bad}");
    }
    let err = price_session(
        &LogRoots::default(),
        CLAUDE_ID,
        &fixture_pricing(),
        None,
        None,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("no log directory configured"),
        "{err}"
    );
}

/// A Claude config dir with one session: `main` lines and `subagents` files.
fn claude_tree(
    main: &[String],
    subagents: &[(&str, Vec<String>)],
) -> (tempfile::TempDir, LogRoots) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-w-repo");
    std::fs::create_dir_all(project.join("sess-1/subagents")).unwrap();
    std::fs::write(project.join("sess-1.jsonl"), main.join("\n") + "\n").unwrap();
    for (name, lines) in subagents {
        std::fs::write(
            project.join("sess-1/subagents").join(name),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    let roots = LogRoots {
        gemini: Vec::new(),
        qwen: Vec::new(),
        copilot: Vec::new(),
        claude: vec![dir.path().to_owned()],
        codex: vec![],
    };
    (dir, roots)
}

fn assistant(id: &str, req: &str, ts: &str, model: &str, input: u64, output: u64) -> String {
    format!(
        r#"{{"type":"assistant","sessionId":"sess-1","timestamp":"{ts}","requestId":"{req}","message":{{"id":"{id}","model":"{model}","content":[],"usage":{{"input_tokens":{input},"output_tokens":{output}}}}}}}"#
    )
}

#[test]
fn subagent_files_are_priced_and_replays_across_files_count_once() {
    let (_dir, roots) = claude_tree(
        &[assistant(
            "m1",
            "r1",
            "2026-09-01T10:00:00Z",
            "claude-haiku-4-5-20251001",
            1_000_000,
            0,
        )],
        &[(
            "agent-a1.jsonl",
            vec![
                assistant(
                    "m1",
                    "r9",
                    "2026-09-01T10:00:01Z",
                    "claude-haiku-4-5-20251001",
                    1_000_000,
                    0,
                ),
                assistant(
                    "m2",
                    "r2",
                    "2026-09-01T10:00:02Z",
                    "claude-haiku-4-5-20251001",
                    0,
                    1_000_000,
                ),
            ],
        )],
    );
    let cost = price_session(&roots, "sess-1", &Pricing::builtin(), None, None).unwrap();
    assert_eq!(cost.files.len(), 2);
    assert_eq!(
        cost.total_usd,
        1.0 + 5.0,
        "haiku 4.5: $1/M input once, $5/M output"
    );
    assert_eq!(cost.requests, 2);
}

#[test]
fn unknown_models_are_listed_never_silently_free() {
    let (_dir, roots) = claude_tree(
        &[
            assistant(
                "m1",
                "r1",
                "2026-09-01T10:00:00Z",
                "claude-opus-9-20300101",
                1000,
                1000,
            ),
            assistant(
                "m2",
                "r2",
                "2026-09-01T10:00:01Z",
                "claude-sonnet-4-5-20250929",
                100_000,
                0,
            ),
            "{\"type\":\"assistant\",\"message\":{\"usage\":{\"output_tokens\":1".to_owned(),
        ],
        &[],
    );
    let cost = price_session(&roots, "sess-1", &Pricing::builtin(), None, None).unwrap();
    assert_eq!(
        cost.unknown_models,
        vec!["claude-opus-9-20300101".to_owned()]
    );
    let unknown = model(&cost, "claude-opus-9-20300101");
    assert_eq!(
        (
            unknown.cost_usd,
            unknown.priced_as.as_deref(),
            unknown.tokens.output
        ),
        (None, None, 1000)
    );
    assert_eq!(cost.total_usd, 0.3);
    assert_eq!(cost.skipped_lines, 1);
    assert_eq!(
        cost.tokens.output, 1000,
        "unknown model tokens still reported"
    );
}

#[test]
fn long_context_requests_use_long_context_rates() {
    let (_dir, roots) = claude_tree(
        &[
            assistant(
                "m1",
                "r1",
                "2026-09-01T10:00:00Z",
                "claude-sonnet-4-5-20250929",
                200_000,
                0,
            ),
            assistant(
                "m2",
                "r2",
                "2026-09-01T10:00:01Z",
                "claude-sonnet-4-5-20250929",
                300_000,
                1_000,
            ),
        ],
        &[],
    );
    let cost = price_session(&roots, "sess-1", &Pricing::builtin(), None, None).unwrap();
    // 200k at $3/M (not above the threshold); the 300k request entirely at $6/M + $22.5/M.
    assert_eq!(cost.total_usd, round_nano(0.6 + 1.8 + 0.0225));
    assert_eq!(
        model(&cost, "claude-sonnet-4-5-20250929").long_context_requests,
        1
    );
}

#[test]
fn second_pricing_reads_the_cache_and_agrees() {
    let cache = tempfile::tempdir().unwrap();
    for id in [CLAUDE_ID, CODEX_ID] {
        let first = price_session(
            &fixture_roots(),
            id,
            &fixture_pricing(),
            None,
            Some(cache.path()),
        )
        .unwrap();
        let second = price_session(
            &fixture_roots(),
            id,
            &fixture_pricing(),
            None,
            Some(cache.path()),
        )
        .unwrap();
        assert_eq!(
            first.cache_stats,
            CacheStats {
                hits: 0,
                resumed: 0,
                parsed: 1
            }
        );
        assert_eq!(
            second.cache_stats,
            CacheStats {
                hits: 1,
                resumed: 0,
                parsed: 0
            }
        );
        assert_eq!(
            first,
            SessionCost {
                cache_stats: first.cache_stats,
                ..second
            }
        );
    }
}

#[test]
fn an_append_that_grows_a_seen_message_replaces_it_after_a_resume() {
    let haiku = "claude-haiku-4-5-20251001";
    let (dir, roots) = claude_tree(
        &[
            assistant("m1", "r1", "2026-09-01T10:00:00Z", haiku, 0, 1_000),
            assistant("m2", "r2", "2026-09-01T10:00:01Z", haiku, 0, 2_000),
        ],
        &[],
    );
    let cache = tempfile::tempdir().unwrap();
    let price = || {
        price_session(
            &roots,
            "sess-1",
            &Pricing::builtin(),
            None,
            Some(cache.path()),
        )
        .unwrap()
    };
    let outputs = |cost: &SessionCost| (cost.tokens.output, cost.requests, cost.cache_stats);
    let stats = |hits, resumed, parsed| CacheStats {
        hits,
        resumed,
        parsed,
    };
    assert_eq!(outputs(&price()), (3_000, 2, stats(0, 0, 1)));
    assert_eq!(outputs(&price()), (3_000, 2, stats(1, 0, 0)));
    // m1 streams on: a later line of the same message carries the final, higher count; a
    // lower one (a replay of an early line) changes nothing.
    let main = dir.path().join("projects/-w-repo/sess-1.jsonl");
    let append = |lines: &[String]| {
        use std::io::Write as _;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&main)
            .unwrap();
        file.write_all((lines.join("\n") + "\n").as_bytes())
            .unwrap();
    };
    append(&[
        assistant("m1", "r1", "2026-09-01T10:00:05Z", haiku, 0, 7_000),
        assistant("m3", "r3", "2026-09-01T10:00:06Z", haiku, 0, 500),
    ]);
    assert_eq!(outputs(&price()), (9_500, 3, stats(0, 1, 0)));
    append(&[assistant("m1", "r1", "2026-09-01T10:00:07Z", haiku, 0, 10)]);
    assert_eq!(outputs(&price()), (9_500, 3, stats(0, 1, 0)));
    // The same figures as pricing everything from scratch.
    let fresh = price_session(&roots, "sess-1", &Pricing::builtin(), None, None).unwrap();
    let again = price();
    assert_eq!(outputs(&again), (9_500, 3, stats(1, 0, 0)));
    assert_eq!(
        fresh,
        SessionCost {
            cache_stats: fresh.cache_stats,
            ..again
        }
    );
}

#[test]
fn a_remembered_cost_follows_the_window_and_the_price_table() {
    let haiku = "claude-haiku-4-5-20251001";
    let (dir, roots) = claude_tree(
        &[
            assistant("m1", "r1", "2026-09-01T10:00:00Z", haiku, 1_000_000, 0),
            assistant("m2", "r2", "2026-09-01T11:00:00Z", haiku, 1_000_000, 0),
        ],
        &[],
    );
    let cache = tempfile::tempdir().unwrap();
    let price = |pricing: &Pricing, window: Option<TimeWindow>| {
        price_session(&roots, "sess-1", pricing, window, Some(cache.path()))
            .unwrap()
            .total_usd
    };
    let builtin = Pricing::builtin();
    let late = TimeWindow {
        from: Timestamp::parse("2026-09-01T10:30:00Z"),
        to: None,
    };
    assert_eq!(price(&builtin, None), 2.0);
    assert_eq!(price(&builtin, Some(late)), 1.0);
    assert_eq!(price(&builtin, None), 2.0);
    let dearer = builtin.clone().with_overrides(
        Pricing::from_json(
            r#"{"models":{"claude-haiku-4-5":{"input":3,"output":15,"cache_write_5m":3.75,"cache_write_1h":6,"cache_read":0.3}}}"#,
            "test",
        )
        .unwrap(),
    );
    assert_eq!(price(&dearer, None), 6.0);
    assert_eq!(price(&builtin, Some(late)), 1.0);
    // A subagent log that appears later is priced with the session.
    std::fs::write(
        dir.path()
            .join("projects/-w-repo/sess-1/subagents/agent-b.jsonl"),
        assistant("m3", "r3", "2026-09-01T11:30:00Z", haiku, 1_000_000, 0) + "\n",
    )
    .unwrap();
    assert_eq!(price(&builtin, None), 3.0);
    assert_eq!(price(&builtin, Some(late)), 2.0);
}

#[test]
fn json_shape_for_cost_session() {
    let cost = price_session(&fixture_roots(), CODEX_ID, &fixture_pricing(), None, None).unwrap();
    let json = serde_json::to_value(&cost).unwrap();
    for key in [
        "session_id",
        "agent",
        "total_usd",
        "tokens",
        "models",
        "unknown_models",
        "skipped_lines",
        "files",
    ] {
        assert!(json.get(key).is_some(), "{key} in {json}");
    }
    assert_eq!(json["agent"], "codex");
    assert_eq!(json["total_usd"], 0.034125);
    for key in [
        "input",
        "output",
        "cache_write_5m",
        "cache_write_1h",
        "cache_read",
        "cached_input",
    ] {
        assert!(json["tokens"].get(key).is_some(), "tokens.{key}");
    }
    assert_eq!(json["models"][0]["model"], "gpt-5.3-codex");
    assert!(json.get("cache_stats").is_none());
    let back: SessionCost = serde_json::from_value(json).unwrap();
    let cost = SessionCost {
        cache_stats: CacheStats::default(),
        ..cost
    };
    assert_eq!(back, cost);
}

#[test]
fn a_session_with_nothing_priced_has_no_dollar_figure_in_json() {
    let line = |model: &str| {
        format!(
            r#"{{"type":"assistant","timestamp":"2026-09-01T10:00:00.000Z","requestId":"r-{model}","message":{{"id":"m-{model}","model":"{model}","usage":{{"input_tokens":10,"output_tokens":20}}}}}}"#
        )
    };
    let pricing = Pricing::builtin();
    let unpriced = price_log_bytes(
        Agent::Claude,
        format!("{}\n", line("claude-opus-9")).as_bytes(),
        &pricing,
        None,
    );
    assert_eq!(unpriced.unknown_models, ["claude-opus-9"]);
    let json = serde_json::to_value(&unpriced).unwrap();
    assert_eq!(json["total_usd"], serde_json::Value::Null, "{json}");
    assert_eq!(json["tokens"]["output"], 20);
    let back: SessionCost = serde_json::from_value(json).unwrap();
    assert_eq!(back, unpriced, "a remembered cost reads back");
    let mixed = price_log_bytes(
        Agent::Claude,
        format!("{}\n{}\n", line("claude-opus-9"), line("claude-opus-4-8")).as_bytes(),
        &pricing,
        None,
    );
    let json = serde_json::to_value(&mixed).unwrap();
    assert_eq!(json["total_usd"], 0.00055, "the priced part: {json}");
}

#[test]
fn budget_levels() {
    let cases: &[(f64, Option<f64>, f64, Option<Level>)] = &[
        (0.0, None, 0.8, None),
        (100.0, None, 0.8, None),
        (0.79, Some(1.0), 0.8, None),
        (0.8, Some(1.0), 0.8, Some(Level::Warn)),
        (0.99, Some(1.0), 0.8, Some(Level::Warn)),
        (1.0, Some(1.0), 0.8, Some(Level::Alert)),
        (5.0, Some(1.0), 0.8, Some(Level::Alert)),
        (0.0, Some(0.0), 0.8, Some(Level::Alert)),
        (0.5, Some(1.0), 0.5, Some(Level::Warn)),
        (f64::NAN, Some(1.0), 0.8, None),
        (1.0, Some(f64::INFINITY), 0.8, None),
    ];
    for (spent, limit, ratio, want) in cases {
        assert_eq!(
            budget_level(*spent, *limit, *ratio),
            *want,
            "{spent} {limit:?} {ratio}"
        );
    }
    assert_eq!(
        serde_json::to_string(&Some(Level::Warn)).unwrap(),
        "\"warn\""
    );
}

/// A Gemini CLI 0.61.0 session (a review and its resume, written against a loopback server)
/// priced from its own log: two requests of 1000 in / 100 out on
/// gemini-3.1-pro-preview-customtools at $2 / $12 per Mtok.
#[test]
fn a_gemini_session_is_priced_from_its_log() {
    let cost = price_session(
        &fixture_roots(),
        "ef828987-b465-461b-90de-e5269dcb0cc8",
        &Pricing::builtin(),
        None,
        None,
    )
    .expect("found");
    assert_eq!(cost.agent, Agent::Gemini);
    assert_eq!(cost.requests, 2);
    assert_eq!(cost.tokens.input, 2000);
    assert_eq!(cost.tokens.output, 200);
    let expected = 2.0 * (1000.0 * 2.0 + 100.0 * 12.0) / 1e6;
    assert!((cost.total_usd - expected).abs() < 1e-9, "{cost:?}");
    assert!(cost.unknown_models.is_empty(), "{cost:?}");
    // The other session of the same directory is not this one.
    let other = price_session(
        &fixture_roots(),
        "4de6bdb4-e1f8-41da-ad07-20218285a17c",
        &Pricing::builtin(),
        None,
        None,
    )
    .expect("found");
    assert_eq!(other.requests, 1);
}

/// A Qwen Code 0.24.4 session (one review, written against a loopback server) priced from
/// its own log: 1000 in / 100 out on qwen3.7-max.
#[test]
fn a_qwen_session_is_priced_from_its_log() {
    let cost = price_session(
        &fixture_roots(),
        "868a5eda-455c-4d69-8708-6362070c125a",
        &Pricing::builtin(),
        None,
        None,
    )
    .expect("found");
    assert_eq!(cost.agent, Agent::Qwen);
    assert_eq!(cost.requests, 1);
    let expected = (1000.0 * 1.714 + 100.0 * 5.142) / 1e6;
    assert!((cost.total_usd - expected).abs() < 1e-9, "{cost:?}");
}
