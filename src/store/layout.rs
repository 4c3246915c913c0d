//! The layout inside a run's tree: where each round's stored material lives. The only code
//! that spells these paths; everything else names material by [`Material`].

use crate::model::{CheckpointId, Manifest, RunId};

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

/// Where a checkpoint's work-tree snapshot lives in its run's tree (a subtree, like a
/// reviewed snapshot, so it travels with the run and stays reachable).
pub(crate) fn checkpoint_snapshot_path(id: &CheckpointId) -> String {
    format!("checkpoints/{id}/snapshot")
}

/// The namespace of run refs.
pub const RUNS_PREFIX: &str = "refs/pair/runs/";
pub(crate) const MANIFEST: &str = "manifest.json";
pub(crate) const RECORDS: &str = "records";
/// The full ref name of a run.
pub fn run_ref(run_id: &RunId) -> String {
    format!("{RUNS_PREFIX}{run_id}")
}

/// Orders record file names by their numeric seq, then by name, so the order is the same on
/// every machine.
pub(crate) fn record_order(a: &str, b: &str) -> std::cmp::Ordering {
    let seq = |name: &str| -> u64 {
        name.split('-')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(u64::MAX)
    };
    seq(a).cmp(&seq(b)).then_with(|| a.cmp(b))
}

/// The kind part of a record file name `<seq>-<kind>-<id>.json` (a kind may hold `-`).
pub(crate) fn record_kind(name: &str) -> Option<&str> {
    let (_, rest) = name.strip_suffix(".json")?.split_once('-')?;
    let (kind, _) = rest.rsplit_once('-')?;
    Some(kind)
}

/// `manifest.json` as stored, by appends and merges alike: compact JSON (the manifest grows
/// with the run and is rewritten on every append) and a final newline.
pub(crate) fn manifest_json(manifest: &Manifest) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(manifest).expect("manifest serializes");
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_kinds_are_read_from_file_names() {
        for (name, kind) in [
            ("000001-start-0a1b2c3d4e5f.json", Some("start")),
            (
                "000004-review-dispatch-0a1b2c3d4e5f.json",
                Some("review-dispatch"),
            ),
            ("000005-review-0a1b2c3d4e5f.json", Some("review")),
            ("000005-review.json", None),
            ("notes.txt", None),
        ] {
            assert_eq!(record_kind(name), kind, "{name}");
        }
    }

    #[test]
    fn records_order_by_numeric_seq_then_name() {
        let mut names = vec![
            "000010-coder-a.json",
            "000002-coder-b.json",
            "000002-coder-a.json",
            "1000000-coder-z.json",
        ];
        names.sort_by(|a, b| record_order(a, b));
        assert_eq!(
            names,
            [
                "000002-coder-a.json",
                "000002-coder-b.json",
                "000010-coder-a.json",
                "1000000-coder-z.json"
            ]
        );
    }
}
