//! The `--json` contract of every command: one `#[derive(Serialize)]` type per report, whose
//! fields in order are the JSON keys. Operations build them; `render` turns them into text.
//!
//! Pure data: no git, no files, no terminal; `#[serde(skip)]` marks what only the human view
//! needs.

pub mod checkpoint;
pub mod demo;
pub mod drop;
pub mod hook;
pub mod hooks;
pub mod probe;
pub mod review;
pub mod skill;
pub mod sync;
