//! What `push` found in what it would publish (SPEC §14): where each secret is (run, round,
//! path, line, kind), never what. The data is part of the push report
//! ([`crate::model::report::sync`]); this module keeps the name the push scan and the
//! operations' error type use.

pub use crate::model::report::sync::{PushFinding, summarize};
