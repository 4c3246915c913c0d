//! The human view of `drop`: each thing removed, the tombstone, and what happened on the
//! remote.

use std::io::Write;

use crate::model::report::drop::Dropped;

/// `git pair drop`'s text.
pub fn human(report: &Dropped, out: &mut dyn Write) -> std::io::Result<()> {
    let run_id = &report.run_id;
    if report.was_local {
        writeln!(out, "Dropped run {run_id}")?;
    } else {
        writeln!(out, "Run {run_id} was not here; dropping it elsewhere")?;
    }
    for name in &report.removed_refs {
        writeln!(out, "  removed ref {name}")?;
    }
    if report.removed_note_lines > 0 {
        writeln!(
            out,
            "  removed {} line{} from refs/notes/pair",
            report.removed_note_lines,
            if report.removed_note_lines == 1 {
                ""
            } else {
                "s"
            }
        )?;
    }
    for file in &report.removed_files {
        writeln!(out, "  removed {file}")?;
    }
    writeln!(
        out,
        "  tombstone {} ({})",
        report.tombstone,
        if report.tombstone_created {
            "left now"
        } else {
            "already there"
        }
    )?;
    match &report.remote {
        Some(remote) => {
            let name = &remote.remote;
            if remote.deleted {
                writeln!(out, "  deleted on {name}")?;
            } else {
                writeln!(out, "  {name} did not have it")?;
            }
            if remote.tombstone_pushed {
                writeln!(out, "  tombstone pushed to {name}")?;
            }
        }
        None => writeln!(
            out,
            "  (the next git pair push deletes it on the remote too; or now: --remote REMOTE)"
        )?,
    }
    writeln!(
        out,
        "To remove its objects from this repository now: git gc --prune=now"
    )
}
