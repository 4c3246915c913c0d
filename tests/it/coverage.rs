//! Coverage is part of the approval (SPEC §6.2): a change larger than one packet is reviewed
//! in passes that together carry every changed text byte; what no pass can carry makes an
//! approval partial, which opens no gate, passes no verify and finishes only with
//! `--accept-partial`; stray bytes are escaped, not called binary; attributes outside the
//! committed tree decide nothing.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::{TestEnv, fixtures, record_path};

fn cmd(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

fn show(env: &TestEnv, run_id: &str, path: &str) -> String {
    env.git(&["show", &format!("refs/pair/runs/{run_id}:{path}")])
}

/// Lines of a module, each naming the module and its number.
fn module(name: &str, lines: usize) -> String {
    (0..lines)
        .map(|i| format!("pub const {name}_{i}: &str = \"line {i} of {name}, padded out\";\n"))
        .collect()
}

/// A review by `sequence.sh` doing `seq` (call by call); returns the JSON and the markers of
/// the calls made.
fn review_in_sequence(env: &TestEnv, seq: &str) -> (Value, Vec<String>) {
    let count = env.home.join("calls");
    let command = cmd("sequence.sh");
    let out = env.pair_env(
        &["review", "--reviewer-cmd", &command, "--json"],
        &[
            ("STUB_COUNT", count.to_str().expect("utf8")),
            ("STUB_SEQ", seq),
        ],
    );
    assert!(out.code == 0 || out.code == 1, "{out}");
    let markers = std::fs::read_to_string(format!("{}.markers", count.display()))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    (out.json(), markers)
}

/// A run whose change (a dozen modules and one file larger than a packet) is over a 4 KiB
/// budget.
fn env_with_a_large_change() -> (TestEnv, String) {
    let env = TestEnv::new();
    env.git(&["config", "pair.diffBudgetBytes", "4096"]);
    let run_id = env.start("Add the constant tables");
    for i in 0..12 {
        env.write(&format!("src/m{i}.rs"), &module(&format!("M{i}"), 20));
    }
    env.write("src/big.rs", &module("BIG", 300));
    env.pair_json(&["coder-done", "--summary", "Added the tables"]);
    (env, run_id)
}

#[test]
fn a_change_larger_than_a_packet_is_reviewed_in_passes_that_carry_every_line() {
    let (env, run_id) = env_with_a_large_change();
    let (v, markers) = review_in_sequence(&env, "approve");
    assert_eq!(v["verdict"], "APPROVED", "{v}");
    let passes = v["coverage"]["passes"].as_u64().expect("passes");
    assert!(passes >= 5, "{v}");
    assert_eq!(v["coverage"]["summary"], Value::Null, "nothing unreviewed");
    assert_eq!(v["coverage"]["files_total"], 13);
    assert_eq!(v["coverage"]["full"], 13);
    // One call per pass, each with its own attempt marker.
    assert_eq!(markers.len() as u64, passes, "{markers:?}");
    assert_eq!(markers.iter().collect::<BTreeSet<_>>().len(), markers.len());
    // Every line of every file reached a reviewer, and no pass was over the budget.
    let diff = show(&env, &run_id, "reviews/1/diff.patch");
    for (name, lines) in (0..12)
        .map(|i| (format!("M{i}"), 20))
        .chain([("BIG".to_owned(), 300)])
    {
        for i in 0..lines {
            let line = format!("+pub const {name}_{i}: &str");
            assert!(diff.contains(&line), "{line} never reached a reviewer");
        }
    }
    let context: Value =
        serde_json::from_str(&show(&env, &run_id, "reviews/1/context.json")).expect("json");
    let mut starts: Vec<usize> = context["pass_starts"]
        .as_array()
        .expect("pass starts")
        .iter()
        .map(|s| s.as_u64().expect("offset") as usize)
        .collect();
    assert_eq!(starts.len() as u64, passes - 1);
    starts.insert(0, 0);
    starts.push(diff.len());
    for pair in starts.windows(2) {
        assert!(
            pair[1] - pair[0] <= 4096,
            "a pass of {} bytes",
            pair[1] - pair[0]
        );
    }
    assert!(diff.contains("[git-pair] part of a file too large for one pass"));
    // The approval is complete: the gate opens for the approved tree.
    env.git(&["add", "-A"]);
    let gate = env.pair(&["gate", "--json"]);
    assert_eq!(gate.code, 0, "{gate}");
    env.assert_fsck_clean();
}

#[test]
fn the_round_is_approved_only_when_every_pass_approved() {
    let (env, run_id) = env_with_a_large_change();
    // The second pass asks for changes; the others approve.
    let (v, markers) = review_in_sequence(&env, "approve,cr,approve");
    assert_eq!(v["verdict"], "CHANGES_REQUESTED", "{v}");
    assert_eq!(
        markers.len() as u64,
        v["coverage"]["passes"].as_u64().expect("n")
    );
    let findings = v["findings"].as_array().expect("findings");
    assert!(
        findings
            .iter()
            .any(|f| f["severity"] == "high" && f["text"] == "wrong answer"),
        "{v}"
    );
    assert_eq!(env.pair_json(&["status"])["next_action"], "code");
    assert_eq!(
        env.manifest(&run_id)["rounds"][1]["verdict"],
        "CHANGES_REQUESTED"
    );
}

#[test]
fn a_pass_without_a_verdict_ends_the_review_with_none() {
    let (env, _run_id) = env_with_a_large_change();
    // Pass 1 approves; pass 2 fails twice: no verdict for the round, no round used.
    let (v, markers) = review_in_sequence(&env, "approve,fail,fail,approve");
    assert_eq!(v["verdict"], Value::Null, "{v}");
    assert_eq!(markers.len(), 3, "the review stopped at the failed pass");
    assert_eq!(env.pair_json(&["status"])["next_action"], "review");
}

/// A run whose change adds a source file and a binary image.
fn env_with_a_binary_file() -> (TestEnv, String) {
    let env = TestEnv::new();
    let run_id = env.start("Add the logo");
    env.write(
        "src/lib.rs",
        "pub fn logo() -> &'static str {\n    \"logo.png\"\n}\n",
    );
    std::fs::write(env.repo.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").expect("png");
    env.pair_json(&["coder-done", "--summary", "Added the logo"]);
    (env, run_id)
}

#[test]
fn an_approval_with_unreviewed_binary_content_is_partial_and_opens_nothing() {
    let (env, run_id) = env_with_a_binary_file();
    let approve = cmd("approve.sh");
    let out = env.pair(&["review", "--reviewer-cmd", &approve, "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(v["verdict"], "APPROVED");
    assert_eq!(v["coverage"]["summary"], "reviewed 1 of 2 files");
    assert_eq!(v["coverage"]["unreviewed"], serde_json::json!(["logo.png"]));
    // Not "finish": a partial approval is the human's to accept.
    assert_eq!(v["next_action"], "stop:partial", "{v}");
    let status = env.pair_json(&["status"]);
    assert_eq!(status["next_action"], "stop:partial", "{status}");
    let human = env.pair(&["review", "--again", "--reviewer-cmd", &approve]);
    assert_eq!(human.code, 0, "{human}");
    assert!(
        human.stdout.contains("unreviewed: logo.png")
            && human.stdout.contains("this approval is partial"),
        "{human}"
    );
    let human_status = env.pair(&["status"]);
    assert!(
        human_status.stdout.contains("stop:partial")
            && human_status.stdout.contains("--accept-partial"),
        "{human_status}"
    );

    // The gate stays closed, naming why.
    env.git(&["add", "-A"]);
    let gate = env.pair(&["gate", "--json"]);
    assert_eq!(gate.code, 1, "{gate}");
    assert!(gate.stderr.contains("is partial"), "{gate}");
    assert_eq!(gate.json()["reason"], "partial", "{gate}");

    // finish refuses without --accept-partial, and says how to go on.
    let refused = env.pair(&["finish"]);
    assert_eq!(refused.code, 1, "{refused}");
    assert!(
        refused.stderr.contains("is partial") && refused.stderr.contains("--accept-partial"),
        "{refused}"
    );
    let before = env.records(&run_id).len();
    assert_eq!(env.records(&run_id).len(), before, "nothing recorded");
    let force = env.pair(&["finish", "--force"]);
    assert_eq!(
        force.code, 1,
        "--force does not stand in for --accept-partial: {force}"
    );

    let done = env.pair(&["finish", "--accept-partial", "--json"]);
    assert_eq!(done.code, 0, "{done}");
    let body = std::fs::read_to_string(done.json()["pr_body_path"].as_str().expect("pr body path"))
        .expect("pr body");
    assert!(body.contains("Partial approval accepted"), "{body}");
    assert!(body.contains("reviewed 1 of 2 files"), "{body}");
    let finish_record = env
        .records(&run_id)
        .into_iter()
        .rfind(|r| r.contains("-finish"))
        .expect("finish record");
    let record: Value =
        serde_json::from_str(&show(&env, &run_id, &record_path(&finish_record))).expect("json");
    assert_eq!(record["accept_partial"], true, "{record}");
    // After finish, the gate still does not open on a partial approval.
    assert_eq!(env.pair(&["gate"]).code, 1);

    // verify: the commit of that tree is not approved (an accepted partial approval is an
    // override, as --force is).
    env.git(&["commit", "-q", "-m", "Add the logo"]);
    let verify = env.pair(&["verify", "HEAD~1..HEAD", "--json"]);
    assert_eq!(verify.code, 1, "{verify}");
    assert_eq!(verify.json()["commits"][0]["status"], "forced", "{verify}");
    env.assert_fsck_clean();
}

#[test]
fn a_file_over_max_file_bytes_is_listed_as_unreviewed() {
    let env = TestEnv::new();
    env.git(&["config", "pair.maxFileBytes", "2000"]);
    env.start("Add the data table");
    env.write("data/table.txt", &"0123456789\n".repeat(500));
    env.write("src/lib.rs", "pub fn rows() -> usize { 500 }\n");
    env.pair_json(&["coder-done", "--summary", "Added the table"]);
    let out = env.pair(&["review", "--dry-run", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(
        v["coverage"]["unreviewed"],
        serde_json::json!(["data/table.txt"])
    );
    let prompt = v["prompt"].as_str().expect("prompt");
    assert!(
        prompt
            .contains("[git-pair] not shown (5500 bytes, over pair.maxFileBytes): data/table.txt"),
        "{prompt}"
    );
    assert!(!prompt.contains("+0123456789"), "{prompt}");
    assert!(prompt.contains("+pub fn rows()"), "{prompt}");
}

#[test]
fn text_with_a_stray_byte_is_shown_escaped_not_as_binary() {
    let env = TestEnv::new();
    env.start("Fix the greeting");
    std::fs::write(env.repo.join("greeting.txt"), b"caf\xe9 au lait\n").expect("write");
    env.pair_json(&["coder-done", "--summary", "Latin-1 greeting"]);
    let v = env.pair_json(&["review", "--dry-run"]);
    assert_eq!(v["coverage"]["full"], 1, "{v}");
    assert_eq!(v["coverage"]["summary"], Value::Null, "{v}");
    let prompt = v["prompt"].as_str().expect("prompt");
    assert!(prompt.contains("+caf\\xe9 au lait"), "{prompt}");
    assert!(!prompt.contains("Binary files"), "{prompt}");
}

#[test]
fn attributes_outside_the_committed_tree_do_not_hide_a_file() {
    let env = TestEnv::new();
    // The repository's own info/attributes, and a global attributes file, say `-diff`.
    std::fs::create_dir_all(env.repo.join(".git/info")).expect("info");
    std::fs::write(env.repo.join(".git/info/attributes"), "*.rs -diff\n").expect("attrs");
    let global = env.home.join("attributes");
    std::fs::write(&global, "*.py binary\n").expect("global attrs");
    env.git(&[
        "config",
        "core.attributesFile",
        global.to_str().expect("utf8"),
    ]);
    // The committed tree's own .gitattributes does decide.
    env.write(".gitattributes", "*.dat -diff\n");
    env.git(&["add", ".gitattributes"]);
    env.git(&["commit", "-q", "-m", "attributes"]);
    env.start("Change the three files");
    env.write("src/lib.rs", "pub fn hidden() {}\n");
    env.write("tool.py", "print('hidden')\n");
    env.write("blob.dat", "text the tree marks -diff\n");
    env.pair_json(&["coder-done", "--summary", "Three files"]);
    let v = env.pair_json(&["review", "--dry-run"]);
    let prompt = v["prompt"].as_str().expect("prompt");
    assert!(prompt.contains("+pub fn hidden() {}"), "{prompt}");
    assert!(prompt.contains("+print('hidden')"), "{prompt}");
    assert!(
        prompt.contains("Binary files /dev/null and b/blob.dat differ"),
        "{prompt}"
    );
    assert_eq!(v["coverage"]["unreviewed"], serde_json::json!(["blob.dat"]));
}
