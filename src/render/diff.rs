//! The human view of `diff`'s report.

use std::io::{Result, Write};

use crate::model::report::diff::RoundDiff;

/// The `git diff` text as it is.
pub fn human(d: &RoundDiff, out: &mut dyn Write) -> Result<()> {
    out.write_all(d.diff.as_bytes())
}
