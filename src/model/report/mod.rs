//! The `--json` contract of every command: one `#[derive(Serialize)]` type per report, whose
//! fields in order are the JSON keys (`#[serde(skip)]` marks what only the human view needs).
//! Operations build them; `render` turns them into text. Pure data: no git, no files, no
//! terminal, so both layers can see them.

pub mod abandon;
pub mod adopt;
pub mod budget_check;
pub mod checkpoint;
pub mod coder_done;
pub mod cost;
pub mod demo;
pub mod diff;
pub mod drop;
pub mod finish;
pub mod gate;
pub mod handoff;
pub mod hook;
pub mod hooks;
pub mod list;
pub mod log;
pub mod man;
pub mod pr_body;
pub mod probe;
pub mod review;
pub mod scrub;
pub mod set;
pub mod show;
pub mod skill;
pub mod start;
pub mod status;
pub mod sync;
pub mod verify;
