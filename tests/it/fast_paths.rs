//! The benchmark-justified fast paths against git's own answer, on random inputs. Rename
//! scoring is checked here through the public diff API (random blob pairs, our rename pairs and
//! similarity against `git diff -M --raw` on the same trees); the work-tree clean check and the
//! pack writer are private and are checked by property tests next to them
//! (`src/worktree/fast.rs`, `src/worktree/snapshot/pack.rs`).

use std::collections::BTreeSet;

use git_pair::diff::{ChangeKind, Differ, Options};
use proptest::prelude::*;

use crate::common::{self, git_ok, git_str, oid};

/// A file's content as line numbers out of a small vocabulary: random files then share lines
/// with each other by chance, and edits keep or drop whole lines, which is what the
/// similarity estimate counts.
fn content(lines: &[u8]) -> String {
    lines
        .iter()
        .map(|&l| format!("line {l} {}\n", "~".repeat(usize::from(l % 5))))
        .collect()
}

/// One destination: derived from a source (some of its lines kept, new ones appended) or not.
#[derive(Debug, Clone)]
struct Destination {
    basename: usize,
    from: usize,
    keep: Vec<bool>,
    added: Vec<u8>,
}

const BASENAMES: [&str; 3] = ["a.txt", "b.txt", "c.md"];

fn sources() -> impl Strategy<Value = Vec<(usize, Vec<u8>)>> {
    proptest::collection::vec(
        (
            0..BASENAMES.len(),
            proptest::collection::vec(0u8..40, 1..30),
        ),
        1..5,
    )
}

fn destinations() -> impl Strategy<Value = Vec<Destination>> {
    proptest::collection::vec(
        (
            0..BASENAMES.len(),
            // Mostly an existing source; now and then none (an unrelated new file).
            0usize..6,
            // Mostly kept lines, so that scores land around git's 50% threshold.
            proptest::collection::vec(proptest::bool::weighted(0.8), 30),
            proptest::collection::vec(0u8..60, 0..8),
        )
            .prop_map(|(basename, from, keep, added)| Destination {
                basename,
                from,
                keep,
                added,
            }),
        1..5,
    )
}

/// `(old path, new path, similarity %)` of every rename, and the paths only added or deleted.
type Answer = (BTreeSet<(String, String, u32)>, BTreeSet<String>);

fn git_answer(repo: &std::path::Path, old: &str, new: &str) -> Answer {
    let raw = git_str(repo, &["diff", "-M", "--raw", "--no-abbrev", old, new]);
    let mut renames = BTreeSet::new();
    let mut others = BTreeSet::new();
    for line in raw.lines() {
        let (meta, paths) = line.split_once('\t').expect("a raw line has paths");
        let status = meta.rsplit(' ').next().expect("a status");
        let paths: Vec<&str> = paths.split('\t').collect();
        match status.strip_prefix('R') {
            Some(score) => {
                renames.insert((
                    paths[0].to_owned(),
                    paths[1].to_owned(),
                    score.parse().expect("a rename score"),
                ));
            }
            None => {
                others.insert(format!("{status} {}", paths[0]));
            }
        }
    }
    (renames, others)
}

fn our_answer(repo: &std::path::Path, old: &str, new: &str) -> Answer {
    let gix_repo = common::open(repo);
    let mut differ = Differ::new(&gix_repo, Options::default()).expect("differ");
    let changes = differ
        .changes(Some(oid(old)), oid(new))
        .expect("changes between two commits");
    let mut renames = BTreeSet::new();
    let mut others = BTreeSet::new();
    for c in changes {
        let old_path = String::from_utf8(c.old_path.to_vec()).expect("utf-8 path");
        let new_path = String::from_utf8(c.new_path.to_vec()).expect("utf-8 path");
        match c.kind {
            ChangeKind::Renamed { similarity } => {
                renames.insert((old_path, new_path, similarity));
            }
            ChangeKind::Added => {
                others.insert(format!("A {new_path}"));
            }
            ChangeKind::Deleted => {
                others.insert(format!("D {old_path}"));
            }
            ChangeKind::Modified | ChangeKind::TypeChanged => {
                others.insert(format!("M {new_path}"));
            }
        }
    }
    (renames, others)
}

proptest! {
    // Each case builds a repository with two commits and runs git: a few dozen cases keep
    // the run to seconds, and every run draws new ones.
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Sources deleted and destinations added in one commit, the destinations random edits of
    /// random sources (or of nothing) with basenames shared by chance: our rename pairs and
    /// similarity percentages are git's.
    #[test]
    fn rename_pairs_and_scores_are_gits(sources in sources(), destinations in destinations()) {
        let temp = common::empty_repo();
        let root = &temp.path;
        for (i, (basename, lines)) in sources.iter().enumerate() {
            let path = root.join(format!("s{i}/{}", BASENAMES[*basename]));
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, content(lines)).expect("write source");
        }
        git_ok(root, &["add", "-A"]);
        git_ok(root, &["commit", "-q", "-m", "sources"]);
        let old = git_str(root, &["rev-parse", "HEAD"]);
        for i in 0..sources.len() {
            std::fs::remove_dir_all(root.join(format!("s{i}"))).expect("remove source");
        }
        for (j, d) in destinations.iter().enumerate() {
            let mut lines: Vec<u8> = match sources.get(d.from) {
                Some((_, from)) => from
                    .iter()
                    .zip(&d.keep)
                    .filter(|(_, keep)| **keep)
                    .map(|(l, _)| *l)
                    .collect(),
                None => Vec::new(),
            };
            lines.extend(&d.added);
            if lines.is_empty() {
                lines.push(59);
            }
            let path = root.join(format!("d{j}/{}", BASENAMES[d.basename]));
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, content(&lines)).expect("write destination");
        }
        git_ok(root, &["add", "-A"]);
        git_ok(root, &["commit", "-q", "-m", "destinations"]);
        let new = git_str(root, &["rev-parse", "HEAD"]);
        prop_assert_eq!(our_answer(root, &old, &new), git_answer(root, &old, &new));
    }
}
