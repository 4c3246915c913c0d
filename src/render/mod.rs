//! Views rendered from stored records: the HANDOFF transcript, the PR body, a checkpoint's
//! packet and destination prompt, and the human view of each command's report
//! ([`crate::model::report`]), written to a `&mut dyn Write`.
//!
//! Pure: records, manifests and reports in, text out. Nothing here reads git or writes files.

pub mod abandon;
pub mod adopt;
pub mod budget_check;
pub mod checkpoint;
pub mod coder_done;
pub mod common;
pub mod cost;
pub mod demo;
pub mod diff;
pub mod drop;
pub mod escape;
pub mod finish;
pub mod gate;
pub mod handoff;
pub mod hook;
pub mod hooks;
pub mod list;
pub mod log;
pub mod man;
pub mod pr_body;
pub mod pr_comment;
pub mod probe;
pub mod review;
pub mod scrub;
pub mod set;
pub mod show;
pub mod skill;
pub mod start;
pub mod status;
pub mod sync;
pub mod transcript;
pub mod verify;
