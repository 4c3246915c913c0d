//! The `demo` report: where the throwaway loop ran, its run and its two verdicts; the
//! transcript and the PR body are for people only.

use serde::Serialize;

/// What `demo` did.
#[derive(Debug, Clone, Serialize)]
pub struct Demo {
    /// The demo repository (removed afterwards unless kept).
    pub repo: String,
    /// `--keep`: the repository stays.
    pub kept: bool,
    pub run_id: String,
    /// The first review's verdict, then the second's.
    pub verdicts: Vec<Option<String>>,
    pub pr_body_path: String,
    /// Each command run, with what it printed.
    #[serde(skip)]
    pub steps: Vec<Step>,
    /// The rendered PR body.
    #[serde(skip)]
    pub pr_body: String,
}

/// One `git pair` command of the demo and its human output.
#[derive(Debug, Clone)]
pub struct Step {
    /// The arguments after `git pair` (without `-C`).
    pub args: Vec<String>,
    pub output: String,
}
