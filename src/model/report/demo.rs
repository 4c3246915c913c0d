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

/// One command of the demo (`git pair …`, or the `git` a coder would run) and its human output.
#[derive(Debug, Clone)]
pub struct Step {
    /// `git pair`, or `git` for the commit of the approved work.
    pub program: &'static str,
    /// The arguments after the program (without `-C`).
    pub args: Vec<String>,
    pub output: String,
}
