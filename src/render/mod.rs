//! Views rendered from stored records: the HANDOFF transcript, the PR body, and a
//! checkpoint's packet and destination prompt.
//!
//! Pure: records and manifests in, text out. Nothing here reads git or writes files.

pub mod checkpoint;
pub mod common;
pub mod handoff;
pub mod pr_body;
