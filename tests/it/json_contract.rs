//! The `--json` contract of every command (SPEC: one compact object on stdout): the exact set
//! and order of its keys, top level and one level down (the first element of an array of
//! objects stands for all), pinned through the built binary in small real scenarios.
//!
//! A key skeleton reads `{a,b:{c,d},e:[{f}]}`; scalars, nulls and arrays of scalars show only
//! their key. A refactor of the command layer must leave every skeleton here as it is.

use serde_json::Value;

use crate::common::{Output, TestEnv, fixtures};
use crate::cost::{CLAUDE_SESSION, env_with_logs};
use crate::sync::Net;

/// How deep a skeleton shows keys: the top level and one level of nested objects.
const DEPTH: usize = 2;

fn skeleton(v: &Value, depth: usize) -> String {
    match v {
        Value::Object(map) if depth > 0 => {
            let keys: Vec<String> = map
                .iter()
                .map(|(k, v)| match nested(v, depth - 1) {
                    Some(inner) => format!("{k}:{inner}"),
                    None => k.clone(),
                })
                .collect();
            format!("{{{}}}", keys.join(","))
        }
        _ => String::new(),
    }
}

fn nested(v: &Value, depth: usize) -> Option<String> {
    if depth == 0 {
        return None;
    }
    match v {
        Value::Object(_) => Some(skeleton(v, depth)),
        Value::Array(items) => match items.first() {
            Some(first @ Value::Object(_)) => Some(format!("[{}]", skeleton(first, depth))),
            _ => None,
        },
        _ => None,
    }
}

/// Runs `git pair args --json`, asserts the exit code and the key skeleton of its stdout,
/// and returns the JSON.
fn pin(env: &TestEnv, args: &[&str], code: i32, expected: &str) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = env.pair(&all);
    pin_output(&out, args, code, expected)
}

fn pin_output(out: &Output, args: &[&str], code: i32, expected: &str) -> Value {
    assert_eq!(out.code, code, "git pair {args:?}:\n{out}");
    let v = out.json();
    let actual = skeleton(&v, DEPTH);
    assert_eq!(actual, expected, "git pair {args:?} --json");
    v
}

fn reviewer(script: &str) -> String {
    format!(
        "[\"{}\"]",
        fixtures().join("reviewers").join(script).display()
    )
}

/// A run with one coder round reviewed by `script`.
fn reviewed(script: &str) -> (TestEnv, String) {
    let env = TestEnv::new();
    let run_id = env.start("json contract");
    env.write("src/lib.rs", "pub fn f() {}\n");
    env.pair_json(&["coder-done", "--summary", "first"]);
    let out = env.pair(&["review", "--reviewer-cmd", &reviewer(script)]);
    assert_eq!(out.code, 0, "{out}");
    (env, run_id)
}

/// An approved, committed and finished run (the note attached); returns its id.
fn finished() -> (TestEnv, String) {
    let (env, run_id) = reviewed("approve.sh");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "first"]);
    env.pair_json(&["finish"]);
    (env, run_id)
}

#[test]
fn start_json_keys() {
    let env = TestEnv::new();
    let expected = "{run_id,ref,handoff_path,max_rounds,coder,reviewer,base,branch,replaced}";
    pin(&env, &["start", "--task", "t"], 0, expected);
    pin(&env, &["start", "--replace", "--task", "t"], 0, expected);
}

#[test]
fn status_json_keys() {
    let env = TestEnv::new();
    env.start("t");
    let settings = "settings:{reviewer,reviewers,coder,max-rounds,budget-usd,review-timeout,handoff-authorized,archive-authorized,reviewer-model,reviewer-effort,pr-final-round,fallback-order}";
    let expected = format!(
        "{{run_id,round,max_rounds,last_verdict,next_action,spent_usd,unpriced_models,budget_usd,branch,task,conflicts,checkpoint,compactions,reviewer,reviewer_fallback,{settings}}}"
    );
    pin(&env, &["status"], 0, &expected);
    env.pair_json(&["checkpoint", "create", "--next", "go on"]);
    let expected = format!(
        "{{run_id,round,max_rounds,last_verdict,next_action,spent_usd,unpriced_models,budget_usd,branch,task,conflicts,checkpoint:{{id,assessment,state,handed_over}},compactions,reviewer,reviewer_fallback,{settings}}}"
    );
    pin(&env, &["status"], 0, &expected);
}

#[test]
fn coder_done_json_keys() {
    let env = TestEnv::new();
    env.start("t");
    pin(&env, &["coder-done", "--summary", "x"], 0, "{round,run_id}");
}

#[test]
fn review_json_keys() {
    let env = TestEnv::new();
    env.start("t");
    env.write("src/lib.rs", "pub fn f() {}\n");
    env.pair_json(&["coder-done", "--summary", "first"]);
    let coverage =
        "coverage:{files_total,full,clipped,names_only,not_included,bytes_included,summary,passes}";
    let approve = reviewer("approve.sh");
    pin(
        &env,
        &["review", "--dry-run", "--reviewer-cmd", &approve],
        0,
        &format!(
            "{{dry_run,run_id,round,mode,reviewers:[{{reviewer,argv}}],unbound,{coverage},secrets,prompt}}"
        ),
    );
    let changes = reviewer("request-changes.sh");
    pin(
        &env,
        &["review", "--reviewer-cmd", &changes],
        0,
        &format!(
            "{{run_id,round,verdict,findings:[{{n,category,severity,location,text}}],outcome,outcomes:[{{reviewer,outcome,attempts,session_id}}],fallback_used,parallelism:{{limit,bound_by}},{coverage},model,effort,next_action}}"
        ),
    );
    env.write("src/lib.rs", "pub fn f() -> u8 { 1 }\n");
    env.pair_json(&["coder-done", "--summary", "second"]);
    pin(
        &env,
        &["review", "--reviewer-cmd", &approve],
        0,
        &format!(
            "{{run_id,round,verdict,findings,outcome,outcomes:[{{reviewer,outcome,attempts,session_id}}],fallback_used,parallelism:{{limit,bound_by}},{coverage},model,effort,next_action}}"
        ),
    );
}

#[test]
fn plan_review_without_a_run_json_keys() {
    let env = TestEnv::new();
    env.write_outside("plan.md", "a plan\n");
    let plan = env.home.join("plan.md");
    pin(
        &env,
        &[
            "review",
            "--plan",
            plan.to_str().expect("utf8"),
            "--reviewer-cmd",
            &reviewer("request-changes.sh"),
        ],
        0,
        "{stored,mode,verdict,findings:[{n,category,severity,location,text}],outcome,reviewers,model,effort}",
    );
}

#[test]
fn diff_json_keys() {
    let (env, run_id) = reviewed("approve.sh");
    pin(
        &env,
        &["diff", &run_id, "--round", "1"],
        0,
        "{run_id,round,since_round,files,diff}",
    );
}

#[test]
fn finish_json_keys() {
    let (env, _) = reviewed("approve.sh");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "first"]);
    let expected = "{run_id,pr_body_path,verdict,pr,override,note_commit}";
    pin(&env, &["finish"], 0, expected);
    pin(&env, &["finish", "--pr", "7"], 0, expected);
}

#[test]
fn pr_body_json_keys() {
    let (env, _) = finished();
    pin(&env, &["pr-body"], 0, "{run_id,body}");
    let file = env.home.join("description.md");
    std::fs::write(&file, "My own words.\n").expect("write description");
    let file = file.to_str().expect("utf-8 path");
    pin(
        &env,
        &["pr-body", "--update", file],
        0,
        "{run_id,path,body}",
    );
}

#[test]
fn demo_json_keys() {
    let env = TestEnv::new();
    pin(
        &env,
        &["demo"],
        0,
        "{repo,kept,run_id,verdicts,pr_body_path}",
    );
}

#[test]
fn probe_json_keys() {
    let env = TestEnv::new();
    env.start("t");
    pin(
        &env,
        &["probe", "--reviewer-cmd", &reviewer("approve.sh")],
        0,
        "{realizations:[{name,binds,reason,path}],reviewers:[{configured,winner,fallback_used,probed}]}",
    );
}

#[test]
fn budget_check_json_keys() {
    let env = TestEnv::new();
    env.pair_json(&["start", "--task", "t", "--budget-usd", "10"]);
    pin(
        &env,
        &["budget-check"],
        0,
        "{level,spent,limit,run_id,unknown_models,unpriced_models}",
    );
}

#[test]
fn cost_json_keys() {
    let env = env_with_logs();
    env.git(&["checkout", "-q", "-b", "other"]);
    env.start("other run");
    env.pair_json(&["abandon"]);
    env.git(&["checkout", "-q", "main"]);
    env.start("main run");
    env.pair_json(&["coder-done", "--summary", "x", "--session", CLAUDE_SESSION]);
    let out = env.pair(&["cost", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let v = out.json();
    assert_eq!(skeleton(&v, 1), "{runs,total_usd,unpriced_models}");
    // Two runs: the selected one round by round (which comes first depends on the ids).
    let mut runs: Vec<String> = v["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|run| skeleton(run, DEPTH))
        .collect();
    runs.sort();
    assert_eq!(
        runs,
        [
            "{run_id,spent_usd,unpriced_models,budget_usd,rounds:[{n,role,tool,cost_usd}],sessions:[{session_id,role,tool,agent,stored_usd,measured_usd,usd,tokens}],unknown_models}",
            "{run_id,spent_usd,unpriced_models,budget_usd}",
        ]
    );
    pin(
        &env,
        &["cost", "--session", CLAUDE_SESSION],
        0,
        "{session_id,agent,total_usd,tokens:{input,output,cache_write_5m,cache_write_1h,cache_read,cached_input,reasoning_output},models:[{model,priced_as,cost_usd,requests,fast_requests,long_context_requests,tokens}],unknown_models,requests,skipped_lines,files,pricing_as_of}",
    );
}

#[test]
fn handoff_json_keys() {
    let env = TestEnv::new();
    env.start("t");
    pin(&env, &["handoff"], 0, "{run_id,handoff_path,text}");
}

#[test]
fn list_json_keys() {
    let env = TestEnv::new();
    pin(&env, &["list"], 0, "{runs,malformed_runs}");
    env.start("t");
    pin(
        &env,
        &["list"],
        0,
        "{runs:[{run_id,branch,task,round,next_action,verdict,created_at,owned}],malformed_runs}",
    );
}

#[test]
fn adopt_json_keys() {
    let env = TestEnv::new();
    let run_id = env.start("t");
    pin(
        &env,
        &["adopt", &run_id],
        0,
        "{run_id,branch,adopted,active,current_branch,next_action,handoff_path}",
    );
}

#[test]
fn show_json_keys() {
    let (env, run_id) = reviewed("request-changes.sh");
    pin(
        &env,
        &["show", &run_id],
        0,
        "{v,run_id,task,cwd,branch,base,coder,reviewer,max_rounds,budget_usd,budget_warn_ratio,created_at,rounds:[{n,role,tool,session_id,started_at,ended_at,findings,findings_addressed,verdict,outcome,cost_usd,summaries}],reviewer_fallback,outcome:{verdict,rounds,override},pr,next_action,spent_usd,sessions:{},pending_review,run_settings:{},claimed,conflicts,records,last_seq,last_record,records_tree}",
    );
    pin(
        &env,
        &["show", &run_id, "--round", "1"],
        0,
        "{run_id,round,records:[{v,id,seq,at,kind,summary,tool,findings_addressed,session_id,extra_round,round}]}",
    );
    for material in ["diff", "prompt", "output"] {
        let flag = format!("--{material}");
        let expected = format!("{{run_id,round,{material}}}");
        pin(
            &env,
            &["show", &run_id, "--round", "1", &flag],
            0,
            &expected,
        );
    }
}

#[test]
fn push_and_pull_json_keys() {
    let net = Net::new(2);
    let (a, b) = (&net.clones[0], &net.clones[1]);
    a.start("t");
    a.pair_json(&["coder-done", "--summary", "x"]);
    let runs = "runs:{created,fast_forwarded,merged,unchanged,local_ahead}";
    let removed = "removed:{runs,kept,kept_active,tombstones_learnt,note_lines}";
    pin(
        a,
        &["push"],
        0,
        &format!(
            "{{remote,pushed,pushed_runs,pushed_notes,pushed_tombstones,removed_runs,attempts,{runs},notes,{removed},scanned:{{commits,blobs,bytes,skipped}},allowed,allowances_recorded:{{}},handoff_path}}"
        ),
    );
    pin(
        b,
        &["pull"],
        0,
        &format!("{{remote,{runs},notes,remote_runs,{removed},handoff_path}}"),
    );
}

#[test]
fn set_json_keys() {
    let env = TestEnv::new();
    env.start("t");
    let expected = "{run_id,key,value,from}";
    pin(&env, &["set", "max-rounds", "3"], 0, expected);
    pin(&env, &["set", "--unset", "max-rounds"], 0, expected);
}

#[test]
fn abandon_json_keys() {
    let env = TestEnv::new();
    env.start("t");
    pin(
        &env,
        &["abandon", "--reason", "no"],
        0,
        "{run_id,outcome,next_action}",
    );
}

#[test]
fn checkpoint_json_keys() {
    let env = TestEnv::new();
    env.start("t");
    let created = pin(
        &env,
        &["checkpoint", "create", "--next", "go on"],
        0,
        "{id,assessment,bytes,run_id,carrier,reasons,status,check}",
    );
    let id = created["id"].as_str().expect("id").to_owned();
    pin(
        &env,
        &["checkpoint", "show", &id],
        0,
        "{id,run_id,at,state,assessment,packet:{checkpoint,repo,check,goal,next,criteria,verified,unverified,language,locale,time_zone,context,authorized,compactions,assessment,reasons}}",
    );
    pin(
        &env,
        &["checkpoint", "verify", &id],
        0,
        "{result,mismatches,id,run_id,check,recorded}",
    );
    pin(
        &env,
        &["checkpoint", "restore", &id],
        0,
        "{id,run_id,head,branch,checkout,status_matches,adopted}",
    );
    pin(
        &env,
        &["checkpoint", "compaction", "--authorized"],
        0,
        "{count,assessment,reasons,run_id}",
    );
    pin(
        &env,
        &["checkpoint", "archive", &id, "--authorize-archive"],
        0,
        "{state,id,run_id,already}",
    );
}

#[test]
fn verify_json_keys() {
    let (env, _) = finished();
    let commits = "commits:[{commit,status,passes,run,round,reviewer,cost_usd,paths,paths_omitted,via,subject,detail}]";
    pin(
        &env,
        &["verify", "HEAD"],
        0,
        &format!("{{range,ok,allow_forced,{commits},malformed_runs}}"),
    );
    env.write("late.txt", "unreviewed\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "late"]);
    pin(
        &env,
        &["verify", "HEAD"],
        1,
        &format!("{{range,ok,allow_forced,{commits},malformed_runs,error}}"),
    );
}

#[test]
fn hooks_json_keys() {
    let env = TestEnv::new();
    pin(
        &env,
        &["hooks", "install"],
        0,
        "{hooks_dir,gate,hooks:[{hook,path,outcome}],notes_rewrite_ref}",
    );
    pin(
        &env,
        &["hooks", "uninstall"],
        0,
        "{hooks_dir,hooks:[{hook,path,outcome}],notes_rewrite_ref}",
    );
}

#[test]
fn gate_json_keys() {
    let env = TestEnv::new();
    pin(&env, &["gate"], 0, "{open,reason,branch}");
    let (env, _) = reviewed("approve.sh");
    env.git(&["add", "-A"]);
    pin(
        &env,
        &["gate"],
        0,
        "{open,reason,run_id,round,reviewer,tree}",
    );
}

#[test]
fn skill_json_keys() {
    let env = TestEnv::new();
    pin(
        &env,
        &["skill", "install", "--project"],
        0,
        "{project,installed:[{agent,dir,files}],skipped}",
    );
}

#[test]
fn drop_json_keys() {
    let (env, run_id) = finished();
    pin(
        &env,
        &["drop", &run_id],
        0,
        "{run_id,was_local,tombstone,tombstone_created,removed_refs,removed_note_lines,removed_files,remote}",
    );
}

#[test]
fn skeletons_show_keys_in_order_one_level_down() {
    let v: Value = serde_json::from_str(
        r#"{"b":1,"a":{"y":null,"x":{"deep":1}},"c":[{"k":1}],"d":[1],"e":[]}"#,
    )
    .expect("json");
    assert_eq!(skeleton(&v, DEPTH), "{b,a:{y,x},c:[{k}],d,e}");
}

#[test]
fn log_json_keys() {
    let env = TestEnv::new();
    env.start("t");
    env.write("a.txt", "a\n");
    env.pair_json(&["coder-done", "--summary", "s"]);
    pin(
        &env,
        &["log"],
        0,
        "{run_id,task,branch,outcome,pr,spent_usd,unpriced_models,rounds:[{n,coder,reviews}],next_action}",
    );
}

#[test]
fn install_man_json_keys() {
    let env = TestEnv::new();
    let dir = env.home.join("man");
    pin(
        &env,
        &["install-man", "--dir", dir.to_str().expect("utf-8")],
        0,
        "{dir,pages,beside_binary}",
    );
}

#[test]
fn finish_push_json_keys() {
    let net = Net::new(1);
    let env = &net.clones[0];
    env.start("json contract");
    env.write("src/lib.rs", "pub fn f() {}\n");
    env.pair_json(&["coder-done", "--summary", "first"]);
    let out = env.pair(&["review", "--reviewer-cmd", &reviewer("approve.sh")]);
    assert_eq!(out.code, 0, "{out}");
    pin(
        env,
        &["finish", "--push"],
        0,
        "{run_id,pr_body_path,verdict,pr,override,note_commit,push:{remote,pushed,pushed_runs,pushed_notes,pushed_tombstones,removed_runs,attempts,runs,notes,removed,scanned,allowed,allowances_recorded,handoff_path}}",
    );
    pin(
        env,
        &["finish", "--push=nowhere"],
        1,
        "{run_id,pr_body_path,verdict,pr,override,note_commit,push,error,kind,hint}",
    );
}
