//! git pair: a coder ↔ reviewer loop for AI coding agents whose whole state lives in git.
//!
//! Layers call one way (checked by `tests/it/architecture.rs`: no import cycle):
//! - `cli`: clap definitions, one file per command (args → one `ops` call → render), errors
//!   classified once (`cli/error.rs`), the `Ui` that alone prints.
//! - `ops`: one module per operation (start, coder-done, review, finish, select, sync, …): the
//!   rules of the loop and the order of steps, nothing about terminals.
//! - domain modules: `store` (the only code touching `refs/pair` and `refs/notes/pair`, and
//!   the layout inside a run), `model` (records and the manifest projected from them; pure),
//!   `worktree`/`snapshot`/`diff` (work tree → tree objects → git-identical diffs), `packet`
//!   (the bounded review packet), `review` (realizations as data, probing, parsing, the
//!   built-in reviewer), `render` (HANDOFF transcript, PR body; pure), `cost`/`spend` (agent
//!   logs priced), `sync` (push/pull), `hooks`/`skill` (git and agent hooks, skill folders),
//!   `view` (rendered files kept current), `config` (`pair.*` settings), `settings` (which
//!   run settings are in force and why), `secrets` (the one secret scanner; pure),
//!   `checkpoint` (the rules of context-handoff packets: bounds, assessment, verification,
//!   trust in a recorded check; pure).
//! - `process`: the one place that spawns anything (reviewers, `gh`, `git` for transport).

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
