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
        writeln!(out, "$ git pair {shown}")?;
        for line in step.output.lines() {
            writeln!(out, "  {line}")?;
        }
        writeln!(out)?;
    }
    let (dir, run_id, body_path) = (&report.repo, &report.run_id, &report.pr_body_path);
    writeln!(out, "===== PR body ({body_path}) =====\n{}", report.pr_body)?;
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
