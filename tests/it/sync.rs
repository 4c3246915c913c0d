//! `push` / `pull` between clones of one bare remote over real git transport: convergence,
//! no lost record, the rejected-push retry, bad remotes, the record-union merge's algebra,
//! and notes that real git reads and writes.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use git_pair::model::{Body, Coder, ReviewDispatch, RunId};
use git_pair::store::{Append, Content, Repo, notes};

use crate::common::{Rng, TestEnv, assert_one_error_line};

/// A bare remote and clones of it, each a hermetic [`TestEnv`] (also used by `secrets`).
pub(crate) struct Net {
    _root: tempfile::TempDir,
    pub(crate) remote: PathBuf,
    pub(crate) clones: Vec<TestEnv>,
}

impl Net {
    /// A bare remote holding one commit on `main`, and `n` clones of it.
    pub(crate) fn new(n: usize) -> Net {
        let root = tempfile::tempdir().expect("temp dir");
        let seed = TestEnv::new();
        let remote = root.path().join("remote.git");
        seed.git(&["clone", "-q", "--bare", ".", path(&remote)]);
        let clones = (0..n).map(|_| clone_of(&remote)).collect();
        Net {
            _root: root,
            remote,
            clones,
        }
    }

    /// An independent copy of the whole network (remote and clones, byte for byte), for
    /// playing the same state out in another order.
    fn duplicate(&self) -> Net {
        let root = tempfile::tempdir().expect("temp dir");
        let remote = root.path().join("remote.git");
        copy_dir(&self.remote, &remote);
        let clones = self
            .clones
            .iter()
            .map(|c| {
                let copy = TestEnv::empty();
                copy_dir(&c.repo, &copy.repo);
                copy.git(&["remote", "set-url", "origin", path(&remote)]);
                copy
            })
            .collect();
        Net {
            _root: root,
            remote,
            clones,
        }
    }

    /// `git for-each-ref` of the remote's pair refs, read with real git.
    pub(crate) fn remote_refs(&self) -> String {
        self.clones[0].git(&[
            "--git-dir",
            path(&self.remote),
            "for-each-ref",
            "refs/pair",
            "refs/notes",
        ])
    }
}

fn clone_of(remote: &Path) -> TestEnv {
    let env = TestEnv::empty();
    env.git(&["clone", "-q", path(remote), "."]);
    env
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .expect("cp");
    assert!(status.success());
}

pub(crate) fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

fn tip(env: &TestEnv, run_id: &str) -> String {
    env.git(&["rev-parse", &format!("refs/pair/runs/{run_id}")])
        .trim()
        .to_owned()
}

fn tree(env: &TestEnv, run_id: &str) -> String {
    env.git(&["rev-parse", &format!("refs/pair/runs/{run_id}^{{tree}}")])
        .trim()
        .to_owned()
}

fn coder_done(env: &TestEnv, summary: &str) {
    env.pair_json(&["coder-done", "--summary", summary]);
}

fn oid(hex: &str) -> ObjectId {
    ObjectId::from_hex(hex.trim().as_bytes()).expect("object id")
}

/// Two clones that started from the same run and each recorded more on their own.
fn diverged(a_records: usize, b_records: usize) -> (Net, String) {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let run_id = a.start("shared task");
    coder_done(a, "first round");
    a.pair_json(&["push"]);
    b.pair_json(&["pull"]);
    // Both machines work on the one run: B continues it too.
    b.pair_json(&["adopt", &run_id]);
    for i in 0..a_records {
        coder_done(a, &format!("A part {i}"));
    }
    for i in 0..b_records {
        coder_done(b, &format!("B part {i}"));
    }
    (net, run_id)
}

#[test]
fn two_clones_converge_to_one_tree_in_either_order_and_keep_every_record() {
    let (net1, run_id) = diverged(2, 3);
    let net2 = net1.duplicate();
    let expected_records = 1 + 1 + 2 + 3;

    // Order 1: A pushes first, B's push pulls and merges A's work first; A pulls.
    let (a, b) = (&net1.clones[0], &net1.clones[1]);
    assert_eq!(a.pair_json(&["push"])["pushed_runs"], 1);
    let pushed = b.pair_json(&["push"]);
    assert_eq!(pushed["attempts"], 1, "{pushed}");
    assert_eq!(pushed["runs"]["merged"], 1, "{pushed}");
    assert_eq!(a.pair_json(&["pull"])["runs"]["fast_forwarded"], 1);

    // Order 2, from the very same state: B first, then A, then B pulls.
    let (a2, b2) = (&net2.clones[0], &net2.clones[1]);
    b2.pair_json(&["push"]);
    assert_eq!(a2.pair_json(&["push"])["runs"]["merged"], 1);
    b2.pair_json(&["pull"]);

    let trees: Vec<String> = [a, b, a2, b2].iter().map(|e| tree(e, &run_id)).collect();
    assert!(trees.iter().all(|t| *t == trees[0]), "{trees:#?}");
    // The merge commit is deterministic too: both orders wrote the same one.
    let tips: Vec<String> = [a, b, a2, b2].iter().map(|e| tip(e, &run_id)).collect();
    assert!(tips.iter().all(|t| *t == tips[0]), "{tips:#?}");
    assert_eq!(a.records(&run_id).len(), expected_records);
    let parents = a.git(&["rev-list", "--parents", "-1", &tips[0]]);
    assert_eq!(parents.split_whitespace().count(), 3, "a merge: {parents}");

    // Nothing left to do anywhere; pulling again changes nothing.
    let before = a.pair_refs();
    let again = a.pair_json(&["pull"]);
    assert_eq!(again["runs"]["unchanged"], 1, "{again}");
    assert_eq!(a.pair_refs(), before);
    assert_eq!(a.pair_json(&["push"])["pushed"], 0);
    a.assert_fsck_clean();
    b.assert_fsck_clean();
}

/// Installs a pre-push hook in `b` that makes `a` push once, right after the remote
/// advertised its refs to `b`: `b`'s push then races `a`'s. Returns the marker file the hook
/// leaves when it ran.
fn race_next_push(a: &TestEnv, b: &TestEnv) -> PathBuf {
    let marker = b.home.join("raced");
    let hook = format!(
        "#!/bin/sh\nif [ ! -e '{marker}' ]; then\n  touch '{marker}'\n  unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE\n  cd '{a}' && '{bin}' push >/dev/null || exit 1\nfi\n",
        marker = marker.display(),
        a = a.repo.display(),
        bin = crate::common::bin(),
    );
    let hook_path = b.repo.join(".git/hooks/pre-push");
    std::fs::create_dir_all(hook_path.parent().expect("hooks dir")).expect("mkdir");
    std::fs::write(&hook_path, hook).expect("write hook");
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&hook_path)
        .status()
        .expect("chmod");
    marker
}

#[test]
fn two_clones_publishing_the_same_new_run_at_once_lose_nothing() {
    // A run the remote does not have is pushed without a lease: git's own check of the
    // advertised value must still make the loser pull, merge and retry.
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let run_id = a.start("shared task");
    coder_done(a, "first round");
    b.pair_json(&["pull", path(&a.repo)]);
    b.pair_json(&["adopt", &run_id]);
    coder_done(a, "A part");
    coder_done(b, "B part");
    assert!(
        !net.remote_refs().contains("refs/pair/runs/"),
        "not published yet"
    );
    let marker = race_next_push(a, b);

    let pushed = b.pair_json(&["push"]);
    assert!(marker.exists(), "the racing push ran");
    assert_eq!(pushed["attempts"], 2, "{pushed}");
    assert_eq!(pushed["runs"]["merged"], 1, "{pushed}");
    a.pair_json(&["pull"]);
    assert_eq!(tip(a, &run_id), tip(b, &run_id));
    // start, the shared round, A's and B's parts.
    assert_eq!(a.records(&run_id).len(), 4);
    assert!(net.remote_refs().contains(&tip(a, &run_id)));
    a.assert_fsck_clean();
}

#[test]
fn a_push_that_loses_the_race_to_another_push_pulls_merges_and_retries() {
    let (net, run_id) = diverged(1, 1);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    // B's pre-push hook runs after B fetched and the remote advertised its refs: make A
    // push right then (once), so the remote's own compare-and-swap rejects B's update.
    let marker = race_next_push(a, b);

    let pushed = b.pair_json(&["push"]);
    assert!(marker.exists(), "the racing push ran");
    assert_eq!(pushed["attempts"], 2, "{pushed}");
    assert_eq!(pushed["runs"]["merged"], 1, "{pushed}");
    assert_eq!(pushed["pushed_runs"], 1, "{pushed}");
    a.pair_json(&["pull"]);
    assert_eq!(tip(a, &run_id), tip(b, &run_id));
    assert_eq!(a.records(&run_id).len(), 4);
    assert!(net.remote_refs().contains(&tip(a, &run_id)));
}

#[test]
fn concurrent_rounds_are_both_kept_ordered_and_flagged_in_status() {
    let (net, run_id) = diverged(1, 1);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    a.pair_json(&["push"]);
    b.pair_json(&["push"]);
    a.pair_json(&["pull"]);
    let m = a.manifest(&run_id);
    assert_eq!(m["records"], 4);
    assert_eq!(m["rounds"][0]["summaries"], 3, "{m}");
    let conflicts = m["conflicts"].as_array().expect("conflicts");
    assert_eq!(conflicts.len(), 1, "{m}");
    assert!(conflicts[0].as_str().expect("text").contains("position 3"));
    let status = a.pair(&["status"]);
    assert!(
        status.stdout.contains("conflict: ") && status.stdout.contains("concurrently"),
        "{status}"
    );
    // What happened, and the way on.
    assert!(
        status.stdout.contains("two clones wrote this run at once")
            && status
                .stdout
                .contains("Read the merged story (git pair handoff)")
            && status
                .stdout
                .contains("the other runs git pair pull before it writes again"),
        "{status}"
    );
    assert_eq!(a.pair_json(&["status"])["conflicts"], m["conflicts"]);
    // Both summaries are in the transcript, in the same order on both machines.
    let (ha, hb) = (a.read("HANDOFF.md"), b.read("HANDOFF.md"));
    assert_eq!(ha, hb);
    assert!(ha.contains("A part 0") && ha.contains("B part 0"), "{ha}");
}

#[test]
fn a_second_machine_sees_the_same_next_action_and_transcript_after_pull_and_adopt() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let run_id = a.start("task on two machines");
    coder_done(a, "did the thing");
    a.pair_json(&["push"]);
    let pulled = b.pair_json(&["pull"]);
    assert_eq!(pulled["runs"]["created"], 1, "{pulled}");
    b.pair_json(&["adopt", &run_id]);
    let (sa, sb) = (a.pair_json(&["status"]), b.pair_json(&["status"]));
    assert_eq!(sb["run_id"], run_id.as_str());
    assert_eq!(sb["next_action"], "review");
    assert_eq!(sa["next_action"], sb["next_action"]);
    assert_eq!(a.read("HANDOFF.md"), b.read("HANDOFF.md"));
    // HANDOFF.md is excluded on the second machine too: the work tree stays clean.
    assert_eq!(b.git(&["status", "--porcelain"]), "");
    // The staging copy mirrors the remote; the user's remote config is untouched.
    assert_eq!(
        b.git(&[
            "rev-parse",
            &format!("refs/pair-remotes/origin/pair/runs/{run_id}")
        ]),
        a.git(&["rev-parse", &format!("refs/pair/runs/{run_id}")])
    );
    assert_eq!(
        b.git(&["config", "--get-all", "remote.origin.fetch"])
            .trim(),
        "+refs/heads/*:refs/remotes/origin/*"
    );
    assert!(
        b.git_out(&["config", "--get-all", "remote.origin.push"])
            .code
            != 0
    );
}

#[test]
fn pull_from_a_remote_without_pair_refs_is_a_no_op() {
    let net = Net::new(1);
    let a = &net.clones[0];
    let run_id = a.start("local only");
    let before = a.pair_refs();
    let out = a.pair(&["pull"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stdout.contains("nothing to pull"), "{out}");
    let v = a.pair_json(&["pull"]);
    assert_eq!(v["runs"]["created"], 0);
    assert_eq!(v["notes"], serde_json::Value::Null);
    assert_eq!(a.pair_refs(), before);
    assert!(a.records(&run_id).len() == 1);
}

#[test]
fn unreachable_or_unknown_remotes_fail_cleanly_and_touch_nothing() {
    let net = Net::new(1);
    let a = &net.clones[0];
    a.start("t");
    coder_done(a, "x");
    let before = a.pair_refs();
    let state = || {
        a.git(&[
            "for-each-ref",
            "refs/pair",
            "refs/pair-remotes",
            "refs/notes",
        ])
    };
    let full_before = state();

    let out = a.pair(&["pull", "nope"]);
    assert_one_error_line(&out, 1, "no such remote 'nope'");
    assert!(out.stderr.contains("hint: "), "{out}");
    let out = a.pair(&["push", "nope", "--json"]);
    assert_eq!(out.code, 1);
    assert!(
        out.json()["error"]
            .as_str()
            .expect("error")
            .contains("nope")
    );

    a.git(&["remote", "set-url", "origin", "/nonexistent/remote.git"]);
    for cmd in ["pull", "push"] {
        let out = a.pair(&[cmd]);
        let what = if cmd == "pull" {
            "fetch from"
        } else {
            "push to"
        };
        assert_one_error_line(&out, 1, &format!("cannot {what} 'origin'"));
        assert!(
            out.stderr
                .contains("does not appear to be a git repository"),
            "{out}"
        );
    }
    let out = a.pair(&["pull", "--", "-bad"]);
    assert_eq!(out.code, 1, "{out}");
    assert_eq!(a.pair_refs(), before);
    assert_eq!(state(), full_before);
}

#[test]
fn push_and_pull_work_with_a_url_or_path_instead_of_a_remote_name() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let run_id = a.start("t");
    let url = format!("file://{}", path(&net.remote));
    assert_eq!(a.pair_json(&["push", &url])["pushed_runs"], 1);
    assert_eq!(
        b.pair_json(&["pull", path(&net.remote)])["runs"]["created"],
        1
    );
    assert_eq!(tip(a, &run_id), tip(b, &run_id));
    assert!(net.remote_refs().contains(&run_id));
}

#[test]
fn the_merge_is_deterministic_commutative_and_idempotent() {
    let (net, run_id) = diverged(1, 2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    // Bring B's tip into A's object store without merging it.
    a.git(&[
        "fetch",
        "-q",
        path(&b.repo),
        &format!("+refs/pair/runs/{run_id}:refs/test/b"),
    ]);
    let repo = Repo::open_isolated(&a.repo).expect("open");
    let run = RunId::parse(&run_id).expect("id");
    let l = oid(&tip(a, &run_id));
    let r = oid(&a.git(&["rev-parse", "refs/test/b"]));

    let lr = repo.merge_tips(&run, l, r).expect("merge L,R");
    let rl = repo.merge_tips(&run, r, l).expect("merge R,L");
    assert_eq!(lr, rl, "merge(L,R) and merge(R,L) are the same commit");
    let m_tree = repo.commit_tree(lr).expect("tree");
    let l_tree = repo.commit_tree(l).expect("tree");
    let r_tree = repo.commit_tree(r).expect("tree");
    // Idempotent: merging the result with itself or with either side changes nothing.
    for other in [m_tree, l_tree, r_tree] {
        assert_eq!(
            repo.union_run_trees(&run, [m_tree, other])
                .expect("union")
                .tree,
            m_tree
        );
        assert_eq!(
            repo.union_run_trees(&run, [other, m_tree])
                .expect("union")
                .tree,
            m_tree
        );
    }
    // Merging a side with itself is that side (manifest recomputed identically).
    assert_eq!(
        repo.union_run_trees(&run, [l_tree, l_tree])
            .expect("union")
            .tree,
        l_tree
    );
    // The union holds exactly the records of both sides, read back with real git.
    let names = |rev: &str| -> std::collections::BTreeSet<String> {
        a.git(&["ls-tree", "-r", "--name-only", &format!("{rev}:records")])
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let union: std::collections::BTreeSet<String> = names(&l.to_string())
        .union(&names(&r.to_string()))
        .cloned()
        .collect();
    assert_eq!(names(&lr.to_string()), union);
    assert_eq!(union.len(), 1 + 1 + 1 + 2);
    // The stored manifest is the projection of the union.
    let manifest: serde_json::Value =
        serde_json::from_str(&a.git(&["show", &format!("{lr}:manifest.json")])).expect("json");
    assert_eq!(manifest["records"], 5);
    assert_eq!(manifest["last_seq"], 4);
    // Integrating: A is behind nothing and ahead of nothing: a merge, then unchanged.
    assert_eq!(
        repo.integrate_run(&run, r).expect("integrate"),
        git_pair::store::Integration::Merged
    );
    assert_eq!(oid(&tip(a, &run_id)), lr);
    assert_eq!(
        repo.integrate_run(&run, r).expect("again"),
        git_pair::store::Integration::LocalAhead
    );
    assert_eq!(
        repo.integrate_run(&run, lr).expect("again"),
        git_pair::store::Integration::Unchanged
    );
    a.assert_fsck_clean();
}

fn append_with_files(repo: &Repo, run: &RunId, body: Body, files: Vec<(String, Content)>) {
    repo.append(run, |_| {
        let mut append = Append::record(body.clone(), "test record");
        append.files = files.clone();
        Ok(append)
    })
    .expect("append");
}

fn coder_body(summary: &str) -> Body {
    Body::Coder(Coder {
        summary: summary.into(),
        tool: "claude".into(),
        findings_addressed: None,
        session_id: None,
        responses: vec![],
        extra_round: false,
        round: None,
    })
}

#[test]
fn different_files_at_one_path_are_both_kept_and_snapshots_stay_whole() {
    let (net, run_id) = diverged(0, 0);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let run = RunId::parse(&run_id).expect("id");
    let mut snapshots = Vec::new();
    for (env, side) in [(a, "A"), (b, "B")] {
        let repo = Repo::open_isolated(&env.repo).expect("open");
        // A reviewed snapshot: a tree with a file that differs per side.
        let blob = repo
            .write_blob(format!("code from {side}\n").as_bytes())
            .expect("blob");
        let mut editor = repo
            .gix()
            .edit_tree(ObjectId::empty_tree(gix::hash::Kind::Sha1))
            .expect("editor");
        editor
            .upsert("src/lib.rs", gix::object::tree::EntryKind::Blob, blob)
            .expect("upsert");
        let snapshot = editor.write().expect("write").detach();
        snapshots.push(snapshot);
        append_with_files(
            &repo,
            &run,
            Body::ReviewDispatch(ReviewDispatch {
                round: 1,
                reviewers: vec!["codex".into()],
                snapshot: snapshot.into(),
                mode: "code".into(),
                again: false,
                runner: None,
                redacted: Vec::new(),
                over_budget: false,
                parallelism: None,
                carried: Vec::new(),
            }),
            vec![
                (
                    "reviews/1/output.txt".into(),
                    Content::Blob(format!("output of {side}\n").into_bytes()),
                ),
                ("reviews/1/snapshot".into(), Content::Tree(snapshot)),
                (
                    format!("reviews/1/only-{side}.txt"),
                    Content::Blob(b"x\n".to_vec()),
                ),
            ],
        );
        append_with_files(&repo, &run, coder_body(&format!("after {side}")), vec![]);
    }
    a.pair_json(&["push"]);
    b.pair_json(&["push"]);
    a.pair_json(&["pull"]);
    assert_eq!(tree(a, &run_id), tree(b, &run_id));

    let listing = a.git(&[
        "ls-tree",
        "-r",
        "--format=%(objectname) %(path)",
        &format!("refs/pair/runs/{run_id}"),
        "reviews/1",
    ]);
    let outputs: Vec<&str> = listing
        .lines()
        .filter(|l| l.contains("output.txt"))
        .collect();
    assert_eq!(outputs.len(), 2, "{listing}");
    let id = |content: &str| {
        let f = a.home.join("content");
        std::fs::write(&f, content).expect("write");
        a.git(&["hash-object", path(&f)]).trim().to_owned()
    };
    let (ida, idb) = (id("output of A\n"), id("output of B\n"));
    let (small, large) = if ida < idb { (ida, idb) } else { (idb, ida) };
    assert!(
        listing.contains(&format!("{small} reviews/1/output.txt\n")),
        "{listing}"
    );
    assert!(
        listing.contains(&format!(
            "{large} reviews/1/output.txt.conflict-{}\n",
            &large[..12]
        )),
        "{listing}"
    );
    assert!(listing.contains("reviews/1/only-A.txt") && listing.contains("reviews/1/only-B.txt"));
    // Snapshots are kept whole: one at the path, the other beside it, never mixed.
    let top = a.git(&[
        "ls-tree",
        "--format=%(objectname) %(path)",
        &format!("refs/pair/runs/{run_id}:reviews/1"),
    ]);
    snapshots.sort();
    assert!(
        top.contains(&format!("{} snapshot\n", snapshots[0])),
        "{top}"
    );
    assert!(
        top.contains(&format!(
            "{} snapshot.conflict-{}\n",
            snapshots[1],
            &snapshots[1].to_string()[..12]
        )),
        "{top}"
    );
    assert_eq!(a.records(&run_id).len(), 2 + 4);
    a.assert_fsck_clean();
}

#[test]
fn notes_merge_by_line_union_and_real_git_reads_them() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let head = a.git(&["rev-parse", "HEAD"]).trim().to_owned();
    // A writes with real git, B with git pair, on the same commit.
    a.git(&[
        "notes",
        "--ref=pair",
        "add",
        "-m",
        "pair-run=20261129-231500-aaaaaa verdict=APPROVED rounds=1",
        &head,
    ]);
    let repo_b = Repo::open_isolated(&b.repo).expect("open");
    let line_b =
        "pair-run=20261129-231500-bbbbbb verdict=APPROVED rounds=2 reviewer=codex cost_usd=0.42";
    assert!(notes::add_line(&repo_b, oid(&head), line_b).expect("add"));
    assert!(!notes::add_line(&repo_b, oid(&head), line_b).expect("again"));
    // Enough notes on B's side that its tree fans out, on blobs written for the purpose.
    for i in 0..300 {
        let blob = repo_b
            .write_blob(format!("object {i}\n").as_bytes())
            .expect("blob");
        notes::add_line(&repo_b, blob, &format!("pair-run=x{i} verdict=APPROVED")).expect("add");
    }
    let fanout = b.git(&["ls-tree", "refs/notes/pair"]);
    assert!(
        fanout.lines().all(|l| l.contains(" tree ")),
        "fanned out:\n{fanout}"
    );
    assert_eq!(b.git(&["notes", "--ref=pair", "list"]).lines().count(), 301);
    // The reference result: git's own cat_sort_uniq merge of the same two notes refs.
    a.git(&[
        "fetch",
        "-q",
        path(&b.repo),
        "refs/notes/pair:refs/notes/from-b",
    ]);
    let reference = {
        a.git(&["update-ref", "refs/notes/reference", "refs/notes/pair"]);
        a.git(&[
            "notes",
            "--ref=reference",
            "merge",
            "-q",
            "-s",
            "cat_sort_uniq",
            "refs/notes/from-b",
        ]);
        sorted_lines(&a.git(&["notes", "--ref=reference", "list"]))
    };

    a.pair_json(&["push"]);
    let pushed = b.pair_json(&["push"]);
    assert_eq!(pushed["notes"], "merged", "{pushed}");
    assert_eq!(a.pair_json(&["pull"])["notes"], "fast_forwarded");
    assert_eq!(
        a.git(&["rev-parse", "refs/notes/pair"]),
        b.git(&["rev-parse", "refs/notes/pair"])
    );
    assert_eq!(
        sorted_lines(&a.git(&["notes", "--ref=pair", "list"])),
        reference
    );
    let shown = a.git(&["notes", "--ref=pair", "show", &head]);
    assert_eq!(
        shown,
        format!("pair-run=20261129-231500-aaaaaa verdict=APPROVED rounds=1\n{line_b}\n")
    );
    let log = a.git(&["log", "--notes=pair", "-1", "--format=%N", &head]);
    assert!(log.contains("bbbbbb") && log.contains("aaaaaa"), "{log}");
    let merge = a.git(&["rev-list", "--parents", "-1", "refs/notes/pair"]);
    assert_eq!(merge.split_whitespace().count(), 3, "{merge}");
    // Real git can keep adding to the merged notes.
    a.git(&[
        "notes",
        "--ref=pair",
        "append",
        "-m",
        "pair-run=later",
        &head,
    ]);
    assert!(
        notes::read(&Repo::open_isolated(&a.repo).expect("open"), oid(&head))
            .expect("read")
            .expect("note")
            .contains("pair-run=later")
    );
    a.assert_fsck_clean();
}

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// 3 clones, 1 remote, 100 random steps per seed (record via coder-done, start a new run,
/// push, pull), then one push round and one pull round: every clone holds the same refs and
/// every record created anywhere, once.
#[test]
fn random_push_pull_sequences_converge_and_lose_nothing() {
    for seed in [0x9E37_79B9_7F4A_7C15_u64, 42] {
        random_sequence(seed, 100);
    }
}

pub(crate) fn random_sequence(seed: u64, steps: usize) {
    let net = Net::new(3);
    let mut rng = Rng(seed);
    let mut created = 0usize;
    let mut merged = 0u64;
    let mut log = Vec::new();
    for step in 0..steps {
        let c = rng.below(3) as usize;
        let env = &net.clones[c];
        let action = rng.below(20);
        let (name, out) = match action {
            0 => (
                "start",
                env.pair(&["start", "--replace", "--task", &format!("task {step}")]),
            ),
            1..=7 => (
                "coder-done",
                env.pair(&["coder-done", "--summary", &format!("step {step} on {c}")]),
            ),
            8 | 9 => {
                let (out, records) = adopt_newest_pulled(env);
                created += records;
                ("adopt", out)
            }
            10..=14 => ("push", env.pair(&["push", "--json"])),
            _ => ("pull", env.pair(&["pull", "--json"])),
        };
        if matches!(name, "push" | "pull") && out.code == 0 {
            merged += out.json()["runs"]["merged"].as_u64().expect("merged count");
        }
        log.push(format!("{step}: clone {c} {name} -> {}", out.code));
        match name {
            // Without an active run (nothing started or pulled yet) coder-done refuses.
            "start" | "coder-done" if out.code == 0 => {
                created += 1;
                // `start --replace` records the abandon of the run it replaces, too.
                if out.stderr.contains("note: abandoned run") {
                    created += 1;
                }
            }
            "start" | "coder-done" => {
                assert!(
                    out.stderr.contains("no active run"),
                    "{}\n{out}",
                    log.join("\n")
                )
            }
            _ => assert_eq!(out.code, 0, "seed {seed}\n{}\n{out}", log.join("\n")),
        }
    }
    for env in &net.clones {
        env.pair_json(&["push"]);
    }
    for env in &net.clones {
        env.pair_json(&["pull"]);
    }
    let refs = net.clones[0].pair_refs();
    for env in &net.clones[1..] {
        assert_eq!(env.pair_refs(), refs, "seed {seed}\n{}", log.join("\n"));
    }
    let a = &net.clones[0];
    let total: usize = a
        .git(&[
            "for-each-ref",
            "--format=%(refname:lstrip=3)",
            "refs/pair/runs",
        ])
        .lines()
        .map(|run| a.records(run).len())
        .sum();
    assert_eq!(total, created, "seed {seed}\n{}", log.join("\n"));
    // The sequence exercised the interesting path: diverged runs were merged.
    assert!(
        merged > 0,
        "seed {seed}: no merge happened\n{}",
        log.join("\n")
    );
    let remote = net.remote_refs();
    assert!(
        refs.lines().all(|l| remote.contains(l)),
        "remote:\n{remote}\nlocal:\n{refs}"
    );
    a.assert_fsck_clean();
}

/// Moves to the newest unfinished run this clone has from another one (a no-op without
/// one): abandons this clone's own unfinished run first (one run at a time per branch), then
/// adopts. Returns the adopt's output and how many records it took (the abandon's).
fn adopt_newest_pulled(env: &TestEnv) -> (crate::common::Output, usize) {
    let list = env.pair_json(&["list"]);
    let runs = list["runs"].as_array().expect("runs");
    let unfinished = |owned: bool| {
        runs.iter()
            .find(|r| r["owned"] == owned && r["next_action"] != "done" && r["branch"] == "main")
    };
    let Some(pulled) = unfinished(false) else {
        return (env.pair(&["list"]), 0);
    };
    let abandoned = match unfinished(true) {
        Some(own) => {
            let own = own["run_id"].as_str().expect("run_id");
            env.pair_json(&["abandon", "--run", own, "--reason", "moving on"]);
            1
        }
        None => 0,
    };
    let run_id = pulled["run_id"].as_str().expect("run_id");
    (env.pair(&["adopt", run_id]), abandoned)
}

/// Past a few dozen refs, pull writes new run refs and the staging copy into `packed-refs`
/// (one file instead of one per ref); git must read the result as if it had written it.
#[test]
fn many_runs_land_in_packed_refs_that_git_reads() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let runs: Vec<String> = (0..40).map(|i| a.start(&format!("task {i}"))).collect();
    coder_done(a, "work on the newest run");
    a.pair_json(&["push"]);
    let pulled = b.pair_json(&["pull"]);
    assert_eq!(pulled["runs"]["created"], 40, "{pulled}");
    let packed = std::fs::read_to_string(b.repo.join(".git/packed-refs")).expect("packed-refs");
    assert!(packed.starts_with("# pack-refs with: peeled fully-peeled sorted \n"));
    assert!(
        packed.contains(&format!("refs/pair/runs/{}", runs[0])),
        "{packed}"
    );
    assert!(
        packed.contains("refs/pair-remotes/origin/pair/runs/"),
        "{packed}"
    );
    // What the clone packed before (its remote-tracking branch) is still there.
    assert_eq!(
        b.git(&["rev-parse", "refs/remotes/origin/main"]),
        a.git(&["rev-parse", "HEAD"])
    );
    for run in &runs {
        assert_eq!(tip(b, run), tip(a, run));
        b.git(&[
            "show-ref",
            "--verify",
            "-q",
            &format!("refs/pair/runs/{run}"),
        ]);
    }
    assert!(
        !b.repo
            .join(".git/refs/pair-remotes/origin/pair/runs")
            .exists(),
        "the loose staging refs were packed"
    );
    b.assert_fsck_clean();
    // Life goes on: loose updates shadow packed entries, git gc repacks everything.
    b.pair_json(&["adopt", runs.last().expect("runs")]);
    coder_done(b, "more on the newest run");
    b.pair_json(&["push"]);
    assert_eq!(a.pair_json(&["pull"])["runs"]["fast_forwarded"], 1);
    b.git(&["gc", "-q"]);
    assert_eq!(b.pair_json(&["pull"])["runs"]["unchanged"], 40);
    assert_eq!(a.pair_refs(), b.pair_refs());
    b.assert_fsck_clean();
}

/// The fast reader of the newest runs (loose run refs, then `packed-refs` read backwards from
/// the end of the run range) answers what `git for-each-ref` lists last, for mixes of packed,
/// loose and shadowed run refs that git itself wrote, among annotated tags (peel lines) and
/// refs sorting just before and after the run range.
#[test]
fn the_newest_runs_read_fast_are_what_git_for_each_ref_lists_last() {
    for seed in 1..=4u64 {
        let repo = crate::common::empty_repo();
        let dir = repo.path.as_path();
        let empty_tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
        let a = crate::common::git_str(dir, &["commit-tree", "-m", "a", empty_tree]);
        let b = crate::common::git_str(dir, &["commit-tree", "-m", "b", empty_tree]);
        // A small deterministic generator: the cases differ per seed, reproducibly.
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let run_name = |next: &mut dyn FnMut(u64) -> u64| {
            format!(
                "refs/pair/runs/2026{:02}{:02}-{:06}-{:06x}",
                1 + next(12),
                1 + next(28),
                next(240_000),
                next(0x100_0000)
            )
        };
        let (packed_count, loose_count) = (10 + next(30), next(6));
        let packed: Vec<String> = (0..packed_count).map(|_| run_name(&mut next)).collect();
        let loose: Vec<String> = (0..loose_count).map(|_| run_name(&mut next)).collect();
        let mut stdin: String = packed.iter().map(|r| format!("update {r} {a}\n")).collect();
        for other in [
            "refs/pair/runs0/x",
            "refs/pair/runsx/1",
            "refs/pair/dropped/y",
            "refs/zz/z",
        ] {
            stdin.push_str(&format!("update {other} {a}\n"));
        }
        crate::common::sh(
            dir,
            &format!(
                "printf '%s' '{stdin}' | git update-ref --stdin && git tag -a -m t v1 {a} && git tag -a -m t zz {b} && git pack-refs --all"
            ),
        );
        // Shadow some packed runs with loose values, and add new loose runs.
        let mut stdin = String::new();
        for (i, r) in packed.iter().enumerate() {
            if next(3) == 0 || i + 1 == packed.len() {
                stdin.push_str(&format!("update {r} {b}\n"));
            }
        }
        for r in &loose {
            stdin.push_str(&format!("update {r} {b}\n"));
        }
        crate::common::sh(
            dir,
            &format!("printf '%s' '{stdin}' | git update-ref --stdin"),
        );

        let listed = crate::common::git_str(
            dir,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/pair/runs/",
            ],
        );
        let all: Vec<(RunId, ObjectId)> = listed
            .lines()
            .map(|line| {
                let (name, id) = line.split_once(' ').expect("name and id");
                let run = RunId::parse(&name["refs/pair/runs/".len()..]).expect("a run id");
                (run, ObjectId::from_hex(id.as_bytes()).expect("hex"))
            })
            .collect();
        let store = Repo::open_isolated(dir).expect("open");
        for n in [0, 1, 2, 5, 11, all.len(), all.len() + 7] {
            let want = all[all.len().saturating_sub(n)..].to_vec();
            assert_eq!(
                store.newest_run_tips(n).expect("newest"),
                want,
                "seed {seed}, n = {n}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// a run belongs to the clone that started it (SPEC §5)

/// Every ref git pair keeps, shared (`refs/pair`, notes) and this clone's own
/// (`refs/pair-local`): a refusal must leave all of them as they were.
fn owned_and_shared(env: &TestEnv) -> String {
    env.git(&["for-each-ref", "refs/pair", "refs/pair-local", "refs/notes"])
}

fn approve_cmd() -> String {
    format!(
        "[\"{}\"]",
        crate::common::fixtures()
            .join("reviewers")
            .join("approve.sh")
            .display()
    )
}

/// The Stop hook's stdout for a plain stop in `env`'s repository (empty: the agent may stop).
fn stop_hook(env: &TestEnv) -> String {
    use std::io::Write as _;
    let mut cmd = env.pair_cmd(&["hook", "agent-stop"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(br#"{"session_id":"s","hook_event_name":"Stop","stop_hook_active":false}"#)
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What `git pair list --json` says of `run_id`'s ownership.
fn listed_owned(env: &TestEnv, run_id: &str) -> serde_json::Value {
    let list = env.pair_json(&["list"]);
    list["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["run_id"] == run_id)
        .map(|r| r["owned"].clone())
        .unwrap_or_else(|| panic!("{run_id} not listed: {list}"))
}

#[test]
fn a_pulled_run_is_not_this_clones_active_run_until_it_is_adopted() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    // Clone A: an approved run (next_action finish) whose work B's tree does not hold.
    let run_id = a.start("task on two machines");
    a.write("src/lib.rs", "pub fn fetch() -> u8 { 1 }\n");
    coder_done(a, "did the thing");
    a.pair_json(&["review", "--reviewer-cmd", &approve_cmd()]);
    a.pair_json(&["push"]);

    let pulled = b.pair_json(&["pull"]);
    assert_eq!(pulled["runs"]["created"], 1, "{pulled}");
    assert_eq!(pulled["handoff_path"], serde_json::Value::Null, "{pulled}");
    // Listed, shown and read on B, but not B's: status, the gate and the Stop hook ignore it.
    assert_eq!(listed_owned(b, &run_id), false);
    assert_eq!(listed_owned(a, &run_id), true);
    assert_eq!(b.pair_json(&["show", &run_id])["run_id"], run_id.as_str());
    assert_eq!(
        b.pair_json(&["status", "--run", &run_id])["next_action"],
        "finish"
    );
    let out = b.pair(&["status", "--json"]);
    assert_one_error_line(&out, 1, "no active run on branch 'main' in this clone");
    assert!(
        out.stderr.contains(&format!("git pair adopt {run_id}")),
        "{out}"
    );
    assert!(out.json()["error"].is_string(), "{out}");
    let gate = b.pair_json(&["gate"]);
    assert_eq!(gate["open"], true, "{gate}");
    assert_eq!(gate["reason"], "no-active-run", "{gate}");
    assert_eq!(stop_hook(b), "", "the Stop hook blocked on a pulled run");
    assert_eq!(b.git(&["status", "--porcelain"]), "");
    // Nothing of A's ownership travelled.
    assert_eq!(b.git(&["for-each-ref", "refs/pair-local"]), "");
    assert!(
        !net.remote_refs().contains("pair-local"),
        "{}",
        net.remote_refs()
    );

    // Adopting makes it B's active run: the same next_action and transcript as on A.
    let refs = owned_and_shared(b);
    let adopted = b.pair_json(&["adopt", &run_id]);
    assert_eq!(adopted["adopted"], true, "{adopted}");
    assert_eq!(adopted["active"], true, "{adopted}");
    assert_eq!(adopted["next_action"], "finish", "{adopted}");
    assert_ne!(owned_and_shared(b), refs, "adopt wrote nothing");
    let (sa, sb) = (a.pair_json(&["status"]), b.pair_json(&["status"]));
    assert_eq!(sb["run_id"], run_id.as_str());
    assert_eq!(sa["next_action"], sb["next_action"]);
    assert_eq!(a.read("HANDOFF.md"), b.read("HANDOFF.md"));
    assert_eq!(
        b.git(&["status", "--porcelain"]),
        "",
        "HANDOFF.md is excluded"
    );
    assert_eq!(listed_owned(b, &run_id), true);
    // Now B's work tree lacks the approved work: that is B's to review.
    assert!(stop_hook(b).contains(&run_id));
    // Idempotent: a second adopt writes nothing.
    let refs = owned_and_shared(b);
    let again = b.pair_json(&["adopt", &run_id]);
    assert_eq!(again["adopted"], false, "{again}");
    assert_eq!(again["active"], true, "{again}");
    assert_eq!(owned_and_shared(b), refs);
    let out = b.pair(&["adopt", &run_id]);
    assert!(out.stdout.contains("this clone's own already"), "{out}");
}

#[test]
fn start_on_the_second_clone_is_not_refused_by_a_pulled_run() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let theirs = a.start("A's task");
    coder_done(a, "A's round");
    a.pair_json(&["push"]);
    b.pair_json(&["pull"]);

    let started = b.pair_json(&["start", "--task", "B's own task"]);
    let ours = started["run_id"].as_str().expect("run_id").to_owned();
    assert_eq!(b.pair_json(&["status"])["run_id"], ours.as_str());
    assert_eq!(
        b.pair(&["status", "--run", &theirs]).code,
        0,
        "a pulled run is still shown"
    );
    // One unfinished run of this clone per branch: adopting A's now is refused.
    let refs = owned_and_shared(b);
    let out = b.pair(&["adopt", &theirs, "--json"]);
    assert_one_error_line(&out, 1, "already has an unfinished run of this clone");
    assert!(out.stderr.contains(&ours), "{out}");
    assert!(out.json()["error"].is_string(), "{out}");
    assert_eq!(owned_and_shared(b), refs, "a refused adopt wrote something");
    // Publishing B's run leaves A's active run alone.
    b.pair_json(&["push"]);
    a.pair_json(&["pull"]);
    assert_eq!(a.pair_json(&["status"])["run_id"], theirs.as_str());
    assert_eq!(listed_owned(a, &ours), false);
}

#[test]
fn adopt_refuses_bad_input_and_changes_nothing() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let finished = a.start("finished elsewhere");
    a.pair_json(&["abandon"]);
    a.pair_json(&["push"]);
    b.pair_json(&["pull"]);
    let refs = owned_and_shared(b);
    for (args, needle) in [
        (vec!["adopt", "not-a-run"], "not-a-run"),
        (vec!["adopt", "../../refs/heads/main"], "refs/heads/main"),
        (vec!["adopt", "20261129-231500-a1b2c3"], "unknown run"),
        (vec!["adopt", &finished], "is finished (abandoned)"),
    ] {
        let out = b.pair(&args);
        assert_one_error_line(&out, 1, needle);
        let mut json = args.clone();
        json.push("--json");
        let out = b.pair(&json);
        assert_eq!(out.code, 1, "{out}");
        assert!(out.json()["error"].is_string(), "{out}");
        assert_eq!(owned_and_shared(b), refs, "{args:?} changed stored state");
    }
    assert_eq!(b.pair(&["adopt"]).code, 129, "the run is required");
    let help = b.pair(&["adopt", "--help"]);
    assert_eq!(help.code, 0, "{help}");
    assert!(help.stdout.contains("git pair pull"), "{help}");
}

#[test]
fn restoring_a_checkpoint_makes_its_run_this_clones_own() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let run_id = a.start("moved by checkpoint");
    a.write("src/lib.rs", "pub fn half() {}\n");
    let created = a.pair_json(&["checkpoint", "create", "--next", "finish the function"]);
    let id = created["id"].as_str().expect("id").to_owned();
    a.pair_json(&["push"]);
    b.pair_json(&["pull"]);
    assert!(b.pair(&["status"]).code != 0);

    let restored = b.pair_json(&["checkpoint", "restore", &id]);
    assert_eq!(restored["adopted"], true, "{restored}");
    assert_eq!(b.pair_json(&["status"])["run_id"], run_id.as_str());
    assert_eq!(listed_owned(b, &run_id), true);
}

#[test]
fn runs_started_before_runs_had_owners_stay_where_they_were_started() {
    use git_pair::model::Start;
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    // What an older git pair wrote: a start record without `claimed`, and no ownership ref.
    let legacy = |env: &TestEnv, cwd: &str, branch: &str| -> String {
        let repo = Repo::open_isolated(&env.repo).expect("open");
        let base = repo.resolve_commit("HEAD").expect("HEAD");
        let run_id = RunId::generate_ms(1_795_994_100_000);
        let start = Body::Start(Start {
            run_id: run_id.to_string(),
            task: "from before owners".into(),
            cwd: cwd.to_owned(),
            branch: branch.to_owned(),
            base: Some(base.into()),
            coder: "claude".into(),
            reviewer: "codex".into(),
            max_rounds: 5,
            budget_usd: None,
            config: Default::default(),
            flags: None,
            claimed: false,
            carrier: false,
            base_tree: None,
        });
        repo.create_run(&run_id, Some(base), Append::record(start, "start"))
            .expect("create");
        run_id.to_string()
    };
    let here = legacy(a, path(&a.repo), "main");
    assert_eq!(a.git(&["for-each-ref", "refs/pair-local/owned"]), "");
    assert_eq!(
        a.pair_json(&["status"])["run_id"],
        here.as_str(),
        "lost on upgrade"
    );
    // Published and pulled: still A's (started in A's work tree), not B's.
    a.pair_json(&["push"]);
    b.pair_json(&["pull"]);
    assert_eq!(a.pair_json(&["status"])["run_id"], here.as_str());
    assert_eq!(listed_owned(b, &here), false);
    assert_eq!(b.pair(&["status"]).code, 1);
    assert_eq!(b.pair_json(&["gate"])["reason"], "no-active-run");
    // A repository moved since (another recorded path) keeps a run no remote ever had.
    a.git(&["switch", "-q", "-c", "moved"]);
    let moved = legacy(a, "/somewhere/it/was/before", "moved");
    assert_eq!(a.pair_json(&["status"])["run_id"], moved.as_str());
}

/// Starts a run in `env` as of `NOW + seconds` (run ids sort by that time).
fn start_at(env: &TestEnv, seconds: i64, task: &str) -> String {
    let now = (crate::common::NOW + seconds).to_string();
    let out = env.pair_env(
        &["start", "--replace", "--task", task, "--json"],
        &[("GIT_PAIR_NOW", now.as_str())],
    );
    assert_eq!(out.code, 0, "{out}");
    out.json()["run_id"].as_str().expect("run_id").to_owned()
}

#[test]
fn this_clones_run_is_found_past_many_newer_runs_of_other_clones_without_listing_them() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let mine = start_at(b, 0, "mine");
    // Twelve newer runs of another clone on the same branch, unfinished: nobody's active run
    // here, and more than the few newest that are read directly.
    let theirs: Vec<String> = (1..=12)
        .map(|i| start_at(a, 60 * i, &format!("theirs {i}")))
        .collect();
    a.pair_json(&["push"]);
    b.pair_json(&["pull"]);
    // The first selection past the newest runs lists every run once (the index of runs
    // started before runs had owners is rebuilt: the pull created runs).
    assert_eq!(b.pair_json(&["status"])["run_id"], mine.as_str());
    // Since then, selection reads this clone's runs only: the summary cache is not read or
    // written again.
    let cache = b.repo.join(".git/pair/cache/runs-v3.jsonl");
    std::fs::remove_file(&cache).expect("the listing wrote the summary cache");
    assert_eq!(b.pair_json(&["status"])["run_id"], mine.as_str());
    b.pair_json(&["coder-done", "--summary", "my work"]);
    assert_eq!(b.pair_json(&["status"])["round"], 1);
    assert_eq!(stop_hook(b), stop_hook(b));
    assert!(!cache.exists(), "a selection listed every run");
    // `start` refuses while it is active, and names it.
    let out = b.pair(&["start", "--task", "second"]);
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains(&mine), "{out}");

    // The listing: newest first, `--limit` the newest only (read directly, no cache).
    let limited = b.pair_json(&["list", "--limit", "3"]);
    let ids = |v: &serde_json::Value| -> Vec<String> {
        v["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|r| r["run_id"].as_str().expect("id").to_owned())
            .collect()
    };
    let newest: Vec<String> = theirs.iter().rev().take(3).cloned().collect();
    assert_eq!(ids(&limited), newest);
    assert!(!cache.exists(), "--limit 3 read the summary cache");
    let all = b.pair_json(&["list"]);
    let mut want: Vec<String> = theirs.iter().rev().cloned().collect();
    want.push(mine.clone());
    assert_eq!(ids(&all), want);
    assert_eq!(all["runs"][12]["owned"], true);
    assert_eq!(all["runs"][0]["owned"], false);
    // Warm (from the cache) and with a limit past the direct reads: the same lines.
    assert_eq!(b.pair_json(&["list"]), all);
    assert_eq!(ids(&b.pair_json(&["list", "--limit", "100"])), want);
    let human = b.pair(&["list", "--limit", "1"]);
    assert_eq!(human.stdout.lines().count(), 1, "{human}");
    assert!(human.stdout.starts_with(&theirs[11]), "{human}");
    assert!(human.stdout.contains("(other clone)"), "{human}");
}

#[test]
fn push_records_every_landed_ref_and_nothing_new_pushes_nothing() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    let runs: Vec<String> = (0..40).map(|i| start_at(a, 60 * i, "many")).collect();
    let pushed = a.pair_json(&["push"]);
    assert_eq!(pushed["pushed_runs"], 40);
    // Every pushed run's staged copy follows the remote, so the next push sends nothing.
    let staged = a.git(&[
        "for-each-ref",
        "--format=%(refname:lstrip=4) %(objectname)",
        "refs/pair-remotes/origin/pair/runs/",
    ]);
    assert_eq!(staged.lines().count(), 40, "{staged}");
    for run in &runs {
        assert!(staged.contains(&format!("{run} {}", tip(a, run))), "{run}");
    }
    let again = a.pair_json(&["push"]);
    assert_eq!(again["pushed_runs"], 0);
    assert_eq!(again["pushed"], 0);
    b.pair_json(&["pull"]);
    assert_eq!(
        b.pair_json(&["list"])["runs"]
            .as_array()
            .expect("runs")
            .len(),
        40
    );
}
