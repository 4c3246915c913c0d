//! What `push` found in what it would publish (SPEC §14): where each secret is (run, round,
//! path, line, kind), never what; and the one-line summary a refusal carries. Plain data,
//! shared by the push scan ([`super::scan`]) and the operations' error type.

use serde::Serialize;

use crate::model::Allowance;

/// A secret in what a push would publish: where, never what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PushFinding {
    /// The run it is in (`None`: `refs/notes/pair`).
    pub run: Option<String>,
    /// The round whose material or snapshot holds it.
    pub round: Option<u32>,
    pub kind: String,
    /// The path an allowance names: a snapshot file's work-tree path, else the path inside
    /// the run's tree (`reviews/2/output.txt`, `records/…`), `commit <id>` or `notes/<id>`.
    pub path: String,
    pub line: usize,
    /// `snapshot`, `checkpoint snapshot`, `review material`, `record`, `run state`,
    /// `commit message`, `note` or `tombstone`.
    pub place: &'static str,
}

impl PushFinding {
    /// `run R round N: kind in path:line (place)`.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        if let Some(run) = &self.run {
            out.push_str(&format!("run {run}"));
            if let Some(round) = self.round {
                out.push_str(&format!(" round {round}"));
            }
            out.push_str(": ");
        }
        out.push_str(&format!("{} in {}", self.kind, self.path));
        if self.line > 0 {
            out.push_str(&format!(":{}", self.line));
        }
        out.push_str(&format!(" ({})", self.place));
        out
    }

    /// The allowance that would let it through.
    pub fn allowance(&self) -> Allowance {
        Allowance {
            kind: self.kind.clone(),
            path: self.path.clone(),
        }
    }
}

/// One line for a refusal: how many secrets, and where (the first ten).
pub fn summarize(findings: &[PushFinding]) -> String {
    let listed: Vec<String> = findings
        .iter()
        .take(10)
        .map(PushFinding::describe)
        .collect();
    let more = findings.len().saturating_sub(listed.len());
    format!(
        "{} secret{} in what it would publish: {}{}",
        findings.len(),
        if findings.len() == 1 { "" } else { "s" },
        listed.join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    )
}
