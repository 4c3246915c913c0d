//! `git pair verify`: the team gate — every commit of a range must hold reviewed work. Renders
//! the verdict for humans, `--json`, and a Markdown table for a CI job summary.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::error::EXIT_FAILURE;
use super::{CommandError, Context, Report};
use crate::ops::verify::{self, CommitCheck, Request, Status};

/// Prove that every commit of a range was reviewed: the team gate for CI.
///
/// For each commit, oldest first, finds the run that approved its tree and confirms it in
/// the run's own records (refs/pair/runs/*). The note on the commit (refs/notes/pair) or
/// its Pair-Run trailer only says where to look; a commit with neither (the note was lost
/// to an amend, rebase or squash) is found by its tree. Each commit is:
///
///   approved              a run's APPROVED review has exactly this tree
///   forced                the run was closed with `finish --force` on this tree
///                         (fails unless --allow-forced)
///   changed-after-review  a run is linked to the commit (its note, its Pair-Run trailer,
///                         or an approved run no commit holds that started on its parent,
///                         or for the range's tip ran on its branch, and changed some of
///                         the same files) but approved another tree: the differing
///                         paths are listed
///   unreviewed            no run approved this tree
///
/// A commit that adds nothing of its own passes on its parents' account: each of its
/// files must be that file in one of its parents (an empty commit, or a merge that took
/// every file from one side: no merged content, no conflict resolution, no edits). A
/// merge whose files were merged or edited passes only when a run approved its own tree.
/// Parents outside the range are the trusted base.
///
/// Exit 0 when every commit passes, 1 otherwise. In a CI clone, fetch the review records
/// first:
///
///   git fetch origin '+refs/pair/runs/*:refs/pair/runs/*' '+refs/notes/pair:refs/notes/pair'
///
/// With no run refs at all it stops with an error saying so, rather than calling every
/// commit unreviewed.
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The commits to verify: A..B (an empty side is HEAD), or one revision (that commit
    /// alone). Default: @{upstream}..HEAD, or origin/main..HEAD when there is no upstream.
    #[arg(value_name = "rev-range | rev")]
    pub range: Option<String>,
    /// Let commits finished with `git pair finish --force` pass (still shown as forced).
    #[arg(long)]
    pub allow_forced: bool,
    /// Also append the result as Markdown to this file (e.g. "$GITHUB_STEP_SUMMARY").
    #[arg(long, value_name = "file")]
    pub summary: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let request = Request {
        range: args.range.clone(),
        allow_forced: args.allow_forced,
    };
    let report = match verify::verify(ctx, &request) {
        Ok(report) => report,
        Err(err) => {
            let err = CommandError::from(err);
            if let Some(path) = &args.summary {
                let mut text = format!("### git pair verify\n\n❌ **error:** {}\n", err.message);
                if let Some(hint) = &err.hint {
                    text.push_str(&format!("\n{}\n", md_text(hint)));
                }
                append(path, &text)?;
            }
            return Err(err);
        }
    };
    if let Some(path) = &args.summary {
        append(path, &markdown(&report))?;
    }
    let failing = report.failing();
    let commits: Vec<Value> = report
        .commits
        .iter()
        .map(|c| commit_json(&report, c))
        .collect();
    let mut data = json!({
        "range": report.range,
        "ok": report.ok(),
        "allow_forced": report.allow_forced,
        "commits": commits,
    });
    let mut out = Report::new(Value::Null, human(&report));
    if failing > 0 {
        let message = format!(
            "{failing} of {} commit{} in {} not approved by a review",
            report.commits.len(),
            if report.commits.len() == 1 { "" } else { "s" },
            report.range
        );
        data["error"] = Value::String(message.clone());
        out = out.note(format!("error: {message}")).note(
            "hint: review the work (git pair review, then finish), or fetch the review records: git pair pull",
        );
        out.exit = EXIT_FAILURE;
    }
    if let Value::Object(map) = data {
        out.json = map;
    }
    Ok(out)
}

fn commit_json(report: &verify::Report, c: &CommitCheck) -> Value {
    let review = c.review.as_ref();
    json!({
        "commit": c.commit.to_string(),
        "status": c.status.as_str(),
        "passes": report.passes(c),
        "run": review.map(|r| r.run_id.to_string()),
        "round": review.map(|r| r.round),
        "reviewer": review.map(|r| r.reviewer.clone()),
        "cost_usd": review.and_then(|r| r.cost_usd),
        "paths": c.paths,
        "paths_omitted": c.paths_total - c.paths.len(),
        "via": c.via.map(|v| v.as_str()),
        "subject": c.subject,
        "detail": c.detail,
    })
}

fn short(id: &gix::ObjectId) -> String {
    id.to_hex_with_len(10).to_string()
}

fn cost(usd: Option<f64>) -> String {
    usd.map_or_else(|| "not measured".to_owned(), |c| format!("${c:.2}"))
}

fn human(report: &verify::Report) -> String {
    let mut out = String::new();
    let n = report.commits.len();
    if n == 0 {
        out.push_str(&format!(
            "verify {}: no commits in the range, nothing to verify\n",
            report.range
        ));
        return out;
    }
    for c in &report.commits {
        out.push_str(&format!(
            "{}  {:<20}  {}\n",
            short(&c.commit),
            c.status.as_str(),
            crate::util::first_line_clipped(&c.subject, 60)
        ));
        let detail = match (&c.review, c.status) {
            (Some(r), Status::Approved | Status::Forced) => format!(
                "run {}, round {}, {}, {}",
                r.run_id,
                r.round,
                r.reviewer,
                cost(r.cost_usd)
            ),
            _ => c.detail.clone(),
        };
        out.push_str(&format!("            {detail}\n"));
        for path in &c.paths {
            out.push_str(&format!("              {path}\n"));
        }
        if c.paths_total > c.paths.len() {
            out.push_str(&format!(
                "              … and {} more\n",
                c.paths_total - c.paths.len()
            ));
        }
    }
    let failing = report.failing();
    let forced = report
        .commits
        .iter()
        .filter(|c| c.status == Status::Forced)
        .count();
    if failing == 0 {
        out.push_str(&format!(
            "ok: {n} commit{} in {} reviewed{}\n",
            if n == 1 { "" } else { "s" },
            report.range,
            if forced > 0 {
                format!(" ({forced} forced, allowed by --allow-forced)")
            } else {
                String::new()
            }
        ));
    } else {
        out.push_str(&format!(
            "FAILED: {failing} of {n} commit{} in {} not approved\n",
            if n == 1 { "" } else { "s" },
            report.range
        ));
    }
    out
}

/// The verdict as Markdown for a CI job summary: a headline, one table row per commit, and
/// the differing paths of each failing commit.
fn markdown(report: &verify::Report) -> String {
    let n = report.commits.len();
    let failing = report.failing();
    let mut out = format!("### git pair verify `{}`\n\n", md_text(&report.range));
    if n == 0 {
        out.push_str("No commits in the range: nothing to verify.\n");
        return out;
    }
    if failing == 0 {
        out.push_str(&format!(
            "✅ **All {n} commit{} reviewed.**\n\n",
            if n == 1 { "" } else { "s" }
        ));
    } else {
        out.push_str(&format!(
            "❌ **{failing} of {n} commit{} not approved by a review.**\n\n",
            if n == 1 { "" } else { "s" }
        ));
    }
    out.push_str("| | commit | status | run | round | reviewer | cost | subject |\n");
    out.push_str("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for c in &report.commits {
        let mark = if report.passes(c) { "✅" } else { "❌" };
        let (run, round, reviewer, usd) = match &c.review {
            Some(r) => (
                format!("`{}`", r.run_id),
                r.round.to_string(),
                md_text(&r.reviewer),
                cost(r.cost_usd),
            ),
            None => ("—".into(), "—".into(), "—".into(), "—".into()),
        };
        out.push_str(&format!(
            "| {mark} | `{}` | {} | {run} | {round} | {reviewer} | {usd} | {} |\n",
            short(&c.commit),
            c.status.as_str(),
            md_text(&crate::util::first_line_clipped(&c.subject, 72))
        ));
    }
    let failures: Vec<&CommitCheck> = report
        .commits
        .iter()
        .filter(|c| !report.passes(c))
        .collect();
    if !failures.is_empty() {
        out.push('\n');
        for c in failures {
            out.push_str(&format!(
                "- `{}` **{}**: {}\n",
                short(&c.commit),
                c.status.as_str(),
                md_text(&c.detail)
            ));
            for path in &c.paths {
                out.push_str(&format!("  - {}\n", md_code(path)));
            }
            if c.paths_total > c.paths.len() {
                out.push_str(&format!(
                    "  - … and {} more\n",
                    c.paths_total - c.paths.len()
                ));
            }
        }
    }
    out
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

fn append(path: &Path, text: &str) -> Result<(), CommandError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|e| {
            CommandError::failed(format!(
                "cannot write the summary to {}: {e}",
                path.display()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunId;
    use crate::ops::verify::{ReviewRef, Via};

    fn check(n: u8, status: Status, paths: &[&str], total: usize) -> CommitCheck {
        CommitCheck {
            commit: gix::ObjectId::from_bytes_or_panic(&[n; 20]),
            subject: format!("commit {n} | with <pipe>"),
            status,
            via: (status == Status::Approved).then_some(Via::Note),
            review: (status != Status::Unreviewed).then(|| ReviewRef {
                run_id: RunId::parse("20261129-231500-a1b2c3").expect("valid id"),
                round: 2,
                reviewer: "codex".into(),
                cost_usd: Some(0.42),
            }),
            paths: paths.iter().map(|p| (*p).to_owned()).collect(),
            paths_total: total,
            detail: "why".into(),
        }
    }

    #[test]
    fn the_summary_is_a_table_with_the_failures_listed() {
        let report = verify::Report {
            range: "origin/main..HEAD".into(),
            allow_forced: false,
            commits: vec![
                check(1, Status::Approved, &[], 0),
                check(2, Status::ChangedAfterReview, &["src/lib.rs", "a`b"], 3),
                check(3, Status::Forced, &[], 0),
            ],
        };
        let md = markdown(&report);
        assert!(md.starts_with("### git pair verify `origin/main..HEAD`\n\n❌ **2 of 3 commits not approved by a review.**\n"), "{md}");
        assert!(
            md.contains("| ✅ | `0101010101` | approved | `20261129-231500-a1b2c3` | 2 | codex | $0.42 | commit 1 \\| with &lt;pipe&gt; |\n"),
            "{md}"
        );
        assert!(md.contains("| ❌ | `0303030303` | forced |"), "{md}");
        assert!(
            md.contains("- `0202020202` **changed-after-review**: why\n  - `src/lib.rs`\n  - ``a`b``\n  - … and 1 more\n"),
            "{md}"
        );
        let allowed = verify::Report {
            allow_forced: true,
            commits: vec![check(3, Status::Forced, &[], 0)],
            ..report
        };
        assert!(markdown(&allowed).contains("✅ **All 1 commit reviewed.**"));
    }

    #[test]
    fn code_spans_fence_backticks() {
        assert_eq!(md_code("a"), "`a`");
        assert_eq!(md_code("a``b"), "```a``b```");
        assert_eq!(md_code("`x"), "`` `x ``");
    }
}
