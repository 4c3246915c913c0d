//! Views rendered from stored records: the HANDOFF transcript, the PR body, and a
//! checkpoint's packet and destination prompt.
//!
//! Pure: records and manifests in, text out. Nothing here reads git or writes files.

pub mod checkpoint;
pub mod common;
pub mod drop;
pub mod handoff;
pub mod hook;
pub mod hooks;
pub mod pr_body;
pub mod skill;
pub mod sync;
