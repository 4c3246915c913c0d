//! Integration tests: the built `git-pair` binary and the library against real temporary
//! repositories, with state read back by real `git`. One binary, one module per area.

mod architecture;
mod bad_input;
mod checkpoint;
mod common;
mod concurrency;
mod cost;
mod coverage;
mod diff;
mod e2e;
mod fast_paths;
mod finish;
mod hooks;
mod isolation;
mod json_contract;
mod layout;
mod lifecycle;
mod loop_state;
mod man;
mod naming;
mod packet;
mod plugin;
mod retry_policy;
mod review;
mod reviewers;
mod secrets;
mod security;
mod session;
mod snapshot;
mod start;
mod stress;
mod sync;
mod truth;
mod verify;
