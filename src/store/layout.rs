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
        ReviewDir::Round(round).path(self)
    }
}

/// Whose review stored material belongs to: a coder round's (`reviews/<n>/`), or one
/// dispatch of a PR's final review (`pr/<number>/<attempt>/`, apart from the rounds' so the
/// two never collide; it keeps no snapshot subtree: the PR's head is the remote's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewDir {
    Round(u32),
    Pr { number: u64, attempt: u32 },
}

impl ReviewDir {
    /// The path of `material` inside the run's tree.
    pub fn path(self, material: Material) -> String {
        match self {
            ReviewDir::Round(round) => format!("reviews/{round}/{}", material.file_name()),
            ReviewDir::Pr { number, attempt } => {
                format!("pr/{number}/{attempt}/{}", material.file_name())
            }
        }
    }
}

/// Where a path inside a run's tree sits, for naming what a scan found there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    /// A file of the work-tree snapshot reviewed in `round`; `file` is its path in the
    /// work tree.
    Snapshot { round: u32, file: &'a str },
    /// A file of a checkpoint's work-tree snapshot; `file` is its path in the work tree.
    CheckpointSnapshot { file: &'a str },
    /// Other stored material of `round` (`reviews/<n>/prompt.md`, …).
    Material { round: u32 },
    /// A record (`records/…`).
    Record,
    /// Anything else (`manifest.json`, merge leftovers).
    Other,
}

impl Place<'_> {
    /// Where `path` (relative to a run tree's root) sits.
    pub fn of(path: &str) -> Place<'_> {
        if path.starts_with("records/") {
            return Place::Record;
        }
        if let Some(rest) = path.strip_prefix("checkpoints/")
            && let Some((_, rest)) = rest.split_once('/')
            && let Some(file) = rest.strip_prefix("snapshot/")
        {
            return Place::CheckpointSnapshot { file };
        }
        let Some(rest) = path.strip_prefix("reviews/") else {
            return Place::Other;
        };
        let Some((round, rest)) = rest.split_once('/') else {
            return Place::Other;
        };
        let Ok(round) = round.parse::<u32>() else {
            return Place::Other;
        };
        match rest.strip_prefix(Material::Snapshot.file_name()) {
            Some(file) if file.starts_with('/') => Place::Snapshot {
                round,
                file: &file[1..],
            },
            _ => Place::Material { round },
        }
    }
}

/// Whether the subtree at `path` is a work-tree snapshot: round `n`'s reviewed snapshot
/// (`reviews/<n>/snapshot`, `Some(n)`) or a checkpoint's (`checkpoints/<id>/snapshot`,
/// `Some(u32::MAX)`: after every round); `None` for anything else.
pub(crate) fn snapshot_round(path: &str) -> Option<u32> {
    if let Some(rest) = path.strip_prefix("checkpoints/") {
        let (_, name) = rest.split_once('/')?;
        return (name == "snapshot").then_some(u32::MAX);
    }
    let rest = path.strip_prefix("reviews/")?;
    let (round, name) = rest.split_once('/')?;
    (name == Material::Snapshot.file_name())
        .then(|| round.parse().ok())
        .flatten()
}

/// Where a panel member's finished part of a dispatch (its attempts, raw output included) is
/// stored as it finishes: `reviews/<round>/members/<dispatch>-<slot>.json`.
pub fn member_path(round: u32, dispatch: &str, slot: u32) -> String {
    format!("reviews/{round}/members/{dispatch}-{slot}.json")
}

/// Where a checkpoint's work-tree snapshot lives in its run's tree (a subtree, like a
/// reviewed snapshot, so it travels with the run and stays reachable).
pub(crate) fn checkpoint_snapshot_path(id: &CheckpointId) -> String {
    format!("checkpoints/{id}/snapshot")
}

/// The namespace of run refs.
pub const RUNS_PREFIX: &str = "refs/pair/runs/";
/// Where fetched copies of remotes' refs live (`refs/pair-remotes/<remote>/pair/…`).
pub const STAGING_ROOT: &str = "refs/pair-remotes/";
pub(crate) const MANIFEST: &str = "manifest.json";
pub(crate) const RECORDS: &str = "records";
/// The full ref name of a run.
pub fn run_ref(run_id: &RunId) -> String {
    format!("{RUNS_PREFIX}{run_id}")
}

/// The run id a ref named `name` stands for under the namespace `prefix` (`refs/pair/runs/`,
/// a staging copy's, a tombstone's), or `None` when the rest of the name is not a run id. The
/// one place a ref name becomes a run id: git allows any name under the prefix (a foreign ref
/// pushed there, a half-written lock), and such a ref is not a run, so listings skip it
/// rather than fail on it.
pub fn ref_run_id(name: &str, prefix: &str) -> Option<RunId> {
    RunId::parse(name.strip_prefix(prefix)?).ok()
}

/// How many record positions share one bucket of `records/`: a record lives at
/// `records/<bucket>/<name>` with bucket `seq / RECORDS_PER_BUCKET`, so an append rewrites one
/// bucket of at most this many entries and a `records/` tree of one entry per bucket, never a
/// tree of every record (runs written before this kept every record directly in `records/`;
/// both are read, and the first append to such a run moves its records into buckets).
pub(crate) const RECORDS_PER_BUCKET: u64 = 256;

/// The bucket directory name of record position `seq`: zero-padded to at least four digits,
/// so buckets sort in order by name as git sorts tree entries.
pub(crate) fn record_bucket(seq: u64) -> String {
    format!("{:04}", seq / RECORDS_PER_BUCKET)
}

/// Whether an entry name of `records/` is a bucket (all digits, at least four) rather than a
/// record file of the flat layout.
pub(crate) fn is_record_bucket(name: &str) -> bool {
    name.len() >= 4 && name.bytes().all(|b| b.is_ascii_digit())
}

/// The numeric position a record file name starts with.
pub(crate) fn record_seq(name: &str) -> Option<u64> {
    name.split('-').next().and_then(|s| s.parse().ok())
}

/// Where the record file `name` lives in a run's tree written with buckets:
/// `records/<bucket>/<name>` (`None` for a name with no position).
pub(crate) fn record_path(name: &str) -> Option<String> {
    Some(format!(
        "{RECORDS}/{}/{name}",
        record_bucket(record_seq(name)?)
    ))
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

/// `manifest.json` as stored, by appends and merges alike: compact JSON (rewritten on every
/// append; bounded, see [`Manifest`]'s round window) and a final newline.
pub(crate) fn manifest_json(manifest: &Manifest) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(manifest).expect("manifest serializes");
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_inside_a_run_tree() {
        assert_eq!(
            Place::of("reviews/2/snapshot/config/.env"),
            Place::Snapshot {
                round: 2,
                file: "config/.env"
            }
        );
        assert_eq!(
            Place::of("reviews/12/prompt.md"),
            Place::Material { round: 12 }
        );
        assert_eq!(
            Place::of("reviews/3/snapshotx"),
            Place::Material { round: 3 }
        );
        assert_eq!(Place::of("records/000001-start-x.json"), Place::Record);
        assert_eq!(Place::of("records/0000/000001-start-x.json"), Place::Record);
        assert_eq!(Place::of("manifest.json"), Place::Other);
        assert_eq!(Place::of("reviews/x/prompt.md"), Place::Other);
        assert_eq!(
            Place::of("checkpoints/c1/snapshot/src/a.rs"),
            Place::CheckpointSnapshot { file: "src/a.rs" }
        );
        assert_eq!(Place::of("checkpoints/c1/packet.json"), Place::Other);
        assert_eq!(snapshot_round("checkpoints/c1/snapshot"), Some(u32::MAX));
        assert_eq!(snapshot_round("reviews/4/snapshot"), Some(4));
        assert_eq!(snapshot_round("reviews/4/snapshot/a"), None);
        assert_eq!(snapshot_round("reviews/4/prompt.md"), None);
        let pr = ReviewDir::Pr {
            number: 7,
            attempt: 2,
        };
        assert_eq!(pr.path(Material::Output), "pr/7/2/output.txt");
        assert_eq!(Place::of(&pr.path(Material::Output)), Place::Other);
        assert_eq!(snapshot_round(&pr.path(Material::Snapshot)), None);
    }

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
    fn records_go_to_buckets_of_256_positions_that_sort_by_name() {
        assert_eq!(
            record_path("000001-start-0a1b2c3d4e5f.json").as_deref(),
            Some("records/0000/000001-start-0a1b2c3d4e5f.json")
        );
        assert_eq!(record_bucket(255), "0000");
        assert_eq!(record_bucket(256), "0001");
        assert_eq!(record_bucket(3_000_000), "11718");
        assert_eq!(record_path("notes.txt"), None);
        assert!(is_record_bucket("0003") && is_record_bucket("11718"));
        assert!(!is_record_bucket("000001-start-x.json") && !is_record_bucket("003"));
        let mut buckets: Vec<String> = [9_999u64, 0, 2_559_999, 256].map(record_bucket).to_vec();
        buckets.sort();
        assert_eq!(buckets, ["0000", "0001", "0039", "9999"]);
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
