//! Integration tests of the snapshot, diff and packet modules against real git.

mod diff;
mod packet;
mod snapshot;
mod support;
