//! What several operations share: which run a command acts on (`select`), the review note a
//! run writes on a commit (`note`), the PR body on disk (`pr`), the rendered views kept in
//! step with the store (`view`), and where a handoff went (`handoff`).

pub mod handoff;
pub mod note;
pub mod pr;
pub mod select;
pub mod view;
