//! Views rendered from stored records: the HANDOFF transcript and human tables.
//!
//! Pure: records and manifests in, text out. Nothing here reads git or writes files.

pub mod handoff;
pub mod pr_body;
