//! Views rendered from stored records: the HANDOFF transcript, the PR body, a checkpoint's
//! packet and destination prompt, and the human view of each command's report
//! ([`crate::model::report`]), written to a `&mut dyn Write`.
//!
//! Pure: records, manifests and reports in, text out. Nothing here reads git or writes files.

pub mod checkpoint;
pub mod common;
pub mod demo;
pub mod drop;
pub mod handoff;
pub mod hook;
pub mod hooks;
pub mod pr_body;
pub mod probe;
pub mod review;
pub mod skill;
pub mod sync;
