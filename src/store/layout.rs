//! The layout inside a run's tree: where each round's stored material lives. The only code
//! that spells these paths; everything else names material by [`Material`].

use gix::ObjectId;

use super::{Append, Content, Error, Repo, RunState};

/// One kind of stored material of a reviewed round (`reviews/<n>/…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Material {
    /// `prompt.md`: the prompt of the dispatch's first attempt.
    Prompt,
    /// `diff.patch`: the diff the reviewer saw (after redaction and the byte budget).
    Diff,
    /// `coverage.json`: what the packet held.
    Coverage,
    /// `context.json`: the prompt's parts, so a resumed dispatch renders the same prompt.
    Context,
    /// `output.txt`: every attempt's raw stdout.
    Output,
    /// `attempts.json`: argv, exit status, stderr tail and duration of every attempt.
    Attempts,
    /// `result.json`: the round's verdict and findings.
    Result,
    /// `probe.json`: how each reviewer was bound.
    Probe,
    /// `snapshot`: the reviewed work-tree snapshot, a subtree.
    Snapshot,
}

impl Material {
    /// The file (or subtree) name inside the round's directory.
    pub fn file_name(self) -> &'static str {
        match self {
            Material::Prompt => "prompt.md",
            Material::Diff => "diff.patch",
            Material::Coverage => "coverage.json",
            Material::Context => "context.json",
            Material::Output => "output.txt",
            Material::Attempts => "attempts.json",
            Material::Result => "result.json",
            Material::Probe => "probe.json",
            Material::Snapshot => "snapshot",
        }
    }

    /// What it is, in a message: "no stored <what>".
    pub fn what(self) -> &'static str {
        match self {
            Material::Prompt => "prompt",
            Material::Diff => "diff",
            Material::Coverage => "coverage",
            Material::Context => "prompt context",
            Material::Output => "output",
            Material::Attempts => "attempts",
            Material::Result => "result",
            Material::Probe => "probe report",
            Material::Snapshot => "snapshot",
        }
    }

    /// The path inside the run's tree for round `round`.
    pub fn path(self, round: u32) -> String {
        format!("reviews/{round}/{}", self.file_name())
    }
}

impl Append {
    /// Stores `content` as `material` of round `round` with this record.
    pub fn put(&mut self, round: u32, material: Material, content: Content) {
        self.files.push((material.path(round), content));
    }
}

impl Repo {
    /// The bytes of `material` of round `round`, if stored.
    pub fn round_file(
        &self,
        state: &RunState,
        round: u32,
        material: Material,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.run_file(state, &material.path(round))
    }

    /// The work-tree snapshot reviewed in round `round`, if stored.
    pub fn round_snapshot(&self, state: &RunState, round: u32) -> Result<Option<ObjectId>, Error> {
        self.run_subtree(state, &Material::Snapshot.path(round))
    }
}
