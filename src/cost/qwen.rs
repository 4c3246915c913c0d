//! Qwen Code session logs (`${QWEN_HOME:-~/.qwen}/projects/<cwd>/chats/<id>.jsonl`): each
//! `assistant` record carries its request's `usageMetadata` (Gemini-style counts:
//! `promptTokenCount` includes `cachedContentTokenCount`; thoughts are billed as output) and
//! model. Read into Claude-shaped entries keyed by the record's uuid, so
//! [`super::claude::merge`] counts a replayed record once. Pure over bytes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claude::{ClaudeScan, LoggedRequest};
use super::scan::Markers;
use super::tokens::TokenCounts;
use crate::util::time::Timestamp;

/// One Qwen log file's scan: Claude-shaped entries (its cache format is Claude's too).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct QwenScan(pub ClaudeScan);

/// The lines a Qwen session is priced from.
pub(crate) fn markers() -> Markers {
    Markers::new(&[r#""usageMetadata""#])
}

impl QwenScan {
    /// Appends the entries of the complete lines in `buf`; `base` is `buf`'s offset.
    pub(crate) fn scan(&mut self, markers: &Markers, buf: &[u8], base: u64) {
        self.0.scan_json_lines(markers, buf, base, |record| {
            request_of(record).into_iter().collect()
        });
    }
}

/// An `assistant` record's request: key, time, model and tokens.
fn request_of(record: &Value) -> Option<LoggedRequest<'_>> {
    if record["type"] != "assistant" {
        return None;
    }
    let u = record.get("usageMetadata")?;
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    let cached = n("cachedContentTokenCount");
    Some(LoggedRequest {
        key: record["uuid"].as_str().map(|id| format!("m:{id}")),
        at: record["timestamp"].as_str().and_then(Timestamp::parse),
        model: record["model"].as_str().unwrap_or("<unknown>"),
        tokens: TokenCounts {
            input: n("promptTokenCount").saturating_sub(cached),
            output: n("candidatesTokenCount") + n("thoughtsTokenCount"),
            cached_input: cached,
            reasoning_output: n("thoughtsTokenCount"),
            ..TokenCounts::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session Qwen Code 0.24.4 wrote (one review) against a loopback server.
    const LOG: &[u8] = include_bytes!(
        "../../fixtures/agent-logs/qwen/projects/-tmp-agx-qw2-work/chats/868a5eda-455c-4d69-8708-6362070c125a.jsonl"
    );

    #[test]
    fn each_assistant_record_is_one_keyed_request() {
        let mut scan = QwenScan::default();
        scan.scan(&markers(), LOG, 0);
        let entries = &scan.0.entries;
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert_eq!(entries[0].tokens.input, 1000);
        assert_eq!(entries[0].tokens.output, 100);
        assert!(entries[0].key.is_some());
        assert_eq!(scan.0.models, ["qwen3.7-max"]);
    }
}
