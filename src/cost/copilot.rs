//! GitHub Copilot CLI session events (`${COPILOT_HOME:-~/.copilot}/session-state/<id>/
//! events.jsonl`): each `session.usage_record` event carries one model call's `usage`
//! (model, `inputTokens`, `outputTokens`, `cacheReadTokens`, `cacheWriteTokens`). Read into
//! Claude-shaped entries keyed by the event id, so [`super::claude::merge`] counts a record
//! once. Pure over bytes.
//!
//! Copilot CLI 1.0.102 writes `cost: 0` for a bring-your-own-key provider and bills premium
//! requests otherwise, so its own figure is never the list price: the tokens are priced from
//! the shipped table. `inputTokens` is taken to include `cacheReadTokens` (the OpenAI-style
//! prompt count its chat-completions providers report); the fixture's calls cached nothing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claude::{ClaudeScan, LoggedRequest};
use super::scan::Markers;
use super::tokens::TokenCounts;
use crate::util::time::Timestamp;

/// One Copilot events file's scan: Claude-shaped entries (its cache format is Claude's too).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CopilotScan(pub ClaudeScan);

/// The lines a Copilot session is priced from.
pub(crate) fn markers() -> Markers {
    Markers::new(&[r#""session.usage_record""#])
}

impl CopilotScan {
    /// Appends the entries of the complete lines in `buf`; `base` is `buf`'s offset.
    pub(crate) fn scan(&mut self, markers: &Markers, buf: &[u8], base: u64) {
        self.0.scan_json_lines(markers, buf, base, |event| {
            request_of(event).into_iter().collect()
        });
    }
}

/// A `session.usage_record` event's request: key, time, model and tokens.
fn request_of(event: &Value) -> Option<LoggedRequest<'_>> {
    if event["type"] != "session.usage_record" {
        return None;
    }
    let u = event["data"].get("usage")?;
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    let cached = n("cacheReadTokens");
    Some(LoggedRequest {
        key: event["id"].as_str().map(|id| format!("m:{id}")),
        at: event["timestamp"].as_str().and_then(Timestamp::parse),
        model: u["model"].as_str().unwrap_or("<unknown>"),
        tokens: TokenCounts {
            input: n("inputTokens").saturating_sub(cached),
            output: n("outputTokens"),
            cached_input: cached,
            cache_write_5m: n("cacheWriteTokens"),
            ..TokenCounts::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session Copilot CLI 1.0.102 wrote (a review, then its resume in the same session)
    /// against a loopback server in its offline BYOK mode.
    const LOG: &[u8] = include_bytes!(
        "../../fixtures/agent-logs/copilot/session-state/f85f61c9-4d72-4eaf-a8a1-da3e617118ff/events.jsonl"
    );

    #[test]
    fn each_usage_record_is_one_keyed_request() {
        let mut scan = CopilotScan::default();
        scan.scan(&markers(), LOG, 0);
        let entries = &scan.0.entries;
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_ne!(entries[0].key, entries[1].key);
        assert!(
            entries
                .iter()
                .all(|e| e.tokens.input == 1000 && e.tokens.output == 100)
        );
        assert_eq!(scan.0.models, ["gpt-5.4"]);
        assert_eq!(scan.0.skipped_lines, 0);
    }
}
