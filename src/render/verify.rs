//! The human views of `verify`'s report: the terminal table, and Markdown for a CI job
//! summary (the verdict, or the error that stopped it).

use std::io::{Result, Write};

use crate::model::report::verify::{CommitLine, Verified};

fn short(commit: &str) -> &str {
    &commit[..10.min(commit.len())]
}

fn cost(usd: Option<f64>) -> String {
    usd.map_or_else(|| "not measured".to_owned(), |c| format!("${c:.2}"))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// One line per commit with its run or why not, the differing paths, and the verdict.
pub fn human(report: &Verified, out: &mut dyn Write) -> Result<()> {
    let n = report.commits.len();
    if n == 0 {
        writeln!(
            out,
            "verify {}: no commits in the range, nothing to verify",
            report.range
        )?;
        // The default range is what this branch has not pushed yet: on a branch fetched to
        // check someone's PR that is nothing, so say how to check the branch against its base.
        if report.range.starts_with("@{upstream}..") {
            writeln!(
                out,
                "(to check the whole branch against its base, name it: git pair verify origin/BASE..HEAD)"
            )?;
        }
        return Ok(());
    }
    for c in &report.commits {
        writeln!(
            out,
            "{}  {:<20}  {}",
            short(&c.commit),
            c.status,
            crate::util::first_line_clipped(&c.subject, 60)
        )?;
        let detail = match (&c.run, &c.round, &c.reviewer, c.status) {
            (Some(run), Some(round), Some(reviewer), "approved" | "forced") => {
                format!("run {run}, round {round}, {reviewer}, {}", cost(c.cost_usd))
            }
            _ => c.detail.clone(),
        };
        writeln!(out, "            {detail}")?;
        for path in &c.paths {
            writeln!(out, "              {path}")?;
        }
        if c.paths_omitted > 0 {
            writeln!(out, "              … and {} more", c.paths_omitted)?;
        }
    }
    for bad in &report.malformed_runs {
        writeln!(
            out,
            "warning: run {} was skipped: it cannot be read ({})",
            bad.run,
            crate::util::first_line_clipped(&bad.reason, 200)
        )?;
    }
    let failing = report.failing();
    let forced = report
        .commits
        .iter()
        .filter(|c| c.status == "forced")
        .count();
    if failing == 0 {
        writeln!(
            out,
            "ok: {n} commit{} in {} reviewed{}",
            plural(n),
            report.range,
            if forced > 0 {
                format!(" ({forced} forced, allowed by --allow-forced)")
            } else {
                String::new()
            }
        )
    } else {
        writeln!(
            out,
            "FAILED: {failing} of {n} commit{} in {} not approved",
            plural(n),
            report.range
        )
    }
}

/// The verdict as Markdown for a CI job summary: a headline, one table row per commit, and
/// the differing paths of each failing commit.
pub fn markdown(report: &Verified, out: &mut dyn Write) -> Result<()> {
    let n = report.commits.len();
    let failing = report.failing();
    write!(out, "### git pair verify `{}`\n\n", md_text(&report.range))?;
    if n == 0 {
        return writeln!(out, "No commits in the range: nothing to verify.");
    }
    if failing == 0 {
        write!(out, "✅ **All {n} commit{} reviewed.**\n\n", plural(n))?;
    } else {
        write!(
            out,
            "❌ **{failing} of {n} commit{} not approved by a review.**\n\n",
            plural(n)
        )?;
    }
    writeln!(
        out,
        "| | commit | status | run | round | reviewer | cost | subject |"
    )?;
    writeln!(out, "| --- | --- | --- | --- | --- | --- | --- | --- |")?;
    for c in &report.commits {
        let mark = if c.passes { "✅" } else { "❌" };
        let (run, round, reviewer, usd) = match (&c.run, &c.round, &c.reviewer) {
            (Some(run), Some(round), Some(reviewer)) => (
                format!("`{run}`"),
                round.to_string(),
                md_text(reviewer),
                cost(c.cost_usd),
            ),
            _ => ("—".into(), "—".into(), "—".into(), "—".into()),
        };
        writeln!(
            out,
            "| {mark} | `{}` | {} | {run} | {round} | {reviewer} | {usd} | {} |",
            short(&c.commit),
            c.status,
            md_text(&crate::util::first_line_clipped(&c.subject, 72))
        )?;
    }
    let failures: Vec<&CommitLine> = report.commits.iter().filter(|c| !c.passes).collect();
    if !failures.is_empty() {
        writeln!(out)?;
        for c in failures {
            writeln!(
                out,
                "- `{}` **{}**: {}",
                short(&c.commit),
                c.status,
                md_text(&c.detail)
            )?;
            for path in &c.paths {
                writeln!(out, "  - {}", md_code(path))?;
            }
            if c.paths_omitted > 0 {
                writeln!(out, "  - … and {} more", c.paths_omitted)?;
            }
        }
    }
    if !report.malformed_runs.is_empty() {
        writeln!(out)?;
        for bad in &report.malformed_runs {
            writeln!(
                out,
                "- ⚠️ run `{}` was skipped: it cannot be read ({})",
                bad.run,
                md_text(&crate::util::first_line_clipped(&bad.reason, 200))
            )?;
        }
    }
    Ok(())
}

/// The error that stopped `verify`, as Markdown for a CI job summary.
pub fn markdown_error(message: &str, hint: Option<&str>) -> String {
    let mut text = format!("### git pair verify\n\n❌ **error:** {message}\n");
    if let Some(hint) = hint {
        text.push_str(&format!("\n{}\n", md_text(hint)));
    }
    text
}

/// Text safe in a Markdown table cell or list item: no line breaks, no table pipes, no HTML.
fn md_text(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A path as a Markdown code span, fenced with more backticks than it holds.
fn md_code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunId;

    fn check(
        n: u8,
        status: &'static str,
        paths: &[&str],
        total: usize,
        passes: bool,
    ) -> CommitLine {
        let reviewed = status != "unreviewed";
        CommitLine {
            commit: format!("{n:02x}").repeat(20),
            status,
            passes,
            run: reviewed.then(|| RunId::parse("20261129-231500-a1b2c3").expect("valid id")),
            round: reviewed.then_some(2),
            reviewer: reviewed.then(|| "codex".into()),
            cost_usd: reviewed.then_some(0.42),
            paths: paths.iter().map(|p| (*p).to_owned()).collect(),
            paths_omitted: total - paths.len(),
            via: (status == "approved").then_some("note"),
            subject: format!("commit {n} | with <pipe>"),
            detail: "why".into(),
        }
    }

    fn md(report: &Verified) -> String {
        let mut out = Vec::new();
        markdown(report, &mut out).expect("a Vec takes writes");
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn the_summary_is_a_table_with_the_failures_listed() {
        let report = Verified {
            range: "origin/main..HEAD".into(),
            ok: false,
            allow_forced: false,
            commits: vec![
                check(1, "approved", &[], 0, true),
                check(2, "changed-after-review", &["src/lib.rs", "a`b"], 3, false),
                check(3, "forced", &[], 0, false),
            ],
            malformed_runs: Vec::new(),
            error: None,
        };
        let md_text = md(&report);
        assert!(md_text.starts_with("### git pair verify `origin/main..HEAD`\n\n❌ **2 of 3 commits not approved by a review.**\n"), "{md_text}");
        assert!(
            md_text.contains("| ✅ | `0101010101` | approved | `20261129-231500-a1b2c3` | 2 | codex | $0.42 | commit 1 \\| with &lt;pipe&gt; |\n"),
            "{md_text}"
        );
        assert!(
            md_text.contains("| ❌ | `0303030303` | forced |"),
            "{md_text}"
        );
        assert!(
            md_text.contains("- `0202020202` **changed-after-review**: why\n  - `src/lib.rs`\n  - ``a`b``\n  - … and 1 more\n"),
            "{md_text}"
        );
        let allowed = Verified {
            ok: true,
            allow_forced: true,
            commits: vec![check(3, "forced", &[], 0, true)],
            ..report
        };
        assert!(md(&allowed).contains("✅ **All 1 commit reviewed.**"));
    }

    #[test]
    fn code_spans_fence_backticks() {
        assert_eq!(md_code("a"), "`a`");
        assert_eq!(md_code("a``b"), "```a``b```");
        assert_eq!(md_code("`x"), "`` `x ``");
    }
}
