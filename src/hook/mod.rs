//! What a hook decides, pure: the commit-message trailers the `commit-msg` hook adds
//! ([`trailers`]), the agent Stop hook's decision ([`agent_stop`]) and the agent lifecycle
//! hooks' compaction count and reminder ([`session`]).
//!
//! Nothing here runs git, reads refs or prints: the caller reads the run's state and renders
//! the results. Installing the hook files is [`crate::install::hooks`].

pub mod agent_stop;
pub mod session;
pub mod trailers;
