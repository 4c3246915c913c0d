//! git pair: a coder ↔ reviewer loop for AI coding agents whose whole state lives in git.
//!
//! The data of one review flows one way: `cli` (users, terminals, exit codes) →
//! `worktree`/`snapshot` (work tree → tree objects, diffs) → `review` (packet, reviewers,
//! parsing) → `store` (the only code touching `refs/pair` and `refs/notes/pair`) → `render`
//! (HANDOFF transcript, PR body). `model` holds the versioned records and the projections
//! computed from them; it knows nothing about git. `config` reads `pair.*` settings once;
//! `cost` prices agent sessions from their own logs; `view` keeps rendered files current.

pub mod cli;
pub mod config;
pub mod cost;
pub mod demo;
pub mod diff;
pub mod model;
pub mod packet;
pub mod render;
pub mod review;
pub mod round;
pub mod secrets;
pub mod snapshot;
pub mod spend;
pub mod store;
pub mod sync;
pub mod util;
pub mod view;
pub mod worktree;
