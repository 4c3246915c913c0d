//! Views rendered from stored records and reports: the HANDOFF transcript, the PR body, a
//! checkpoint's packet and destination prompt, and the human view of each command's report.
//!
//! Pure: records, manifests and reports in, text out. Nothing here reads git or writes files.

pub mod abandon;
pub mod budget_check;
pub mod checkpoint;
pub mod coder_done;
pub mod common;
pub mod cost;
pub mod diff;
pub mod finish;
pub mod gate;
pub mod handoff;
pub mod list;
pub mod pr_body;
pub mod set;
pub mod show;
pub mod start;
pub mod status;
pub mod transcript;
pub mod verify;
