//! What each command reports: the `#[derive(Serialize)]` types that ARE the `--json` contract
//! (field order = key order; `#[serde(skip)]` marks data only the human view needs). Ops
//! build them, `render` draws them for people; pure, so both can see them.

pub mod abandon;
pub mod budget_check;
pub mod coder_done;
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
pub mod verify;
