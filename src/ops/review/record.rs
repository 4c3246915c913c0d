//! Recording a round: the dispatch record (with the packet it sends) before any reviewer is
//! spawned, and afterwards the outcome with every attempt's material and the reviewers'
//! measured spend. The store's layout is named through [`Material`], never spelled here.
//!
//! Secrets: the packet arrives redacted; here the round's verdict takes the blocking
//! `[secret]` findings (a change holding a secret is never APPROVED), and whatever a
//! reviewer wrote (stdout, findings, errors, stderr tails) is redacted before it is stored,
//! since a reviewer may echo a secret it found elsewhere.

use serde::Serialize;

use super::plan::{MemberResult, Plan, RoundOutcome, Settings};
use crate::cost::spend::{NewSession, RunSpend};
use crate::model::{
    Body, Finding, Refusal, Review, ReviewAttempt, ReviewDispatch, ReviewMember, Runner, SecretAt,
    Severity, Verdict,
};
use crate::ops::Error;
use crate::review::{self, ProbeReport};
use crate::secrets::Scanner;
use crate::store::{Append, Content, Material, Repo, ReviewDir};

/// Stores the dispatch record (and the packet it sends) before any reviewer is spawned.
/// Fails loudly when it cannot be written: then nothing may be spawned.
pub fn dispatch(repo: &Repo, plan: &Plan, settings: &Settings) -> Result<String, Error> {
    // The record keeps realization names (a resumed dispatch binds them again); the subject
    // names the reviewers as everything else does.
    let labels = plan.reviewer_labels();
    let subject = match &plan.resumes {
        Some(_) => format!(
            "review {}: re-dispatched to {}",
            plan.round,
            labels.join(", ")
        ),
        None => format!("review {}: dispatched to {}", plan.round, labels.join(", ")),
    };
    let body = Body::ReviewDispatch(dispatch_record(plan, settings));
    let dir = ReviewDir::Round(plan.round);
    let (id, _) = store_dispatch(repo, plan, |_| Ok((dir, body.clone(), subject.clone())))?;
    Ok(id)
}

/// What a dispatch records of `plan`: the round, its reviewers, the reviewed tree, the
/// process dispatching it (what tells a running review from one whose process died), the
/// redacted secrets and the panel's limit.
pub(super) fn dispatch_record(plan: &Plan, settings: &Settings) -> ReviewDispatch {
    ReviewDispatch {
        round: plan.round,
        reviewers: plan.reviewer_names(),
        snapshot: plan.snapshot.into(),
        mode: plan.mode.as_str().to_owned(),
        again: settings.again,
        runner: Some(Runner {
            host: crate::process::host_name(),
            pid: std::process::id(),
            start_time: crate::process::start_time(std::process::id()),
        }),
        redacted: plan.secrets.clone(),
        over_budget: settings.over_budget,
        parallelism: Some(plan.panel_limit()),
        carried: plan.carried.iter().map(|c| c.realization.clone()).collect(),
    }
}

/// Stores a dispatch record with the packet it sends (prompt, diff, coverage, the prompt's
/// parts, and for a coder round the reviewed snapshot) before any reviewer is spawned.
/// `made` says, from the run as the append finds it, where the material goes, the record and
/// its subject. Returns the record's id and that place. Fails loudly when it cannot be
/// written: then nothing may be spawned.
pub(super) fn store_dispatch(
    repo: &Repo,
    plan: &Plan,
    mut made: impl FnMut(&crate::store::RunState) -> Result<(ReviewDir, Body, String), Refusal>,
) -> Result<(String, ReviewDir), Error> {
    let prompt = plan.prompt(plan.attempt_base + 1, 0);
    let coverage = serde_json::to_vec_pretty(&plan.coverage).expect("coverage serializes");
    let context = serde_json::to_vec_pretty(&plan.parts).expect("prompt parts serialize");
    let mut stored_in = ReviewDir::Round(plan.round);
    let appended = repo.append(&plan.run_id, |state| {
        if state.manifest.is_finished() {
            return Err(Refusal::FinishedMeanwhile {
                run_id: plan.run_id.to_string(),
            });
        }
        let (dir, body, subject) = made(state)?;
        stored_in = dir;
        let mut append = Append::record(body, subject);
        append.round = Some(plan.round);
        append.put_in(
            dir,
            Material::Prompt,
            Content::Blob(prompt.clone().into_bytes()),
        );
        append.put_in(
            dir,
            Material::Diff,
            Content::Blob(plan.diff.clone().into_bytes()),
        );
        append.put_in(dir, Material::Coverage, Content::Blob(coverage.clone()));
        append.put_in(dir, Material::Context, Content::Blob(context.clone()));
        // A PR's head is the remote's: its tree is named in the record, not stored.
        if let ReviewDir::Round(round) = dir {
            append.put(round, Material::Snapshot, Content::Tree(plan.snapshot));
        }
        Ok(append)
    })?;
    Ok((appended.record.id, stored_in))
}

/// Stores one panel member's finished part of dispatch `dispatch_id` the moment it finishes
/// (redacted, its attempts' raw output beside it), so a review resumed after an interruption
/// keeps it instead of running it again. Only a member with a verdict is stored: one that
/// failed runs again.
pub fn member(
    repo: &Repo,
    plan: &Plan,
    dispatch_id: &str,
    slot: usize,
    result: &MemberResult,
    scanner: &Scanner,
) -> Result<(), Error> {
    if result.verdict.is_none() {
        return Ok(());
    }
    let result = redact_result(scanner, result.clone());
    let path = crate::store::member_path(plan.round, dispatch_id, slot as u32);
    let mut attempts = serde_json::json!({
        "v": 1,
        "attempts": result
            .attempts
            .iter()
            .map(|a| serde_json::json!({
                "attempt": a,
                "stdout": String::from_utf8_lossy(&a.stdout),
            }))
            .collect::<Vec<_>>(),
    });
    scanner.redact_json(&path, &mut attempts);
    let body = Body::ReviewMember(ReviewMember {
        dispatch: dispatch_id.to_owned(),
        round: plan.round,
        slot: slot as u32,
        result: review_attempt(&result),
        findings: result.findings.clone(),
        fallback_used: result.fallback_used,
    });
    let subject = format!(
        "review {}: {} finished ({})",
        plan.round,
        result.name,
        result.verdict.map_or("no verdict", |v| v.as_str())
    );
    let attempts = pretty(&attempts);
    repo.append(&plan.run_id, |state| {
        if state.manifest.is_finished() {
            return Err(Refusal::FinishedMeanwhile {
                run_id: plan.run_id.to_string(),
            });
        }
        let mut append = Append::record(body.clone(), subject.clone());
        append.round = Some(plan.round);
        append
            .files
            .push((path.clone(), Content::Blob(attempts.clone())));
        Ok(append)
    })?;
    Ok(())
}

/// The members' results a dispatch being resumed keeps: for each slot of its reviewers, the
/// part stored under it or an earlier interrupted dispatch of the round (`chain`), when it has
/// a verdict, names the same reviewer and its attempts can be read back. Anything else runs
/// again.
pub fn carried(
    repo: &Repo,
    state: &crate::store::RunState,
    records: &[crate::model::Record],
    chain: &[String],
    reviewers: &[String],
) -> Result<Vec<super::plan::Carried>, Error> {
    let mut out = Vec::new();
    for (slot, name) in reviewers.iter().enumerate() {
        let stored = records.iter().rev().find_map(|r| match &r.body {
            Body::ReviewMember(m)
                if chain.contains(&m.dispatch)
                    && m.slot as usize == slot
                    && crate::model::reviewer::names(&m.result.tool, name)
                    && m.result.verdict.is_some() =>
            {
                Some(m)
            }
            _ => None,
        });
        let Some(stored) = stored else { continue };
        let path = crate::store::member_path(stored.round, &stored.dispatch, stored.slot);
        let Some(attempts) = repo
            .run_file(state, &path)?
            .and_then(|bytes| read_member_attempts(&bytes))
        else {
            continue;
        };
        out.push(super::plan::Carried {
            slot,
            realization: name.clone(),
            result: MemberResult {
                name: stored.result.tool.clone(),
                configured: stored.result.reviewer.clone(),
                fallback_used: stored.fallback_used,
                outcome: match stored.result.outcome.as_str() {
                    "completed" => review::Outcome::Completed,
                    _ => review::Outcome::FailedValidation,
                },
                verdict: stored.result.verdict,
                findings: stored.findings.clone(),
                session_id: stored.result.session_id.clone(),
                attempts,
                error: stored.result.error.clone(),
            },
        });
    }
    Ok(out)
}

fn read_member_attempts(bytes: &[u8]) -> Option<Vec<review::Attempt>> {
    #[derive(serde::Deserialize)]
    struct Stored {
        attempt: review::Attempt,
        stdout: String,
    }
    #[derive(serde::Deserialize)]
    struct File {
        v: u32,
        attempts: Vec<Stored>,
    }
    let file: File = serde_json::from_slice(bytes)
        .ok()
        .filter(|f: &File| f.v == 1)?;
    Some(
        file.attempts
            .into_iter()
            .map(|s| review::Attempt {
                stdout: s.stdout.into_bytes(),
                ..s.attempt
            })
            .collect(),
    )
}

pub(super) fn review_attempt(r: &MemberResult) -> ReviewAttempt {
    ReviewAttempt {
        reviewer: r.configured.clone(),
        tool: r.name.clone(),
        outcome: r.outcome.as_str().to_owned(),
        verdict: r.verdict,
        session_id: r.session_id.clone(),
        attempts: r.attempts.len() as u32,
        duration_ms: r.attempts.iter().map(|a| a.duration_ms).sum(),
        error: r.error.clone(),
        // The CLI's figure for the session the member ended in (its largest: a resumed
        // Claude Code session reports its cost so far).
        cost_usd: r
            .attempts
            .iter()
            .filter(|a| a.session_id.is_some() && a.session_id == r.session_id)
            .filter_map(|a| a.cost_usd)
            .reduce(f64::max),
    }
}

/// Combines the members' results into the round's verdict and stores the outcome record
/// with every attempt's material, plus cost measurements of the reviewers' sessions.
pub fn record(
    repo: &Repo,
    plan: &Plan,
    dispatch_id: &str,
    results: Vec<MemberResult>,
    settings: &Settings,
    sources: Option<&crate::cost::spend::Sources>,
) -> Result<RoundOutcome, Error> {
    let (results, combined) = reviewed(plan, results, settings);
    let body = review_body(plan, dispatch_id, &results, &combined, settings);
    let subject = subject(plan.round, &results, &combined);
    store_outcome(
        repo,
        plan,
        &settings.scanner,
        ReviewDir::Round(plan.round),
        Outcome {
            body: &body,
            subject: &subject,
            results: &results,
            combined: &combined,
            trailer: combined.verdict,
        },
        sources,
    )?;
    let Combined {
        verdict,
        findings,
        outcome,
        error,
        fallback_used,
    } = combined;
    Ok(RoundOutcome {
        round: plan.round,
        verdict,
        outcome,
        findings,
        members: results,
        fallback_used,
        coverage: plan.coverage.clone(),
        error,
    })
}

/// The members' results with every secret in what they wrote redacted, and what they add
/// up to.
pub(super) fn reviewed(
    plan: &Plan,
    results: Vec<MemberResult>,
    settings: &Settings,
) -> (Vec<MemberResult>, Combined) {
    let results: Vec<MemberResult> = results
        .into_iter()
        .map(|r| redact_result(&settings.scanner, r))
        .collect();
    let combined = combine(plan, &results, settings.quorum);
    (results, combined)
}

/// A review's outcome as stored: its record and subject, and the (redacted) results and
/// their sum whose material goes beside it.
pub(super) struct Outcome<'a> {
    pub(super) body: &'a Body,
    pub(super) subject: &'a str,
    pub(super) results: &'a [MemberResult],
    pub(super) combined: &'a Combined,
    /// The commit's `Pair-Verdict:` trailer.
    pub(super) trailer: Option<Verdict>,
}

/// Stores a dispatched review's outcome record in `dir` with every attempt's material
/// (raw output, attempts, result, probe reports) and, where measured now, the reviewers'
/// sessions' spend as cost records of the round.
pub(super) fn store_outcome(
    repo: &Repo,
    plan: &Plan,
    scanner: &Scanner,
    dir: ReviewDir,
    outcome: Outcome<'_>,
    sources: Option<&crate::cost::spend::Sources>,
) -> Result<(), Error> {
    let files = round_files(scanner, dir, plan, outcome.results, outcome.combined);
    let spend = sources.map(|sources| measure_reviewers(repo, plan, outcome.results, sources));
    let round = plan.round;
    let verdict = outcome.trailer;
    repo.append(&plan.run_id, |state| {
        let mut append = Append::record(outcome.body.clone(), outcome.subject.to_owned());
        append.round = Some(round);
        append.verdict = verdict.map(|v| v.as_str().to_owned());
        for (material, content) in &files {
            append.put_in(dir, *material, content.clone());
        }
        if let Some(spend) = &spend {
            append.also = crate::cost::spend::growth_records(&state.manifest, spend, round)
                .into_iter()
                .map(|mut b| {
                    if let Body::Cost(c) = &mut b {
                        c.round = round;
                    }
                    b
                })
                .collect();
        }
        Ok(append)
    })?;
    Ok(())
}

/// What the members' results add up to: the round's verdict, its numbered findings, its
/// outcome and error.
pub(super) struct Combined {
    pub(super) verdict: Option<Verdict>,
    pub(super) findings: Vec<Finding>,
    pub(super) outcome: String,
    pub(super) error: Option<String>,
    pub(super) fallback_used: bool,
}

/// The panel's verdict under `quorum`, the findings renumbered across members (each prefixed
/// with its reviewer in a panel), the secrets' blocking findings, and the outcome and error.
pub(super) fn combine(plan: &Plan, results: &[MemberResult], quorum: Option<usize>) -> Combined {
    let verdicts: Vec<Option<Verdict>> = results.iter().map(|r| r.verdict).collect();
    let mut verdict = review::panel_verdict(&verdicts, quorum);
    let panel = results.len() > 1;
    let mut findings = Vec::new();
    for r in results {
        for f in &r.findings {
            let mut f = f.clone();
            f.n = findings.len() as u32 + 1;
            if panel {
                f.text = format!("({}) {}", r.name, f.text);
            }
            findings.push(f);
        }
    }
    // A change holding a secret cannot be approved as is, whatever the reviewers said. A
    // review without a verdict stays one (no round is used), so it gets none of these.
    if verdict.is_some() && !plan.secrets.is_empty() {
        for at in &plan.secrets {
            let mut f = secret_finding(at);
            f.n = findings.len() as u32 + 1;
            findings.push(f);
        }
        verdict = Some(Verdict::ChangesRequested);
    }
    // Verdict and findings must agree (SPEC §6.3): an APPROVED answer that carries a blocking
    // finding is not an approval. It is recorded as CHANGES_REQUESTED, with a `[process]`
    // finding saying why, so the transcript, the gate and the PR body all see the same thing.
    if verdict == Some(Verdict::Approved)
        && let Some(blocking) = findings.iter().find(|f| f.blocks_approval())
    {
        let what = match blocking.severity {
            Some(severity) if !matches!(severity, Severity::Low | Severity::Medium) => {
                format!("a {} finding", severity.as_str())
            }
            _ => format!("a [{}] finding", blocking.category.trim()),
        };
        findings.push(Finding {
            n: findings.len() as u32 + 1,
            category: "process".to_owned(),
            severity: Some(Severity::High),
            location: String::new(),
            text: format!(
                "the reviewer answered APPROVED but raised {what} (#{}); an approval may carry only low or medium findings, so the round is recorded as CHANGES_REQUESTED",
                blocking.n
            ),
        });
        verdict = Some(Verdict::ChangesRequested);
    }
    let failed: Vec<&MemberResult> = results.iter().filter(|r| r.verdict.is_none()).collect();
    // A verdict that only the fail-closed rule produced (no reviewer's answer could be read)
    // is not a review of the code: the round's outcome says so, and the next step is to
    // review again, not to "fix the findings".
    let unreadable = results
        .iter()
        .filter(|r| r.verdict.is_some())
        .all(|r| r.outcome == review::Outcome::FailedValidation);
    let outcome = match (verdict, failed.first()) {
        (Some(_), _) if unreadable => "failed-validation".to_owned(),
        (Some(_), _) => "completed".to_owned(),
        (None, Some(f)) => f.outcome.as_str().to_owned(),
        (None, None) => "failed-validation".to_owned(),
    };
    let error = match verdict {
        Some(_) => None,
        None => Some(
            failed
                .iter()
                .filter_map(|r| r.error.clone())
                .collect::<Vec<_>>()
                .join("; ")
                + if failed.len() < results.len() {
                    " (partial panel: the others' results are kept, below the quorum)"
                } else {
                    ""
                },
        ),
    }
    .filter(|e| !e.is_empty());
    Combined {
        verdict,
        findings,
        outcome,
        error,
        fallback_used: results.iter().any(|r| r.fallback_used),
    }
}

/// The `review` record of the round.
fn review_body(
    plan: &Plan,
    dispatch_id: &str,
    results: &[MemberResult],
    combined: &Combined,
    settings: &Settings,
) -> Body {
    let coverage_warning = plan
        .coverage
        .summary
        .clone()
        .filter(|_| plan.coverage.is_partial());
    let reviewers: Vec<ReviewAttempt> = results.iter().map(review_attempt).collect();
    Body::Review(Review {
        dispatch: dispatch_id.to_owned(),
        round: plan.round,
        verdict: combined.verdict,
        outcome: combined.outcome.clone(),
        tool: results
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        findings: combined.findings.clone(),
        reviewers,
        fallback_used: combined.fallback_used,
        snapshot: Some(plan.snapshot.into()),
        coverage_warning,
        error: combined.error.clone(),
        model: settings.model.clone(),
        effort: settings.effort.clone(),
    })
}

/// The round's material stored beside the record: every attempt's output and attempt data
/// (redacted), the result and the probe reports.
fn round_files(
    scanner: &Scanner,
    dir: ReviewDir,
    plan: &Plan,
    results: &[MemberResult],
    combined: &Combined,
) -> [(Material, Content); 4] {
    let mut output = Vec::new();
    let mut attempts_json = Vec::new();
    for r in results {
        for (i, a) in r.attempts.iter().enumerate() {
            output.extend_from_slice(
                format!(
                    "===== {} attempt {} · {} · exit {} · {} ms =====\n",
                    r.name,
                    i + 1,
                    a.outcome,
                    a.exit_code.map_or_else(
                        || a.signal
                            .map_or("none".to_owned(), |s| format!("signal {s}")),
                        |c| c.to_string()
                    ),
                    a.duration_ms
                )
                .as_bytes(),
            );
            output.extend_from_slice(&a.stdout);
            if !a.stdout.ends_with(b"\n") {
                output.push(b'\n');
            }
            attempts_json.push(serde_json::json!({ "reviewer": r.name, "attempt": a }));
        }
    }
    let output = scanner.redact_bytes(&dir.path(Material::Output), &output).0;
    let mut attempts_json = serde_json::Value::Array(attempts_json);
    scanner.redact_json(&dir.path(Material::Attempts), &mut attempts_json);
    let mut result_json = serde_json::json!({
        "v": 1,
        "round": plan.round,
        "verdict": combined.verdict,
        "outcome": combined.outcome,
        "findings": combined.findings,
        "fallback_used": combined.fallback_used,
        "coverage": plan.coverage,
        "parallelism": plan.parallelism,
    });
    if let ReviewDir::Pr { number, attempt } = dir {
        result_json["pr"] = number.into();
        result_json["attempt"] = attempt.into();
    }
    let probes: Vec<&ProbeReport> = plan.members.iter().map(|m| &m.report).collect();
    [
        (Material::Output, Content::Blob(output)),
        (Material::Attempts, Content::Blob(pretty(&attempts_json))),
        (Material::Result, Content::Blob(pretty(&result_json))),
        (Material::Probe, Content::Blob(pretty(&probes))),
    ]
}

/// The commit subject of the round's outcome.
fn subject(round: u32, results: &[MemberResult], combined: &Combined) -> String {
    let findings = combined.findings.len();
    match combined.verdict {
        Some(v) => format!(
            "review {}: {} ({}, {} finding{})",
            round,
            v.as_str(),
            results
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            findings,
            if findings == 1 { "" } else { "s" }
        ),
        None => format!("review {}: no verdict ({})", round, combined.outcome),
    }
}

/// The run's spend with the reviewers' sessions of this round measured in.
fn measure_reviewers(
    repo: &Repo,
    plan: &Plan,
    results: &[MemberResult],
    sources: &crate::cost::spend::Sources,
) -> RunSpend {
    let new: Vec<NewSession> = results
        .iter()
        .filter_map(|r| {
            r.session_id.as_ref().map(|id| NewSession {
                id: id.clone(),
                role: "reviewer",
                agent: r.name.clone(),
                reported_usd: review_attempt(r).cost_usd,
            })
        })
        .collect();
    let manifest = repo
        .load(&plan.run_id)
        .map(|s| s.manifest)
        .unwrap_or_else(|_| crate::model::Manifest::empty());
    crate::cost::spend::measure_including(&manifest, &new, sources)
}

/// What the text of every `[secret]` finding the scanner raises in a review says (and a
/// reviewer's own `[secret]` finding need not): how `push` tells the two apart.
pub(crate) const SCANNER_SECRET_TEXT: &str =
    ") is in the change; it was redacted from this review.";

/// The blocking finding for a secret in the change. Names kind, path and line, never the
/// secret, and says what to do.
pub(super) fn secret_finding(at: &SecretAt) -> Finding {
    let location = if at.line > 0 {
        format!("{}:{}", at.path, at.line)
    } else {
        at.path.clone()
    };
    Finding {
        n: 0,
        category: "secret".to_owned(),
        severity: Some(Severity::Critical),
        location,
        text: format!(
            "a secret ({}{SCANNER_SECRET_TEXT} Remove it from the change (and rotate it if it was ever shared); if it is a false positive, mark the line with git-pair:allow-secret",
            at.kind
        ),
    }
}

/// A reviewer's result with every secret in what it wrote replaced: its findings, error,
/// answer, raw stdout and stderr tail.
pub(super) fn redact_result(scanner: &Scanner, mut result: MemberResult) -> MemberResult {
    for f in &mut result.findings {
        f.text = scanner.redact("finding", &f.text).0;
        f.location = scanner.redact("finding", &f.location).0;
    }
    if let Some(error) = &result.error {
        result.error = Some(scanner.redact("error", error).0);
    }
    for a in &mut result.attempts {
        a.stdout = scanner.redact_bytes("stdout", &a.stdout).0;
        a.stderr_tail = scanner.redact_bytes("stderr", &a.stderr_tail).0;
    }
    result
}

fn pretty(value: &impl Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("JSON values serialize");
    bytes.push(b'\n');
    bytes
}
