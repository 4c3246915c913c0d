//! Hooks as file edits and pure decisions: installing the git hook shims and putting back what
//! was there ([`install`]), the commit-message trailers the `commit-msg` hook adds
//! ([`trailers`]), and the agent Stop hook's decision ([`agent_stop`]).
//!
//! Nothing here runs git, reads refs or prints: the caller resolves the hooks directory
//! (`core.hooksPath` honoured) and the run's state, and renders the results.

pub mod agent_stop;
pub mod install;
pub mod trailers;
