//! Gemini CLI session logs (`${GEMINI_CLI_HOME:-~}/.gemini/tmp/<project>/chats/
//! session-<time>-<id8>.jsonl`): each `gemini` message record carries its request's tokens
//! and model; a `$set` of `messages` (the history a resumed session's new file starts with)
//! carries the same records again. Read into Claude-shaped entries keyed by the message id,
//! so [`super::claude::merge`] counts a record replayed by a resume once. Pure over bytes.
//!
//! Gemini CLI 0.61.0 writes `tokens: {input, output, cached, thoughts, tool, total}`, where
//! `input` is the uncached prompt and `cached` the cached part (priced as cached input), and
//! thoughts are billed as output.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claude::{ClaudeScan, LoggedRequest};
use super::scan::Markers;
use super::tokens::TokenCounts;
use crate::util::time::Timestamp;

/// One Gemini log file's scan: Claude-shaped entries (its cache format is Claude's too).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct GeminiScan(pub ClaudeScan);

/// The lines a Gemini session is priced from.
pub(crate) fn markers() -> Markers {
    Markers::new(&[r#""tokens""#])
}

/// The first line of a Gemini session log names its session: `{"sessionId": …}`.
pub(crate) fn session_of_first_line(line: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(line).ok()?;
    v["sessionId"].as_str().map(str::to_owned)
}

impl GeminiScan {
    /// Appends the entries of the complete lines in `buf`; `base` is `buf`'s offset.
    pub(crate) fn scan(&mut self, markers: &Markers, buf: &[u8], base: u64) {
        self.0.scan_json_lines(markers, buf, base, |v| {
            let records: Vec<&Value> = match v["$set"]["messages"].as_array() {
                Some(history) => history.iter().collect(),
                None => vec![v],
            };
            records.into_iter().filter_map(request_of).collect()
        });
    }
}

/// A `gemini` message record's request: key, time, model and tokens.
fn request_of(record: &Value) -> Option<LoggedRequest<'_>> {
    if record["type"] != "gemini" {
        return None;
    }
    let t = record.get("tokens")?;
    let n = |k: &str| t[k].as_u64().unwrap_or(0);
    Some(LoggedRequest {
        key: record["id"].as_str().map(|id| format!("m:{id}")),
        at: record["timestamp"].as_str().and_then(Timestamp::parse),
        model: record["model"].as_str().unwrap_or("<unknown>"),
        tokens: TokenCounts {
            input: n("input"),
            output: n("output") + n("thoughts"),
            cached_input: n("cached"),
            reasoning_output: n("thoughts"),
            ..TokenCounts::default()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session Gemini CLI 0.61.0 wrote (a review, then its resume in the same file, which
    /// replays the history without tokens), against a loopback server.
    const LOG: &[u8] = include_bytes!(
        "../../fixtures/agent-logs/gemini/tmp/work/chats/session-2026-12-02T13-41-ef828987.jsonl"
    );

    #[test]
    fn each_gemini_record_is_one_keyed_request() {
        let mut scan = GeminiScan::default();
        scan.scan(&markers(), LOG, 0);
        let entries = &scan.0.entries;
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_ne!(entries[0].key, entries[1].key);
        assert!(
            entries
                .iter()
                .all(|e| e.tokens.input == 1000 && e.tokens.output == 100)
        );
        assert_eq!(scan.0.models, ["gemini-3.1-pro-preview-customtools"]);
        assert_eq!(scan.0.skipped_lines, 0);
        let first = LOG.split(|&b| b == b'\n').next().expect("a first line");
        assert_eq!(
            session_of_first_line(first).as_deref(),
            Some("ef828987-b465-461b-90de-e5269dcb0cc8")
        );
    }
}
