//! The human view of `demo`: a transcript of every command and its output, the PR body, and
//! where the state lives (or lived).

use std::io::Write;

use crate::model::report::demo::Demo;

/// `git pair demo`'s text.
pub fn human(report: &Demo, out: &mut dyn Write) -> std::io::Result<()> {
    for step in &report.steps {
        let shown = step
            .args
            .iter()
            .map(|a| {
                if a.contains(' ') {
                    format!("\"{a}\"")
                } else {
                    a.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        writeln!(out, "$ {} {shown}", step.program)?;
        for line in step.output.lines() {
            writeln!(out, "  {}", shown_path(report, line))?;
        }
        writeln!(out)?;
    }
    let (dir, run_id, body_path) = (&report.repo, &report.run_id, &report.pr_body_path);
    writeln!(
        out,
        "===== PR body ({}) =====\n{}",
        shown_path(report, body_path),
        report.pr_body
    )?;
    if report.kept {
        writeln!(
            out,
            "===== where the state lives =====\n\
             repository: {dir}\n\
             run:        refs/pair/runs/{run_id}   (git -C {dir} log refs/pair/runs/{run_id})\n\
             transcript: {dir}/HANDOFF.md (a view, never committed)\n\
             PR body:    {body_path}\n\
             remove it:  rm -rf {dir}"
        )
    } else {
        writeln!(
            out,
            "===== where the state lived =====\n\
             run:        refs/pair/runs/{run_id} in a throwaway repository, now removed\n\
             look around: git pair demo --keep"
        )
    }
}

/// `text` with the demo repository's path replaced by a placeholder once the repository is
/// gone (a path into a removed folder helps no one).
fn shown_path(report: &Demo, text: &str) -> String {
    if report.kept || report.repo.is_empty() {
        text.to_owned()
    } else {
        text.replace(&report.repo, "<demo repository, removed>")
    }
}
