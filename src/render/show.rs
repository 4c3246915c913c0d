//! The human view of `show`'s report.

use std::io::{Result, Write};

use crate::model::report::show::Show;

/// The transcript, one round's sections, or the material as stored.
pub fn human(show: &Show, out: &mut dyn Write) -> Result<()> {
    match show {
        Show::Run(run) => out.write_all(run.transcript.as_bytes()),
        Show::Material(material) => out.write_all(material.text().as_bytes()),
        Show::Round(round) => {
            let mut text = String::new();
            for (record, manifest) in &round.sections {
                text.push_str(&super::handoff::section(record, manifest));
            }
            // A section opens with a blank line that the first one does not need.
            out.write_all(text.trim_start().as_bytes())
        }
    }
}
