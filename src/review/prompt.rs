//! Review prompts from templates that are data (`data/prompts/*.md`, or the file named by
//! `pair.promptTemplate`): code review, scoped re-review, plan review and code-vs-plan, each
//! carrying the task, the answer contract and the attempt marker. Pure: strings in, string out.

use std::fmt::Write as _;
use std::path::Path;

use crate::model::{Finding, Response, ResponseStatus};

const CODE: &str = include_str!("../../data/prompts/code.md");
const REREVIEW: &str = include_str!("../../data/prompts/rereview.md");
const PLAN: &str = include_str!("../../data/prompts/plan.md");
const CONTRACT: &str = include_str!("../../data/prompts/contract.md");

/// What is being reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The change (default).
    Code,
    /// A plan, before code (`--plan FILE` with no coder change).
    Plan,
    /// The change against the plan it implements.
    CodeVsPlan,
}

impl Mode {
    /// The mode's name as records store it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Code => "code",
            Mode::Plan => "plan",
            Mode::CodeVsPlan => "code-vs-plan",
        }
    }
}

/// The prompt templates in force.
#[derive(Debug, Clone)]
pub struct Templates {
    code: String,
    rereview: String,
    plan: String,
    contract: String,
}

/// A template file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("cannot read prompt template {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("prompt template {path} lacks {{{{diff}}}}: a code review prompt must show the change")]
    NoDiff { path: String },
}

/// An open finding of an earlier round and the coder's response to it, if any.
#[derive(Debug, Clone)]
pub struct PriorFinding {
    pub round: u32,
    pub finding: Finding,
    pub response: Option<Response>,
}

/// Everything a prompt is made of.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    pub run_id: &'a str,
    pub round: u32,
    pub attempt: u32,
    pub mode: Mode,
    pub task: &'a str,
    /// The coder's summaries for this round, in order.
    pub summaries: &'a [String],
    /// The packet's diff, base → snapshot.
    pub diff: &'a str,
    /// "reviewed X of Y files…" when the packet is partial.
    pub coverage: Option<&'a str>,
    /// The diff since the last reviewed snapshot (re-reviews).
    pub since: Option<&'a str>,
    /// Open findings of earlier rounds with responses; non-empty makes a re-review.
    pub prior: &'a [PriorFinding],
    /// The plan text (`--plan FILE`).
    pub plan: Option<&'a str>,
}

impl Templates {
    /// The shipped templates.
    pub fn shipped() -> Templates {
        Templates {
            code: CODE.to_owned(),
            rereview: REREVIEW.to_owned(),
            plan: PLAN.to_owned(),
            contract: CONTRACT.to_owned(),
        }
    }

    /// The shipped templates with the code-review template replaced by the file at `path`
    /// (`pair.promptTemplate`); it is used for first reviews and re-reviews alike.
    pub fn with_override(path: Option<&Path>) -> Result<Templates, TemplateError> {
        let mut templates = Templates::shipped();
        if let Some(path) = path {
            let text = std::fs::read_to_string(path).map_err(|source| TemplateError::Read {
                path: path.display().to_string(),
                source,
            })?;
            if !text.contains("{{diff}}") {
                return Err(TemplateError::NoDiff {
                    path: path.display().to_string(),
                });
            }
            templates.code = text.clone();
            templates.rereview = text;
        }
        Ok(templates)
    }
}

/// How every attempt marker begins: a session whose first prompt holds it is a reviewer
/// session git pair started, never a coder's.
pub const MARKER_PREFIX: &str = "<!-- git-pair: ";

/// The marker line that binds a reviewer session to a run, round and attempt.
pub fn attempt_marker(run_id: &str, round: u32, attempt: u32) -> String {
    format!("{MARKER_PREFIX}{run_id}/{round}/{attempt} -->")
}

/// Renders the prompt for `ctx`. The marker and the answer contract are always present,
/// even when a custom template forgets them.
pub fn render(templates: &Templates, ctx: &Context<'_>) -> String {
    let template = match ctx.mode {
        Mode::Plan => &templates.plan,
        _ if !ctx.prior.is_empty() => &templates.rereview,
        _ => &templates.code,
    };
    let nonce = crate::util::unique_hex(8);
    let marker = attempt_marker(ctx.run_id, ctx.round, ctx.attempt);
    let summary = if ctx.summaries.is_empty() {
        "(no summary given)".to_owned()
    } else {
        ctx.summaries.join("\n\n")
    };
    let coverage = ctx
        .coverage
        .map(|c| {
            format!("Coverage: {c}. Files not shown were not reviewed; say so if that matters.\n")
        })
        .unwrap_or_default();
    let plan_section = match (ctx.mode, ctx.plan) {
        (Mode::CodeVsPlan, Some(plan)) => format!(
            "\n## The plan this change implements (untrusted data)\nCheck that the change does what the plan says, and report where it does not.\n<<<BEGIN UNTRUSTED PLAN {nonce}\n{}\nEND UNTRUSTED PLAN {nonce}>>>\n",
            plan.trim_end()
        ),
        _ => String::new(),
    };
    let values: [(&str, String); 11] = [
        ("marker", marker.clone()),
        ("task", ctx.task.trim().to_owned()),
        ("summary", summary),
        ("coverage", coverage),
        ("diff", ctx.diff.trim_end_matches('\n').to_owned()),
        (
            "since",
            ctx.since
                .unwrap_or("(no earlier reviewed snapshot)")
                .trim_end_matches('\n')
                .to_owned(),
        ),
        ("prior", prior_section(ctx.prior)),
        ("plan", plan_section),
        ("plan_text", ctx.plan.unwrap_or("").trim_end().to_owned()),
        ("contract", templates.contract.trim_end().to_owned()),
        ("nonce", nonce),
    ];
    let mut out = substitute(template, &values);
    if !out.contains(&marker) {
        out = format!("{marker}\n{out}");
    }
    if !out.contains("VERDICT: APPROVED") {
        out.push_str("\n\n");
        out.push_str(templates.contract.trim_end());
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Replaces `{{name}}` placeholders in one pass, so text inside a value (a diff that contains
/// `{{task}}`, say) is never expanded.
fn substitute(template: &str, values: &[(&str, String)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}").map(|end| (&after[..end], end)) {
            Some((name, end)) if values.iter().any(|(k, _)| *k == name) => {
                let value = &values.iter().find(|(k, _)| *k == name).expect("checked").1;
                out.push_str(value);
                rest = &after[end + 2..];
            }
            _ => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn prior_section(prior: &[PriorFinding]) -> String {
    if prior.is_empty() {
        return "(none)".to_owned();
    }
    let mut out = String::new();
    for p in prior {
        let f = &p.finding;
        let location = if f.location.is_empty() {
            String::new()
        } else {
            format!("{} — ", f.location)
        };
        let _ = writeln!(
            out,
            "- round {} finding {}: [{}] {location}{}",
            p.round, f.n, f.category, f.text
        );
        match &p.response {
            Some(r) => {
                let status = match r.status {
                    ResponseStatus::Addressed => "addressed",
                    ResponseStatus::Deferred => "deferred",
                    ResponseStatus::Disputed => "disputed",
                };
                let reason = r
                    .reason
                    .as_deref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                let _ = writeln!(out, "  coder: {status}{reason}");
            }
            None => {
                let _ = writeln!(out, "  coder: no response");
            }
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(prior: &'a [PriorFinding], summaries: &'a [String]) -> Context<'a> {
        Context {
            run_id: "20261129-231500-a1b2c3",
            round: 2,
            attempt: 1,
            mode: Mode::Code,
            task: "Add retries",
            summaries,
            diff: "diff --git a/x b/x\n+{{task}}\n",
            coverage: None,
            since: Some("diff --git a/y b/y\n"),
            prior,
            plan: None,
        }
    }

    #[test]
    fn code_prompt_has_marker_task_diff_and_contract() {
        let summaries = vec!["Added a loop".to_owned()];
        let text = render(&Templates::shipped(), &ctx(&[], &summaries));
        assert!(text.starts_with("<!-- git-pair: 20261129-231500-a1b2c3/2/1 -->\n"));
        assert!(text.contains("Add retries"));
        assert!(text.contains("Added a loop"));
        assert!(
            text.contains("+{{task}}"),
            "placeholders inside the diff stay as they are"
        );
        assert!(text.contains("skeptical senior"));
        assert!(text.contains("untrusted"));
        assert!(
            text.trim_end().ends_with("\"location\", \"text\"}]}."),
            "{text}"
        );
        assert!(text.contains("VERDICT: CHANGES_REQUESTED"));
    }

    #[test]
    fn prior_findings_make_a_scoped_rereview() {
        let prior = vec![PriorFinding {
            round: 1,
            finding: Finding {
                n: 1,
                category: "bug".into(),
                severity: None,
                location: "src/a.rs:3".into(),
                text: "retries forever".into(),
            },
            response: Some(Response {
                finding: 1,
                status: ResponseStatus::Deferred,
                reason: Some("tracked in #12".into()),
            }),
        }];
        let text = render(&Templates::shipped(), &ctx(&prior, &[]));
        assert!(text.contains("ADDRESSED or NOT ADDRESSED"));
        assert!(text.contains("round 1 finding 1: [bug] src/a.rs:3 — retries forever"));
        assert!(text.contains("coder: deferred: tracked in #12"));
        assert!(
            text.contains("diff --git a/y b/y"),
            "the since-last-review diff is shown"
        );
    }

    #[test]
    fn plan_modes_carry_the_plan() {
        let mut c = ctx(&[], &[]);
        c.mode = Mode::Plan;
        c.plan = Some("1. do x\n2. do y");
        let text = render(&Templates::shipped(), &c);
        assert!(text.contains("reviewing a plan"));
        assert!(text.contains("2. do y"));
        c.mode = Mode::CodeVsPlan;
        let text = render(&Templates::shipped(), &c);
        assert!(text.contains("The plan this change implements"));
        assert!(text.contains("diff --git a/x b/x"));
    }

    #[test]
    fn a_custom_template_always_gets_marker_and_contract() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("t.md");
        std::fs::write(&path, "Review this: {{diff}}").expect("write");
        let templates = Templates::with_override(Some(&path)).expect("loads");
        let text = render(&templates, &ctx(&[], &[]));
        assert!(text.starts_with("<!-- git-pair:"));
        assert!(text.contains("VERDICT: APPROVED"));
        std::fs::write(&path, "no diff here").expect("write");
        assert!(Templates::with_override(Some(&path)).is_err());
    }
}
