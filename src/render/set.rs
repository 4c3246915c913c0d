//! The human view of `set`'s report.

use std::io::{Result, Write};

use crate::model::report::set::SettingSet;

/// `key = value (from source) for run id`.
pub fn human(s: &SettingSet, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "{} = {} (from {}) for run {}",
        s.key, s.value, s.from, s.run_id
    )
}
