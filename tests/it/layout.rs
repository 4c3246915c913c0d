//! The layout of a long run, checked with real git (issue 26): records in buckets of 256
//! positions, so an append adds a bounded number of objects whatever the run's length; a
//! manifest bounded to the newest rounds while the views of the whole run still show every
//! round; a run written flat before buckets still reads and moves into buckets on its next
//! append; a merge of two divergent copies keeps every record; and git pair packs the objects
//! it left loose, never a user's.

use git_pair::model::{Body, Compaction, RunId};
use git_pair::store::{Append, Integration, Repo};

use crate::common::{TestEnv, fixtures};

fn reviewer() -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers/request-changes.sh").display()
    )
}

/// Appends `n` compaction records to the run through the store, as its writers do.
fn append_records(env: &TestEnv, run: &str, n: usize) {
    let repo = Repo::open_isolated(&env.repo).expect("open");
    let run = RunId::parse(run).expect("run id");
    for _ in 0..n {
        repo.append(&run, |_| {
            Ok(Append::record(
                Body::Compaction(Compaction {}),
                "compaction observed",
            ))
        })
        .expect("append");
    }
}

fn tip(env: &TestEnv, run: &str) -> String {
    env.git(&["rev-parse", &format!("refs/pair/runs/{run}")])
        .trim()
        .to_owned()
}

/// `git ls-tree` of `rev:path`: (mode, kind, name) per entry.
fn ls_tree(env: &TestEnv, rev: &str, path: &str) -> Vec<(String, String, String)> {
    env.git(&["ls-tree", &format!("{rev}:{path}")])
        .lines()
        .map(|line| {
            let (meta, name) = line.split_once('\t').expect("an entry");
            let mut meta = meta.split(' ');
            let mode = meta.next().expect("mode").to_owned();
            let kind = meta.next().expect("kind").to_owned();
            (mode, kind, name.to_owned())
        })
        .collect()
}

/// Every record file of `rev` by its path under `records/`.
fn record_paths(env: &TestEnv, rev: &str) -> Vec<String> {
    env.git(&["ls-tree", "-r", "--name-only", &format!("{rev}:records")])
        .lines()
        .map(str::to_owned)
        .collect()
}

fn count_objects(env: &TestEnv) -> std::collections::HashMap<String, u64> {
    env.git(&["count-objects", "-v"])
        .lines()
        .filter_map(|line| {
            let (k, v) = line.split_once(": ")?;
            Some((k.to_owned(), v.trim().parse().ok()?))
        })
        .collect()
}

#[test]
fn an_append_to_a_long_run_adds_a_bounded_number_of_objects() {
    let env = TestEnv::new();
    // A blob of the user's, loose: packing git pair's objects must leave it where it is.
    let users = env.git_stdin(&["hash-object", "-w", "--stdin"], "the user's own object\n");
    let users = users.trim();
    let users_file = env
        .repo
        .join(".git/objects")
        .join(&users[..2])
        .join(&users[2..]);
    let run = env.start("a long run");
    append_records(&env, &run, 700);
    let before = tip(&env, &run);
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "one more round"]);
    let after = tip(&env, &run);

    // The append: a record, its bucket, `records/`, the manifest, the root tree, the commit.
    let added = env.git(&["rev-list", "--objects", &after, &format!("^{before}")]);
    let added: Vec<&str> = added.lines().collect();
    assert!(added.len() <= 6, "one append added {added:?}");

    // Buckets of at most 256 records, named so that they sort; nothing flat.
    let top = ls_tree(&env, &after, "records");
    let names: Vec<&str> = top.iter().map(|(_, _, n)| n.as_str()).collect();
    assert_eq!(names, ["0000", "0001", "0002"], "{top:?}");
    assert!(top.iter().all(|(_, kind, _)| kind == "tree"), "{top:?}");
    for bucket in &names {
        let entries = ls_tree(&env, &after, &format!("records/{bucket}"));
        assert!(entries.len() <= 256, "bucket {bucket}: {}", entries.len());
        for (_, _, name) in &entries {
            let seq: u64 = name.split('-').next().unwrap().parse().unwrap();
            assert_eq!(format!("{:04}", seq / 256), *bucket, "{name}");
        }
    }
    assert_eq!(record_paths(&env, &after).len(), 1 + 700 + 1);
    // The manifest is stamped with the records tree it describes.
    let manifest = env.manifest(&run);
    let records_tree = env.git(&["rev-parse", &format!("{after}:records")]);
    assert_eq!(manifest["records_tree"], records_tree.trim());
    assert_eq!(manifest["records"], 702);

    // git pair packed what its appends left loose (a pack per 128 notes), and only that.
    let objects = count_objects(&env);
    assert!(objects["packs"] >= 1, "{objects:?}");
    assert!(objects["count"] < 1_000, "loose objects left: {objects:?}");
    assert!(users_file.exists(), "the user's loose object was touched");
    env.assert_fsck_clean();
    for idx in std::fs::read_dir(env.repo.join(".git/objects/pack")).expect("packs") {
        let path = idx.expect("entry").path();
        if path.extension().is_some_and(|e| e == "idx") {
            let out = env.git_out(&["verify-pack", path.to_str().expect("utf-8")]);
            assert_eq!(out.code, 0, "{out}");
        }
    }
    // Everything still reads, through the packs.
    let log = env.pair_json(&["log"]);
    assert_eq!(log["rounds"].as_array().map(Vec::len), Some(1));
}

#[test]
fn the_manifest_keeps_the_newest_rounds_and_the_views_show_every_round() {
    let env = TestEnv::new();
    let run = env.pair_json(&["start", "--task", "twenty rounds", "--max-rounds", "50"])["run_id"]
        .as_str()
        .expect("run id")
        .to_owned();
    for round in 1..=20 {
        env.write("a.txt", &format!("{round}\n"));
        env.pair_json(&["coder-done", "--summary", &format!("round {round}")]);
        env.pair_json(&["review", "--reviewer-cmd", &reviewer()]);
    }
    let manifest = env.manifest(&run);
    let rounds = manifest["rounds"].as_array().expect("rounds");
    // The newest 16 rounds, a coder and a reviewer entry each.
    assert_eq!(rounds.len(), 32, "{rounds:?}");
    assert_eq!(rounds[0]["n"], 5);
    assert_eq!(rounds[31]["n"], 20);
    assert_eq!(manifest["rounds_folded"], 8);
    let status = env.pair_json(&["status"]);
    assert_eq!(status["round"], 20);
    assert_eq!(status["last_verdict"], "CHANGES_REQUESTED");
    // What needs every round projects it from the records.
    let body = env.pair(&["pr-body"]).stdout;
    assert!(body.contains("| 1 | coder |"), "{body}");
    assert!(body.contains("| 20 | reviewer |"), "{body}");
    let cost = env.pair_json(&["cost"]);
    let detail = cost["runs"][0]["rounds"].as_array().expect("rounds");
    assert_eq!(detail.len(), 40, "{cost}");
    let log = env.pair_json(&["log"]);
    assert_eq!(log["rounds"].as_array().map(Vec::len), Some(20));
}

/// Rewrites the run's tip as a run written before buckets stored it: every record directly
/// under `records/`, and a manifest without the records-tree stamp.
fn flatten(env: &TestEnv, run: &str) {
    let tip = tip(env, run);
    let flat: String = env
        .git(&["ls-tree", "-r", &format!("{tip}:records")])
        .lines()
        .map(|line| {
            let (meta, path) = line.split_once('\t').expect("entry");
            format!("{meta}\t{}\n", path.rsplit('/').next().expect("name"))
        })
        .collect();
    let records = env.git_stdin(&["mktree"], &flat);
    let mut manifest: serde_json::Value =
        serde_json::from_str(&env.git(&["show", &format!("{tip}:manifest.json")])).expect("json");
    manifest
        .as_object_mut()
        .expect("object")
        .remove("records_tree");
    let manifest = env.git_stdin(&["hash-object", "-w", "--stdin"], &format!("{manifest}\n"));
    let root: String = env
        .git(&["ls-tree", &tip])
        .lines()
        .map(|line| {
            let (meta, name) = line.split_once('\t').expect("entry");
            match name {
                "records" => format!("040000 tree {}\trecords\n", records.trim()),
                "manifest.json" => format!("100644 blob {}\tmanifest.json\n", manifest.trim()),
                _ => format!("{meta}\t{name}\n"),
            }
        })
        .collect();
    let root = env.git_stdin(&["mktree"], &root);
    let commit = env.git(&[
        "commit-tree",
        root.trim(),
        "-p",
        &tip,
        "-m",
        &format!("flat\n\nPair-Run: {run}"),
    ]);
    env.git(&[
        "update-ref",
        &format!("refs/pair/runs/{run}"),
        commit.trim(),
    ]);
}

#[test]
fn a_run_written_flat_still_reads_and_moves_into_buckets_on_its_next_append() {
    let env = TestEnv::new();
    let run = env.start("an old run");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "round 1"]);
    env.pair_json(&["review", "--reviewer-cmd", &reviewer()]);
    flatten(&env, &run);
    let flat = tip(&env, &run);
    let kinds: Vec<String> = ls_tree(&env, &flat, "records")
        .into_iter()
        .map(|(_, kind, _)| kind)
        .collect();
    assert!(kinds.iter().all(|k| k == "blob"), "{kinds:?}");
    let records_before = record_paths(&env, &flat);

    // Reads as before.
    let status = env.pair_json(&["status"]);
    assert_eq!(status["round"], 1);
    assert_eq!(status["last_verdict"], "CHANGES_REQUESTED");
    let log = env.pair_json(&["log"]);
    assert_eq!(log["rounds"][0]["reviews"][0]["findings"], 2);

    // The next append moves every record into its bucket: the same blobs, nothing flat.
    env.write("a.txt", "b\n");
    env.pair_json(&["coder-done", "--summary", "round 2"]);
    let after = tip(&env, &run);
    assert_eq!(
        ls_tree(&env, &after, "records")
            .into_iter()
            .map(|(_, kind, name)| (kind, name))
            .collect::<Vec<_>>(),
        [("tree".to_owned(), "0000".to_owned())]
    );
    let moved = record_paths(&env, &after);
    assert_eq!(moved.len(), records_before.len() + 1);
    for name in &records_before {
        let path = format!("0000/{name}");
        assert!(moved.contains(&path), "{path} missing: {moved:?}");
        assert_eq!(
            env.git(&["rev-parse", &format!("{flat}:records/{name}")]),
            env.git(&["rev-parse", &format!("{after}:records/{path}")]),
        );
    }
    let manifest = env.manifest(&run);
    assert_eq!(manifest["records"], moved.len());
    assert!(manifest["records_tree"].is_string());
    let status = env.pair_json(&["status"]);
    assert_eq!(status["round"], 2);
    env.pair_json(&["review", "--reviewer-cmd", &reviewer()]);
    env.assert_fsck_clean();
}

#[test]
fn merging_divergent_copies_of_a_bucketed_run_keeps_every_record() {
    let env = TestEnv::new();
    let run = env.start("two machines");
    append_records(&env, &run, 250);
    let fork = tip(&env, &run);
    // One side goes on to the next bucket; the other, from the same point, too.
    append_records(&env, &run, 20);
    let one = tip(&env, &run);
    env.git(&["update-ref", &format!("refs/pair/runs/{run}"), &fork]);
    append_records(&env, &run, 30);
    let other = tip(&env, &run);
    let repo = Repo::open_isolated(&env.repo).expect("open");
    let id = RunId::parse(&run).expect("run id");
    let integration = repo.integrate_run(&id, gix_id(&one)).expect("integrate");
    assert_eq!(integration, Integration::Merged);
    let merged = tip(&env, &run);
    let names = |rev: &str| -> std::collections::BTreeSet<String> {
        record_paths(&env, rev)
            .into_iter()
            .map(|p| p.rsplit('/').next().expect("name").to_owned())
            .collect()
    };
    let union: std::collections::BTreeSet<String> =
        names(&one).union(&names(&other)).cloned().collect();
    assert_eq!(union.len(), 1 + 250 + 20 + 30);
    assert_eq!(names(&merged), union);
    // In buckets, each record in its own.
    for path in record_paths(&env, &merged) {
        let (bucket, name) = path.split_once('/').expect("bucketed");
        let seq: u64 = name.split('-').next().unwrap().parse().unwrap();
        assert_eq!(format!("{:04}", seq / 256), bucket, "{path}");
    }
    let manifest = env.manifest(&run);
    assert_eq!(manifest["records"], union.len());
    assert_eq!(
        manifest["records_tree"],
        env.git(&["rev-parse", &format!("{merged}:records")]).trim()
    );
    // The same pair merged from the other side is the same commit.
    env.git(&["update-ref", &format!("refs/pair/runs/{run}"), &one]);
    let again = Repo::open_isolated(&env.repo).expect("open");
    again.integrate_run(&id, gix_id(&other)).expect("integrate");
    assert_eq!(tip(&env, &run), merged);
    env.assert_fsck_clean();
}

fn gix_id(hex: &str) -> gix::ObjectId {
    gix::ObjectId::from_hex(hex.as_bytes()).expect("an object id")
}

/// The packs in `.git/objects/pack`, by name (`pack-<checksum>`).
fn packs(env: &TestEnv) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(env.repo.join(".git/objects/pack"))
        .expect("pack dir")
        .filter_map(|e| {
            let name = e.expect("entry").file_name().to_string_lossy().into_owned();
            name.strip_suffix(".idx").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn git_pairs_own_packs_are_joined_and_a_users_pack_is_left_alone() {
    let env = TestEnv::new();
    env.write("users.txt", "the user's own file\n");
    env.git(&["add", "users.txt"]);
    env.git(&["commit", "-q", "-m", "the user's commit"]);
    env.git(&["repack", "-q", "-a", "-d"]);
    let users = packs(&env);
    assert_eq!(users.len(), 1, "{users:?}");
    let run = env.start("a run long enough to pile up packs");
    let commits = git_pair::store::PACK_AFTER_COMMITS as usize * (git_pair::store::JOIN_AT + 2);
    append_records(&env, &run, commits);

    let now = packs(&env);
    assert!(
        now.contains(&users[0]),
        "the user's pack was touched: {now:?}"
    );
    // Without joining there would be one pack per 128 commits: JOIN_AT + 2 of them.
    assert!(
        now.len() - 1 < git_pair::store::JOIN_AT,
        "git pair's packs were not joined: {now:?}"
    );
    let listed = std::fs::read_to_string(env.repo.join(".git/pair/packs")).expect("list");
    for name in listed.lines() {
        assert!(now.iter().any(|n| n == name), "{name} listed, not there");
    }
    assert!(
        !listed.contains(&users[0]),
        "the user's pack listed as git pair's"
    );
    // The joined pack kept its deltas: git finds chains in it and every object checks out.
    let mut chains = 0;
    for name in &now {
        let idx = env.repo.join(format!(".git/objects/pack/{name}.idx"));
        let out = env.git_out(&["verify-pack", "-v", idx.to_str().expect("utf-8")]);
        assert_eq!(out.code, 0, "{out}");
        chains += out
            .stdout
            .lines()
            .filter(|l| l.starts_with("chain length = "))
            .count();
    }
    assert!(chains > 0, "no deltas survived the join");
    env.assert_fsck_clean();
    let records = record_paths(&env, &tip(&env, &run));
    assert_eq!(records.len(), 1 + commits);
    assert_eq!(env.manifest(&run)["records"], 1 + commits);
}
