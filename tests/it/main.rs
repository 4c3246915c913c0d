//! Integration tests: the built `git-pair` binary against real temporary repositories, with
//! state read back by real `git`. One binary, one module per command area.

mod common;
mod concurrency;
mod loop_state;
mod start;
mod sync;
