//! Codex rollouts (`sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`): the per-file scan
//! (`turn_context` → model and service tier, `token_count` → cumulative totals) and the
//! session walk that turns cumulative totals into per-request deltas. Pure over bytes.
//!
//! Codex reports `input_tokens` including `cached_input_tokens`, and `output_tokens`
//! including `reasoning_output_tokens`; the walk splits input into uncached + cached and
//! keeps reasoning as information only. A `turn_context` whose `service_tier` is `fast` or
//! `priority` marks the following requests as billed at the model's `fast_multiplier`.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::scan::Markers;
use super::tokens::TokenCounts;
use crate::util::time::{TimeWindow, Timestamp};

/// Codex's cumulative counters, in log order: input, cached input, output, reasoning.
pub(crate) type Counters = [u64; 4];

/// What a rollout line contributes, in file order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum CodexEvent {
    /// A `turn_context`: the model (index into [`CodexScan::models`]) and whether the turn
    /// runs on the fast / priority tier.
    Context { model: Option<u32>, fast: bool },
    /// A `token_count` with usage: the cumulative total, and the last request's usage.
    Usage {
        at: Option<Timestamp>,
        total: Option<Counters>,
        last: Option<Counters>,
    },
}

/// What one rollout file contributes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CodexScan {
    pub models: Vec<String>,
    pub events: Vec<CodexEvent>,
    pub skipped_lines: u64,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    payload: Option<Payload<'a>>,
}

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    service_tier: Option<Cow<'a, str>>,
    #[serde(default)]
    info: Option<Info>,
}

#[derive(Deserialize)]
struct Info {
    #[serde(default)]
    total_token_usage: Option<Usage>,
    #[serde(default)]
    last_token_usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    cached_input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    reasoning_output_tokens: u64,
}

impl Usage {
    fn counters(&self) -> Counters {
        [
            self.input_tokens,
            self.cached_input_tokens,
            self.output_tokens,
            self.reasoning_output_tokens,
        ]
    }
}

/// The markers of the lines a rollout is priced from.
pub(crate) fn markers() -> Markers {
    Markers::new(&[r#""token_count""#, r#""turn_context""#])
}

impl CodexScan {
    /// Appends the events of the complete lines in `buf`.
    pub(crate) fn scan(&mut self, markers: &Markers, buf: &[u8]) {
        markers.for_each_line(buf, |line, _| {
            if line.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            let parsed = std::str::from_utf8(line)
                .ok()
                .and_then(|text| serde_json::from_str::<Line<'_>>(text).ok());
            let Some(parsed) = parsed else {
                self.skipped_lines += 1;
                return;
            };
            let Some(payload) = parsed.payload else {
                return;
            };
            match (parsed.kind.as_deref(), payload.kind.as_deref()) {
                (Some("turn_context"), _) => {
                    let model = payload.model.map(|m| self.intern(&m));
                    let fast = matches!(payload.service_tier.as_deref(), Some("fast" | "priority"));
                    self.events.push(CodexEvent::Context { model, fast });
                }
                (Some("event_msg"), Some("token_count")) => {
                    let Some(info) = payload.info else { return };
                    let total = info.total_token_usage.as_ref().map(Usage::counters);
                    let last = info.last_token_usage.as_ref().map(Usage::counters);
                    if total.is_some() || last.is_some() {
                        let at = parsed.timestamp.as_deref().and_then(Timestamp::parse);
                        self.events.push(CodexEvent::Usage { at, total, last });
                    }
                }
                _ => {}
            }
        });
    }

    fn intern(&mut self, model: &str) -> u32 {
        match self.models.iter().position(|m| m == model) {
            Some(i) => i as u32,
            None => {
                self.models.push(model.to_owned());
                (self.models.len() - 1) as u32
            }
        }
    }
}

/// One priced request after the walk.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request<'a> {
    /// `None` when no `turn_context` named a model before the usage.
    pub model: Option<&'a str>,
    pub fast: bool,
    pub tokens: TokenCounts,
}

/// Walks the rollouts of one session in order (oldest file first) and yields each request's
/// usage inside `window`.
///
/// Usage is the difference between consecutive cumulative totals. A total already seen in
/// the session is a re-emission (or a resumed file replaying history) and counts nothing.
/// A total smaller than the previous one means the counters restarted (a new process on a
/// resumed session): that event's own usage (`last_token_usage`, else the total) counts.
pub(crate) fn walk<'a>(scans: &[&'a CodexScan], window: &TimeWindow) -> Vec<Request<'a>> {
    let mut seen: HashSet<Counters> = HashSet::new();
    let mut previous: Counters = [0; 4];
    let mut model: Option<&'a str> = None;
    let mut fast = false;
    let mut out = Vec::new();
    for scan in scans {
        for event in &scan.events {
            match event {
                CodexEvent::Context { model: m, fast: f } => {
                    if let Some(m) = m {
                        model = scan.models.get(*m as usize).map(String::as_str);
                    }
                    fast = *f;
                }
                CodexEvent::Usage { at, total, last } => {
                    let delta = match (total, last) {
                        (Some(total), last) => {
                            if !seen.insert(*total) {
                                continue;
                            }
                            let grew = total.iter().zip(&previous).all(|(t, p)| t >= p);
                            let delta = if grew {
                                std::array::from_fn(|k| total[k] - previous[k])
                            } else {
                                last.unwrap_or(*total)
                            };
                            previous = *total;
                            delta
                        }
                        (None, Some(last)) => *last,
                        (None, None) => continue,
                    };
                    if delta == [0; 4] || !window.contains(*at) {
                        continue;
                    }
                    let [input, cached, output, reasoning] = delta;
                    // Cached input is a subset of input; never let a corrupt line go negative.
                    let cached = cached.min(input);
                    out.push(Request {
                        model,
                        fast,
                        tokens: TokenCounts {
                            input: input - cached,
                            cached_input: cached,
                            output,
                            reasoning_output: reasoning,
                            ..TokenCounts::default()
                        },
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token_count(ts: &str, total: Counters, last: Counters) -> String {
        let u = |c: Counters| {
            format!(
                r#"{{"input_tokens":{},"cached_input_tokens":{},"output_tokens":{},"reasoning_output_tokens":{},"total_tokens":{}}}"#,
                c[0],
                c[1],
                c[2],
                c[3],
                c[0] + c[2]
            )
        };
        format!(
            r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{},"last_token_usage":{}}}}}}}"#,
            u(total),
            u(last)
        )
    }

    fn context(model: &str, tier: &str) -> String {
        format!(
            r#"{{"timestamp":"2026-09-01T11:00:00Z","type":"turn_context","payload":{{"cwd":"/x","model":"{model}"{tier}}}}}"#
        )
    }

    fn scan(lines: &[String]) -> CodexScan {
        let mut s = CodexScan::default();
        s.scan(&markers(), lines.join("\n").as_bytes());
        s
    }

    fn outputs(requests: &[Request<'_>]) -> Vec<(Option<String>, u64, u64, u64, bool)> {
        requests
            .iter()
            .map(|r| {
                (
                    r.model.map(str::to_owned),
                    r.tokens.input,
                    r.tokens.cached_input,
                    r.tokens.output,
                    r.fast,
                )
            })
            .collect()
    }

    #[test]
    fn deltas_of_cumulative_totals() {
        let s = scan(&[
            context("gpt-5.2", ""),
            r#"{"timestamp":"2026-09-01T11:00:01Z","type":"event_msg","payload":{"type":"token_count","info":null}}"#.to_owned(),
            token_count("2026-09-01T11:00:02Z", [100, 40, 10, 5], [100, 40, 10, 5]),
            token_count("2026-09-01T11:00:03Z", [100, 40, 10, 5], [100, 40, 10, 5]),
            context("gpt-5.2-codex", r#","service_tier":"priority""#),
            token_count("2026-09-01T11:00:04Z", [300, 190, 30, 9], [200, 150, 20, 4]),
        ]);
        let got = walk(&[&s], &TimeWindow::default());
        assert_eq!(
            outputs(&got),
            vec![
                (Some("gpt-5.2".into()), 60, 40, 10, false),
                (Some("gpt-5.2-codex".into()), 50, 150, 20, true),
            ]
        );
        assert_eq!(got[1].tokens.reasoning_output, 4);
    }

    #[test]
    fn resumed_files_replaying_totals_count_once_and_restarts_count_their_own_usage() {
        let first = scan(&[
            context("gpt-5", ""),
            token_count("2026-09-01T11:00:02Z", [100, 0, 10, 0], [100, 0, 10, 0]),
            token_count("2026-09-01T11:00:03Z", [250, 50, 30, 0], [150, 50, 20, 0]),
        ]);
        // A resumed file replays both totals, then continues; a third starts from zero.
        let second = scan(&[
            token_count("2026-09-01T11:00:02Z", [100, 0, 10, 0], [100, 0, 10, 0]),
            token_count("2026-09-01T11:00:03Z", [250, 50, 30, 0], [150, 50, 20, 0]),
            token_count("2026-09-02T09:00:00Z", [400, 100, 35, 0], [150, 50, 5, 0]),
        ]);
        let third = scan(&[token_count(
            "2026-09-03T09:00:00Z",
            [70, 20, 7, 0],
            [70, 20, 7, 0],
        )]);
        let got = walk(&[&first, &second, &third], &TimeWindow::default());
        let sum = got.iter().fold(TokenCounts::default(), |mut acc, r| {
            acc.add(&r.tokens);
            acc
        });
        assert_eq!(
            (sum.input + sum.cached_input, sum.cached_input, sum.output),
            (470, 120, 42)
        );
        assert!(
            got.iter().all(|r| r.model == Some("gpt-5")),
            "model carries across files"
        );
    }

    #[test]
    fn window_filters_by_event_time_after_the_delta() {
        let s = scan(&[
            context("gpt-5", ""),
            token_count("2026-09-01T10:00:00Z", [100, 0, 10, 0], [100, 0, 10, 0]),
            token_count("2026-09-01T12:00:00Z", [150, 0, 12, 0], [50, 0, 2, 0]),
        ]);
        let window = TimeWindow {
            from: Timestamp::parse("2026-09-01T11:00:00Z"),
            to: None,
        };
        assert_eq!(
            outputs(&walk(&[&s], &window)),
            vec![(Some("gpt-5".into()), 50, 0, 2, false)]
        );
    }

    #[test]
    fn usage_before_any_model_and_bad_lines() {
        let mut s = CodexScan::default();
        let text = format!(
            "{}\n{{\"type\":\"turn_context\",\"payload\":\n{}\n",
            token_count("2026-09-01T10:00:00Z", [10, 20, 1, 0], [10, 20, 1, 0]),
            r#"{"type":"response_item","payload":{"type":"message","content":[{"text":"token_count"}]}}"#
        );
        s.scan(&markers(), text.as_bytes());
        assert_eq!(s.skipped_lines, 1);
        let got = walk(&[&s], &TimeWindow::default());
        // cached > input in a corrupt line is clamped to input.
        assert_eq!(outputs(&got), vec![(None, 0, 10, 1, false)]);
    }
}
