//! The human view of `gate`'s report.

use std::io::{Result, Write};

use crate::model::report::gate::Gate;

/// Why the gate is open.
pub fn human(gate: &Gate, out: &mut dyn Write) -> Result<()> {
    match gate {
        Gate::NoActiveRun(g) => {
            writeln!(out, "open: this clone has no run on branch '{}'", g.branch)
        }
        Gate::Approved(a) => writeln!(
            out,
            "open: the staged tree is the snapshot run {} approved in round {} ({})",
            a.run_id, a.round, a.reviewer
        ),
    }
}
