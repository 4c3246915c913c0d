//! A shim while the other command files move to `crate::render`: the shared pieces of
//! rendering they still name as `super::render::…`.

pub use crate::render::common::{next_step, usd, usd_json};
