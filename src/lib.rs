//! git pair: a coder ↔ reviewer loop for AI coding agents whose whole state lives in git.
//!
//! Layers call one way (`tests/it/architecture.rs`: no import cycle, pure layers name no gix):
//! - `cli`: clap, the `Ui` (the only printer), errors classified once: args → one `ops` call →
//!   `Report::rendered(&report, render::…)`. No JSON and no text is built here.
//! - `ops`: one module per operation (review/, sync/, common/ {select, note, pr, view}, …):
//!   the order of steps; each returns a `model::report` type, which IS its `--json` contract.
//! - pure (no git): `model` (records, the manifest fold, next_action, the one `Setting` table,
//!   typed ids, checkpoint rules, reports), `render` (every human view), `config` (`pair.*` →
//!   `Options`), `secrets` (the one scanner), `cost` (+ `spend`), `hook` (what a hook decides).
//! - domain: `review` (realizations as data, parsing, the built-in reviewer), `packet`, `diff`,
//!   `worktree` (+ snapshot/), `store` (the only ref writer: refdb/, merge/, one CAS, one lock),
//!   `sync` (git transport), `install` (files put in users' places), `process` (the one spawn).

pub mod cli;
pub mod config;
pub mod cost;
pub mod diff;
pub mod hook;
pub mod install;
pub mod model;
pub mod ops;
pub mod packet;
pub mod process;
pub mod render;
pub mod review;
pub mod secrets;
pub mod store;
pub mod sync;
pub mod util;
pub mod worktree;
