//! Rendering shared by several commands' reports (what a sync moved), so no command file
//! imports another.

use serde_json::{Value, json};

pub use crate::render::common::next_step;
use crate::store::{Counts, Integration};

/// `runs` as JSON: how many runs each kind of merge touched.
pub fn counts_json(counts: &Counts) -> Value {
    json!({
        "created": counts.created,
        "fast_forwarded": counts.fast_forwarded,
        "merged": counts.merged,
        "unchanged": counts.unchanged,
        "local_ahead": counts.local_ahead,
    })
}

/// What happened to `refs/notes/pair`, as JSON (null: the remote has no notes).
pub fn integration_name(integration: Option<Integration>) -> Value {
    match integration {
        None => Value::Null,
        Some(Integration::Unchanged) => "unchanged".into(),
        Some(Integration::LocalAhead) => "local_ahead".into(),
        Some(Integration::Created) => "created".into(),
        Some(Integration::FastForwarded) => "fast_forwarded".into(),
        Some(Integration::Merged) => "merged".into(),
    }
}

/// One line for humans: what moved, or that nothing did.
pub fn runs_phrase(counts: &Counts, notes: Option<Integration>) -> Option<String> {
    let mut parts = Vec::new();
    let runs = |n: usize| if n == 1 { "run" } else { "runs" };
    if counts.created > 0 {
        parts.push(format!("{} new {}", counts.created, runs(counts.created)));
    }
    if counts.fast_forwarded > 0 {
        parts.push(format!(
            "{} {} updated",
            counts.fast_forwarded,
            runs(counts.fast_forwarded)
        ));
    }
    if counts.merged > 0 {
        parts.push(format!(
            "{} {} merged with local changes",
            counts.merged,
            runs(counts.merged)
        ));
    }
    match notes {
        Some(Integration::Created | Integration::FastForwarded) => {
            parts.push("notes updated".into())
        }
        Some(Integration::Merged) => parts.push("notes merged".into()),
        _ => {}
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Lines for humans about local runs a pull removed because their tombstone arrived.
pub fn removed_lines(remote: &str, pulled: &crate::sync::PullReport) -> String {
    let mut out = String::new();
    for run_id in &pulled.removed {
        out.push_str(&format!(
            "Removed local run {run_id}: it was dropped (tombstone from {remote}); it will not come back\n"
        ));
    }
    for run_id in &pulled.kept_dropped {
        out.push_str(&format!(
            "Kept local run {run_id}: it was dropped (tombstone from {remote}) but holds records the dropper never saw; it is not published — remove it here with git pair drop {run_id}\n"
        ));
    }
    if pulled.removed.is_empty() && pulled.kept_dropped.is_empty() && pulled.tombstones > 0 {
        out.push_str(&format!(
            "Learnt {} dropped run{} from {remote} (none was here)\n",
            pulled.tombstones,
            if pulled.tombstones == 1 { "" } else { "s" }
        ));
    }
    out
}

/// The JSON of what a pull removed.
pub fn removed_json(pulled: &crate::sync::PullReport) -> Value {
    json!({
        "runs": pulled.removed.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
        "kept": pulled.kept_dropped.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
        "tombstones_learnt": pulled.tombstones,
        "note_lines": pulled.removed_note_lines,
    })
}
