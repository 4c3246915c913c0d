//! The renderer against `git diff A B`, byte for byte, on fixture histories.

use git_pair::diff::{self, Options};

use crate::common::{self, assert_same_bytes, git_ok, git_str, oid};

const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Compares our rendering of `old..new` with git's; `old` `None` is the empty tree.
fn compare(repo_path: &std::path::Path, repo: &gix::Repository, old: Option<&str>, new: &str) {
    let expected = git_ok(repo_path, &["diff", old.unwrap_or(EMPTY_TREE), new]);
    let files = diff::diff_trees(repo, old.map(oid), oid(new), &Options::default())
        .unwrap_or_else(|e| panic!("diff {old:?}..{new}: {e}"));
    let mut ours = Vec::new();
    diff::render(&files, &mut ours).expect("writing to memory");
    let subject = git_str(repo_path, &["log", "-1", "--format=%s", new]);
    assert_same_bytes(&ours, &expected, &format!("commit '{subject}' ({new})"));
}

fn compare_history(repo_path: &std::path::Path) -> usize {
    let repo = common::open(repo_path);
    let commits = git_str(repo_path, &["rev-list", "--reverse", "HEAD"]);
    let mut previous: Option<String> = None;
    let mut count = 0;
    for commit in commits.lines() {
        compare(repo_path, &repo, previous.as_deref(), commit);
        previous = Some(commit.to_owned());
        count += 1;
    }
    count
}

#[test]
fn every_diff_case_matches_git() {
    let fixture = common::fixture("diff-cases", &[]);
    let compared = compare_history(&fixture.path);
    assert!(compared >= 30, "the fixture has one commit per case");
}

#[test]
fn diff_against_an_unborn_base_is_against_the_empty_tree() {
    let fixture = common::fixture("diff-cases", &[]);
    let repo = common::open(&fixture.path);
    let head = git_str(&fixture.path, &["rev-parse", "HEAD"]);
    compare(&fixture.path, &repo, None, &head);
}

/// Hundreds of generated commits (edits, moves, renames, mode changes, binary, latin-1, CRLF,
/// symlinks). Renames are detected with git's own algorithm (exact, then unique basenames at
/// 75%, then the best pairs of the similarity matrix, all scored with git's chunk-hash
/// similarity), so pairs near the 50% threshold are expected to match git exactly; a
/// mismatch there is a bug, not a tolerance.
#[test]
fn long_generated_history_matches_git_commit_by_commit() {
    for seed in ["42", "7"] {
        let fixture = common::fixture("long-history", &["300", seed]);
        let compared = compare_history(&fixture.path);
        assert_eq!(compared, 301, "seed {seed}");
    }
}

/// More seeds, for stress runs: `STRESS_SEEDS="1 2 3" cargo test --test it -- --ignored stress`.
#[test]
#[ignore = "slow; run on demand with STRESS_SEEDS"]
fn stress_more_generated_histories() {
    let seeds = std::env::var("STRESS_SEEDS").unwrap_or_else(|_| "1 2 3".to_owned());
    for seed in seeds.split_whitespace() {
        let fixture = common::fixture("long-history", &["400", seed]);
        compare_history(&fixture.path);
    }
}

/// git prints more than 7 hex digits when another object shares them; find two blobs whose
/// ids share 7 digits (a birthday search over a few ten thousand hashes), commit one and store
/// the other, loose and then packed.
#[test]
fn abbreviations_grow_when_another_object_shares_the_prefix() {
    let mut seen = std::collections::HashMap::new();
    let (first, second) = (0u32..)
        .find_map(|i| {
            let content = format!("collision candidate {i}\n");
            let id = gix::objs::compute_hash(
                gix::hash::Kind::Sha1,
                gix::objs::Kind::Blob,
                content.as_bytes(),
            )
            .expect("hash");
            let key = id.to_hex_with_len(7).to_string();
            seen.insert(key, content.clone())
                .map(|other| (other, content))
        })
        .expect("a 28-bit collision exists among 2^32 candidates");

    let temp = common::empty_repo();
    std::fs::write(temp.path.join("f"), "base\n").expect("write");
    git_ok(&temp.path, &["add", "f"]);
    git_ok(&temp.path, &["commit", "-qm", "base"]);
    std::fs::write(temp.path.join("f"), &first).expect("write");
    git_ok(&temp.path, &["commit", "-qam", "collide"]);
    let other = temp.path.join("other");
    std::fs::write(&other, &second).expect("write");
    let other_id = git_str(
        &temp.path,
        &["hash-object", "-w", other.to_str().expect("UTF-8 path")],
    );
    git_ok(&temp.path, &["tag", "keep-colliding-blob", &other_id]);

    let head = git_str(&temp.path, &["rev-parse", "HEAD"]);
    let parent = git_str(&temp.path, &["rev-parse", "HEAD~1"]);
    let expected = git_ok(&temp.path, &["diff", &parent, &head]);
    assert!(
        String::from_utf8_lossy(&expected)
            .lines()
            .any(|l| l.starts_with("index ") && l.len() > "index 1234567..1234567 100644".len()),
        "the fixture really needs a longer abbreviation"
    );
    compare(&temp.path, &common::open(&temp.path), Some(&parent), &head);
    git_ok(&temp.path, &["repack", "-qad"]);
    git_ok(&temp.path, &["prune-packed"]);
    let loose = temp
        .path
        .join(".git/objects")
        .join(&other_id[..2])
        .join(&other_id[2..]);
    assert!(!loose.exists(), "the colliding blob is now packed");
    compare(&temp.path, &common::open(&temp.path), Some(&parent), &head);
}

/// Renames around the 50% threshold: sources deleted and destinations added in one commit,
/// sharing 40%..60% of their lines, with CRLF and unterminated last lines, several sources per
/// destination (best score, then same basename, then order), and basenames unique on both sides
/// (the 75% shortcut). Similarity is computed with git's own chunk-hash estimate, so every
/// pairing and every `similarity index` must equal git's.
#[test]
fn renames_near_the_threshold_pair_like_git() {
    let temp = common::empty_repo();
    let mut base = String::new();
    let mut change = String::new();
    for (n, shared) in (40..=60).enumerate() {
        let eol = if n % 3 == 0 { "\\r\\n" } else { "\\n" };
        let tail = if n % 4 == 0 { "" } else { eol };
        // `shared` of 100 lines kept, the rest replaced; lines differ in length so scores vary.
        base.push_str(&format!(
            "for i in $(seq 1 100); do printf 'line %d of source {n} padded{}{eol}' $i; done >src_{n}.txt\n",
            "x".repeat(n % 7)
        ));
        change.push_str(&format!(
            "{{ for i in $(seq 1 {shared}); do printf 'line %d of source {n} padded{}{eol}' $i; done; for i in $(seq {} 100); do printf 'new %d in {n}{eol}' $i; done; printf 'end{tail}'; }} >dst_{n}.txt\nrm src_{n}.txt\n",
            "x".repeat(n % 7),
            shared + 1
        ));
    }
    // Competing sources for one destination, and a unique-basename pair below 75%.
    base.push_str("mkdir -p a b c && seq 1 60 >a/data.txt && seq 1 60 | sed 's/5/five/' >b/data.txt && seq 1 40 >c/unique.txt\n");
    change.push_str("rm a/data.txt b/data.txt c/unique.txt && mkdir -p d && seq 1 61 >d/data.txt && { seq 1 28; seq 100 115; } >d/unique.txt\n");
    common::sh(
        &temp.path,
        &format!(
            "{base}git add -A && git commit -qm sources\n{change}git add -A && git commit -qm renames"
        ),
    );
    let repo = common::open(&temp.path);
    let head = git_str(&temp.path, &["rev-parse", "HEAD"]);
    let parent = git_str(&temp.path, &["rev-parse", "HEAD~1"]);
    let git = git_ok(&temp.path, &["diff", "--stat", &parent, &head]);
    assert!(
        String::from_utf8_lossy(&git).contains("=>"),
        "some pairs are renames"
    );
    compare(&temp.path, &repo, Some(&parent), &head);
}
