//! Human views of `push` and `pull`: what moved, or that nothing did, and the runs a pull
//! removed because their tombstone arrived.

use std::io::Write;

use crate::model::report::sync::{Merged, Pull, Push, RemovedRuns, RunCounts};

/// `git pair pull`'s text.
pub fn pull(report: &Pull, out: &mut dyn Write) -> std::io::Result<()> {
    let remote = &report.remote;
    if report.remote_runs == 0 && report.notes.is_none() && report.removed.tombstones_learnt == 0 {
        writeln!(out, "{remote} has no git pair state yet; nothing to pull")?;
    } else {
        match runs_phrase(&report.runs, report.notes) {
            Some(phrase) => writeln!(out, "Pulled from {remote}: {phrase}")?,
            None => writeln!(
                out,
                "Already up to date with {remote} ({} {})",
                report.remote_runs,
                if report.remote_runs == 1 {
                    "run"
                } else {
                    "runs"
                }
            )?,
        }
    }
    removed(remote, &report.removed, out)
}

/// `git pair push`'s text.
pub fn push(report: &Push, out: &mut dyn Write) -> std::io::Result<()> {
    let remote = &report.remote;
    let nothing = report.pushed_runs == 0
        && !report.pushed_notes
        && report.pushed_tombstones == 0
        && report.removed_runs.is_empty();
    if nothing {
        writeln!(out, "Everything up to date on {remote}")?;
    } else {
        let mut what = Vec::new();
        if report.pushed_runs > 0 {
            let noun = if report.pushed_runs == 1 {
                "run"
            } else {
                "runs"
            };
            what.push(format!("{} {noun}", report.pushed_runs));
        }
        if report.pushed_notes {
            what.push("notes".to_owned());
        }
        if report.pushed_tombstones > 0 {
            what.push(format!(
                "{} tombstone{}",
                report.pushed_tombstones,
                if report.pushed_tombstones == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
        if !what.is_empty() {
            writeln!(out, "Pushed {} to {remote}", what.join(" and "))?;
        }
        for run_id in &report.removed_runs {
            writeln!(out, "Deleted dropped run {run_id} on {remote}")?;
        }
    }
    if let Some(phrase) = runs_phrase(&report.runs, report.notes) {
        writeln!(out, "Merged from {remote} first: {phrase}")?;
    }
    if report.attempts > 1 {
        writeln!(
            out,
            "(someone pushed first; succeeded on attempt {})",
            report.attempts
        )?;
    }
    removed(remote, &report.removed, out)?;
    for (run, allowed) in &report.allowances_recorded {
        writeln!(
            out,
            "Recorded in run {run}: secret allowed for push (known false positive): {}",
            allowed.join(", ")
        )?;
    }
    if report.scanned.skipped > 0 {
        writeln!(
            out,
            "({} large or binary file{} not scanned for secrets)",
            report.scanned.skipped,
            if report.scanned.skipped == 1 { "" } else { "s" }
        )?;
    }
    Ok(())
}

/// One line for humans: what moved, or that nothing did.
pub fn runs_phrase(counts: &RunCounts, notes: Option<Merged>) -> Option<String> {
    let mut parts = Vec::new();
    let runs = |n: usize| if n == 1 { "run" } else { "runs" };
    if counts.created > 0 {
        parts.push(format!("{} new {}", counts.created, runs(counts.created)));
    }
    if counts.fast_forwarded > 0 {
        parts.push(format!(
            "{} {} updated",
            counts.fast_forwarded,
            runs(counts.fast_forwarded)
        ));
    }
    if counts.merged > 0 {
        parts.push(format!(
            "{} {} merged with local changes",
            counts.merged,
            runs(counts.merged)
        ));
    }
    match notes {
        Some(Merged::Created | Merged::FastForwarded) => parts.push("notes updated".into()),
        Some(Merged::Merged) => parts.push("notes merged".into()),
        _ => {}
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Lines for humans about local runs a pull removed because their tombstone arrived.
pub fn removed(remote: &str, removed: &RemovedRuns, out: &mut dyn Write) -> std::io::Result<()> {
    for run_id in &removed.runs {
        writeln!(
            out,
            "Removed local run {run_id}: it was dropped (tombstone from {remote}); it will not come back"
        )?;
    }
    for run_id in &removed.kept {
        writeln!(
            out,
            "Kept local run {run_id}: it was dropped (tombstone from {remote}) but holds records the dropper never saw; it is not published — remove it here with git pair drop {run_id}"
        )?;
    }
    for run_id in &removed.kept_active {
        writeln!(
            out,
            "warning: kept local run {run_id}: it was dropped (tombstone from {remote}) but it is this clone's active run; it is not published — finish the job with git pair drop {run_id} --force"
        )?;
    }
    if removed.runs.is_empty()
        && removed.kept.is_empty()
        && removed.kept_active.is_empty()
        && removed.tombstones_learnt > 0
    {
        writeln!(
            out,
            "Learnt {} dropped run{} from {remote} (none was here)",
            removed.tombstones_learnt,
            if removed.tombstones_learnt == 1 {
                ""
            } else {
                "s"
            }
        )?;
    }
    Ok(())
}
