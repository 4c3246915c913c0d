//! `push` and `pull` reports: what a sync moved, what the remote had, what a pull removed,
//! and what the push's secret scan covered; and the secrets a push found (where, never what).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{Allowance, RunId};

/// `runs`: how many runs each kind of merge touched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunCounts {
    pub created: usize,
    pub fast_forwarded: usize,
    pub merged: usize,
    pub unchanged: usize,
    pub local_ahead: usize,
}

/// What happened to one ref when the remote's side was merged in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Merged {
    /// Both sides were at the same commit.
    Unchanged,
    /// The local ref already contained the other tip.
    LocalAhead,
    /// The ref did not exist locally and was created.
    Created,
    /// The local ref was behind and moved forward.
    FastForwarded,
    /// The two had diverged; the ref now points at a merge commit.
    Merged,
}

/// `removed`: local runs a pull removed because their tombstone arrived.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RemovedRuns {
    /// Runs removed here.
    pub runs: Vec<RunId>,
    /// Runs with a tombstone kept here: they hold records the dropper never saw.
    pub kept: Vec<RunId>,
    /// Runs with a tombstone kept here because they are this clone's active (unfinished)
    /// work: a fetched tombstone never deletes them; `git pair drop <run> --force` does.
    pub kept_active: Vec<RunId>,
    /// Tombstones learnt from the remote.
    pub tombstones_learnt: usize,
    /// Note lines of dropped runs removed here.
    pub note_lines: usize,
}

/// What `pull` did.
#[derive(Debug, Clone, Serialize)]
pub struct Pull {
    /// The remote's name (or the URL or path given).
    pub remote: String,
    pub runs: RunCounts,
    /// What happened to `refs/notes/pair` (null: the remote has no notes).
    pub notes: Option<Merged>,
    /// How many runs the remote has.
    pub remote_runs: usize,
    pub removed: RemovedRuns,
    /// The refreshed HANDOFF view, when a run of this branch moved.
    pub handoff_path: Option<String>,
    /// The view could not be refreshed (the pull itself succeeded): a note for stderr.
    #[serde(skip)]
    pub handoff_warning: Option<String>,
}

/// `scanned`: what the push's secret scan covered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Scanned {
    /// New commits looked at (their messages scanned).
    pub commits: usize,
    /// Blobs scanned.
    pub blobs: usize,
    /// Bytes scanned.
    pub bytes: u64,
    /// Blobs not scanned: binary, or larger than the cap.
    pub skipped: usize,
}

/// What `push` did.
#[derive(Debug, Clone, Serialize)]
pub struct Push {
    pub remote: String,
    /// Refs published: runs, the notes and tombstones.
    pub pushed: usize,
    pub pushed_runs: usize,
    pub pushed_notes: bool,
    pub pushed_tombstones: usize,
    /// Runs deleted on the remote because they are tombstoned here.
    pub removed_runs: Vec<RunId>,
    /// Push attempts made (1 when nobody pushed first).
    pub attempts: u32,
    /// What merging the remote's state in first did locally.
    pub runs: RunCounts,
    pub notes: Option<Merged>,
    pub removed: RemovedRuns,
    pub scanned: Scanned,
    /// Findings let through by an allowance.
    pub allowed: Vec<PushFinding>,
    /// Allowances recorded now, by run.
    pub allowances_recorded: BTreeMap<String, Vec<String>>,
    pub handoff_path: Option<String>,
    /// The view could not be refreshed (the push itself succeeded): a note for stderr.
    #[serde(skip)]
    pub handoff_warning: Option<String>,
}

/// A secret in what a push would publish: where, never what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PushFinding {
    /// The run it is in (`None`: `refs/notes/pair`).
    pub run: Option<crate::model::RunId>,
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

    /// The allowance that would let it through (a blob the scanner could not read:
    /// `unscanned:<path>`, from `--allow-unscanned <path>`).
    pub fn allowance(&self) -> Allowance {
        Allowance {
            kind: if self.is_unscanned() {
                "unscanned".to_owned()
            } else {
                self.kind.clone()
            },
            path: self.path.clone(),
        }
    }

    /// Whether this is a blob the scanner could not read (binary, or over the scan limit).
    pub fn is_unscanned(&self) -> bool {
        self.kind.starts_with("unscanned-")
    }

    /// Whether this is a secret the scanner found (not an unreadable blob, a blob a review
    /// flagged or history outside `refs/pair`).
    pub fn is_secret(&self) -> bool {
        !self.is_unscanned()
            && self.kind != "flagged-by-review"
            && self.kind != "unpublished-history"
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
    let secrets = findings.iter().filter(|f| f.is_secret()).count();
    let what = if secrets == findings.len() {
        format!("{secrets} secret{}", if secrets == 1 { "" } else { "s" })
    } else {
        let n = findings.len();
        format!(
            "{n} thing{} it will not publish unchecked",
            if n == 1 { "" } else { "s" }
        )
    };
    format!(
        "{what} in what it would publish: {}{}",
        listed.join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        }
    )
}
