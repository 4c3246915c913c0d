//! The human view of `list`'s report: one line per run, as the listing streams.

use std::io::{Result, Write};

use crate::model::report::list::{RunLine, RunList};
use crate::model::report::verify::MalformedRun;

/// One line per run (a run of another clone marked so), or how to start the first.
pub fn human(list: &RunList, out: &mut dyn Write) -> Result<()> {
    for m in &list.runs {
        line(m, out)?;
    }
    tail(list.runs.len(), &list.malformed_runs, out)
}

/// One run's line.
pub fn line(m: &RunLine, out: &mut dyn Write) -> Result<()> {
    // A closed run says how it closed: approved, changes requested, or abandoned.
    let state = match (m.next_action, m.verdict) {
        ("done", Some("APPROVED")) => "done: approved",
        ("done", Some(_)) => "done: not approved",
        ("done", None) => "done: abandoned",
        (next, _) => next,
    };
    writeln!(
        out,
        "{}  {:<20} round {}/{}  {:<18} {}{}",
        m.run_id,
        super::escape::line(&m.branch),
        m.round,
        m.max_rounds,
        state,
        super::escape::line(&crate::util::first_line_clipped(&m.task, 50)),
        if m.owned { "" } else { "  (other clone)" }
    )
}

/// After the `listed` runs' lines: the runs that cannot be read, or how to start the first.
pub fn tail(listed: usize, malformed: &[MalformedRun], out: &mut dyn Write) -> Result<()> {
    for bad in malformed {
        writeln!(
            out,
            "{}  cannot be read ({}); remove it with: git pair drop {}",
            bad.run,
            crate::util::first_line_clipped(&bad.reason, 120),
            bad.run
        )?;
    }
    if listed == 0 && malformed.is_empty() {
        writeln!(
            out,
            "no runs yet; start one with: git pair start --task \"…\""
        )?;
    }
    Ok(())
}
