//! Preparing a review round: the loop's rules, the work-tree snapshot, the packet (blind
//! paths refused before anything else, secrets redacted), the prompt's parts (redacted too),
//! and the bound reviewers. Stores nothing and spawns nothing but capability probes.

use gix::ObjectId;

use super::plan::{Member, Plan, PromptParts, Settings, StoredPrior};
use crate::diff::FileDiff;
use crate::model::{self, Body, Response, RunId, SecretAt, Verdict};
use crate::ops::Error;
use crate::packet;
use crate::review::prompt::{Mode, Templates};
use crate::review::{self, BoundRealization, ProbeRequest, Surfaces};
use crate::secrets::{Origin, Scanner};
use crate::store::{Material, Repo, RunState};

/// Prepares the round: checks the loop's rules, snapshots the work tree, builds the packet
/// (rejecting a blind path before anything else happens), binds the reviewers. Stores
/// nothing.
pub fn prepare(repo: &Repo, run_id: &RunId, settings: &Settings) -> Result<Plan, Error> {
    let state = repo.load(run_id)?;
    let m = &state.manifest;
    let reviewed_round = m
        .pending_review
        .as_ref()
        .map(|p| p.round)
        .or_else(|| m.current_coder_round())
        .unwrap_or(0);
    let mut history = History::read(repo, &state, reviewed_round)?;
    let records = history.tail.clone();
    let surfaces =
        Surfaces::load(settings.surface_file.as_deref()).map_err(crate::review::Error::from)?;
    let templates = Templates::with_override(settings.prompt_template.as_deref())?;
    let reask = surfaces.reask_instruction();

    crate::ops::status::refuse_if_reviewing(m)?;
    if let Some(pending) = &m.pending_review {
        return resume(
            repo,
            &state,
            &mut history,
            pending.round,
            &pending.dispatch,
            settings,
            &surfaces,
            templates,
            reask,
        );
    }
    model::check_review(m, settings.again)?;
    let round = m
        .current_coder_round()
        .expect("check_review needs a coder round");

    let snapshot = crate::worktree::snapshot::write(repo)?;
    let base = m
        .base
        .map(|commit| repo.commit_tree(commit.into()))
        .transpose()?;
    if base == Some(snapshot) && settings.plan.is_none() {
        return Err(model::Refusal::EmptyChange {
            run_id: run_id.to_string(),
            base: m.base.map(|b| b.to_string()).unwrap_or_default(),
        }
        .into());
    }
    let options = packet::Options {
        budget_bytes: settings.budget_bytes,
        exclude: settings.exclude.clone(),
    };
    let InPasses {
        built,
        file_sizes,
        secrets,
        passes,
    } = in_passes(repo, base, snapshot, &options, settings)?;
    let mode = match (&settings.plan, built.coverage.files_total) {
        (Some(_), 0) => Mode::Plan,
        (Some(_), _) => Mode::CodeVsPlan,
        (None, _) => Mode::Code,
    };

    // A scoped re-review: the open findings of the last review that asked for changes, the
    // coder's responses since, and what changed since the snapshot it saw.
    let last_review = records.iter().rev().find_map(|r| match &r.body {
        Body::Review(review) if review.verdict.is_some() => Some(review),
        _ => None,
    });
    let mut prior = Vec::new();
    let mut since = None;
    if let Some(last) = last_review.filter(|r| r.verdict == Some(Verdict::ChangesRequested)) {
        let responses: Vec<&Response> = coder_records_of_round(&records, round)
            .flat_map(|c| c.responses.iter())
            .collect();
        prior = last
            .findings
            .iter()
            .map(|f| StoredPrior {
                round: last.round,
                finding: f.clone(),
                response: responses
                    .iter()
                    .rev()
                    .find(|r| r.finding == f.n)
                    .map(|r| (*r).clone()),
            })
            .collect();
        // A review that recorded no snapshot has no inter-round diff to show.
        if let Some(last_snapshot) = last.snapshot {
            // Redacted too; what it finds is already reported from the whole packet (or
            // was removed since, which blocks nothing).
            let since_packet = build_packet(
                repo,
                Some(last_snapshot.into()),
                snapshot,
                &options,
                &settings.scanner,
            )?;
            since = Some(String::from_utf8_lossy(&since_packet.diff).into_owned());
        }
    }
    let summaries = coder_records_of_round(&records, round)
        .map(|c| c.summary.clone())
        .collect();
    let parts = redact_parts(
        &settings.scanner,
        PromptParts {
            v: 1,
            mode: mode.as_str().to_owned(),
            task: m.task.clone(),
            summaries,
            coverage: built.coverage.summary.clone(),
            since,
            prior,
            plan: settings.plan.clone(),
            file_sizes,
            pass_starts: pass_starts(&passes),
        },
    );
    let cache = review::ProbeCache::at(repo.pair_dir().join("probe-cache.json"));
    let (members, unbound) = bind_members(&surfaces, &mut history, settings, &cache, None, &[])?;
    check_choices(&members, settings)?;
    // Only a speed-up: a cache that cannot be written means probing again next time.
    let _ = cache.save();
    let (files, file_secrets) = builtin_change(repo, &members, base, snapshot, settings)?;
    let parallelism = parallelism(&members, settings);
    Ok(Plan {
        run_id: run_id.clone(),
        round,
        mode,
        snapshot,
        diff: passes.concat(),
        // Each pass of each earlier dispatch of the round had its own attempt numbers.
        attempt_base: attempts_so_far(&records, round) * passes.len().max(1) as u32,
        passes,
        files,
        file_secrets,
        coverage: built.coverage,
        parts,
        members,
        parallelism,
        carried: Vec::new(),
        resumes: None,
        unbound,
        secrets,
        templates,
        reask,
    })
}

/// The secrets a packet found that are in the change: on an added or context line, in a
/// header, or in a file too large to show. A secret only on a removed line is leaving the
/// code (it was redacted all the same) and blocks nothing. Each place once, in order.
fn in_the_change(found: &[crate::secrets::Finding]) -> Vec<SecretAt> {
    let mut out: Vec<SecretAt> = Vec::new();
    for f in found.iter().filter(|f| f.origin != Origin::Removed) {
        let at = SecretAt {
            kind: f.kind.clone(),
            path: f.path.clone(),
            line: f.line,
        };
        if !out.contains(&at) {
            out.push(at);
        }
    }
    out
}

/// The prompt's parts with every secret in them redacted: the task, the coder's summaries,
/// the plan, and the prior findings with the coder's responses (the inter-round diff was
/// redacted when its packet was built, and is not scanned twice).
fn redact_parts(scanner: &Scanner, mut parts: PromptParts) -> PromptParts {
    let since = parts.since.take();
    let mut value = serde_json::to_value(&parts).expect("prompt parts serialize");
    if scanner.redact_json("prompt", &mut value).is_empty() {
        parts.since = since;
        return parts;
    }
    let mut redacted: PromptParts =
        serde_json::from_value(value).expect("redaction keeps the prompt parts' shape");
    redacted.since = since;
    redacted
}

#[allow(clippy::too_many_arguments)]
fn resume(
    repo: &Repo,
    state: &RunState,
    history: &mut History<'_>,
    round: u32,
    dispatch_id: &str,
    settings: &Settings,
    surfaces: &Surfaces,
    templates: Templates,
    reask: String,
) -> Result<Plan, Error> {
    let missing = |what: &str| Error::MissingMaterial {
        run_id: state.run_id.to_string(),
        round,
        what: what.to_owned(),
    };
    let records = &history.tail.clone();
    let dispatch = records
        .iter()
        .find_map(|r| match &r.body {
            Body::ReviewDispatch(d) if r.id == dispatch_id => Some(d.clone()),
            _ => None,
        })
        .ok_or_else(|| missing("the dispatch record"))?;
    let diff = repo
        .round_file(state, round, Material::Diff)?
        .ok_or_else(|| missing(Material::Diff.what()))?;
    let parts: PromptParts = repo
        .round_file(state, round, Material::Context)?
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| missing(Material::Context.what()))?;
    let coverage: packet::Coverage = repo
        .round_file(state, round, Material::Coverage)?
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| missing(Material::Coverage.what()))?;
    let snapshot = dispatch.snapshot.into();
    let mode = match parts.mode.as_str() {
        "plan" => Mode::Plan,
        "code-vs-plan" => Mode::CodeVsPlan,
        _ => Mode::Code,
    };
    // Members that already finished under this dispatch (or an earlier interrupted one of the
    // round) keep their results and do not run again (SPEC §6.4).
    let carried = super::record::carried(
        repo,
        state,
        records,
        &interrupted_chain(records, round),
        &dispatch.reviewers,
    )?;
    let done: Vec<usize> = carried.iter().map(|c| c.slot).collect();
    let cache = review::ProbeCache::at(repo.pair_dir().join("probe-cache.json"));
    let (members, unbound) = bind_members(
        surfaces,
        history,
        settings,
        &cache,
        Some(&dispatch.reviewers),
        &done,
    )?;
    check_choices(&members, settings)?;
    let _ = cache.save();
    // The built-in reads the change itself: the run's base against the dispatched snapshot.
    let base = state
        .manifest
        .base
        .map(|commit| repo.commit_tree(commit.into()))
        .transpose()?;
    let (files, file_secrets) = builtin_change(repo, &members, base, snapshot, settings)?;
    let parallelism = parallelism(&members, settings);
    let diff = String::from_utf8_lossy(&diff).into_owned();
    let passes = Plan::split_passes(&diff, &parts.pass_starts);
    Ok(Plan {
        run_id: state.run_id.clone(),
        round,
        mode,
        snapshot,
        attempt_base: attempts_so_far(records, round) * passes.len().max(1) as u32,
        passes,
        diff,
        files,
        file_secrets,
        coverage,
        parts,
        members,
        parallelism,
        carried,
        resumes: Some(dispatch_id.to_owned()),
        unbound,
        secrets: dispatch.redacted.clone(),
        templates,
        reask,
    })
}

/// Where each pass after the first starts in the passes joined.
fn pass_starts(passes: &[String]) -> Vec<usize> {
    let mut at = 0;
    let mut starts = Vec::new();
    for pass in passes.iter().take(passes.len().saturating_sub(1)) {
        at += pass.len();
        starts.push(at);
    }
    starts
}

/// The change `old` → `new` as the reviewers get it: in passes (every file's content, or
/// listed as unreviewed), with each added or modified file's size in `new` (from the object
/// database's headers).
struct InPasses {
    built: packet::passes::Passes,
    /// Each added or modified file's size in `new`.
    file_sizes: Vec<(String, u64)>,
    /// The secrets found in the change (not on removed lines).
    secrets: Vec<SecretAt>,
    /// Each pass's text.
    passes: Vec<String>,
}

fn in_passes(
    repo: &Repo,
    old: Option<ObjectId>,
    new: ObjectId,
    options: &packet::Options,
    settings: &Settings,
) -> Result<InPasses, Error> {
    let mut differ = repo.review_differ(new)?;
    let changes = differ.changes(old, new)?;
    let file_sizes = file_sizes(repo, &changes);
    let built = packet::passes::build(
        &mut differ,
        &changes,
        options,
        settings.max_file_bytes,
        &settings.scanner,
    )?;
    let secrets = in_the_change(&built.secrets);
    let passes = built
        .passes
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    Ok(InPasses {
        built,
        file_sizes,
        secrets,
        passes,
    })
}

fn file_sizes(repo: &Repo, changes: &[crate::diff::Change]) -> Vec<(String, u64)> {
    changes
        .iter()
        .filter(|c| c.new_mode.is_some_and(|m| m & 0o170000 == 0o100000))
        .filter_map(|c| {
            let id = c.new_id?;
            // An object whose header cannot be read gets no size hint: the packet shows
            // its diff all the same.
            let size = repo.object_size(id).ok()?;
            Some((String::from_utf8_lossy(&c.new_path).into_owned(), size))
        })
        .collect()
}

/// The change as the built-in reviewer reads it ([`Plan::files`]): every file's diff from
/// `base` to `snapshot`, complete, and what the scanner finds in each; nothing when no member
/// is the built-in, or on a dry run (which runs no reviewer).
fn builtin_change(
    repo: &Repo,
    members: &[Member],
    base: Option<ObjectId>,
    snapshot: ObjectId,
    settings: &Settings,
) -> Result<(Vec<FileDiff>, Vec<crate::secrets::Finding>), Error> {
    if settings.dry_run || !members.iter().any(|m| m.bound.is_builtin()) {
        return Ok((Vec::new(), Vec::new()));
    }
    let files = repo.diff_trees(base, snapshot)?;
    let secrets = files
        .iter()
        .flat_map(|f| settings.scanner.scan_diff(&f.text))
        .collect();
    Ok((files, secrets))
}

fn build_packet(
    repo: &Repo,
    old: Option<ObjectId>,
    new: ObjectId,
    options: &packet::Options,
    scanner: &Scanner,
) -> Result<packet::Packet, Error> {
    Ok(build_packet_sized(repo, old, new, options, scanner)?.0)
}

/// [`build_packet`], and each added or modified file's size in `new` (from the object
/// database's headers: nothing is read whole).
fn build_packet_sized(
    repo: &Repo,
    old: Option<ObjectId>,
    new: ObjectId,
    options: &packet::Options,
    scanner: &Scanner,
) -> Result<(packet::Packet, Vec<(String, u64)>), Error> {
    let mut differ = repo.review_differ(new)?;
    let changes = differ.changes(old, new)?;
    let sizes = file_sizes(repo, &changes);
    packet::check_blindness(
        changes
            .iter()
            .flat_map(|c| [c.old_path.as_slice(), c.new_path.as_slice()])
            .filter(|p| !p.is_empty()),
        &options.exclude,
    )?;
    let packet = packet::build_redacted(&mut differ, &changes, options, scanner)?;
    Ok((packet, sizes))
}

fn coder_records_of_round(
    records: &[model::Record],
    round: u32,
) -> impl Iterator<Item = &model::Coder> {
    model::coder_rounds(records)
        .into_iter()
        .filter(move |(n, _, _)| *n == round)
        .map(|(_, _, coder)| coder)
}

/// Attempt numbers the round's earlier dispatches could use: each member of each dispatch
/// has its own block, so no two calls of a round share a marker.
fn attempts_so_far(records: &[model::Record], round: u32) -> u32 {
    records
        .iter()
        .filter_map(|r| match &r.body {
            Body::ReviewDispatch(d) if d.round == round => Some(d.reviewers.len().max(1) as u32),
            _ => None,
        })
        .sum::<u32>()
        * super::ATTEMPTS_PER_MEMBER
}

/// [`attempts_so_far`] for the PR's final reviews dispatched while `round` was the PR's.
fn pr_attempts_so_far(records: &[model::Record], round: u32) -> u32 {
    records
        .iter()
        .filter_map(|r| match &r.body {
            Body::PrDispatch(d) if d.dispatch.round == round => {
                Some(d.dispatch.reviewers.len().max(1) as u32)
            }
            _ => None,
        })
        .sum::<u32>()
        * super::ATTEMPTS_PER_MEMBER
}

/// The dispatches of `round` since its last recorded review: the interrupted chain a resumed
/// dispatch continues.
fn interrupted_chain(records: &[model::Record], round: u32) -> Vec<String> {
    let since = records
        .iter()
        .rposition(|r| matches!(&r.body, Body::Review(review) if review.round == round))
        .map_or(0, |at| at + 1);
    records[since..]
        .iter()
        .filter_map(|r| match &r.body {
            Body::ReviewDispatch(d) if d.round == round => Some(r.id.clone()),
            _ => None,
        })
        .collect()
}

/// Binds each reviewer of the round: the panel, or the command, or the run's reviewer.
/// `names` fixes the members (a resumed dispatch binds the ones it dispatched); the slots in
/// `done` finished already and are not bound.
fn bind_members(
    surfaces: &Surfaces,
    history: &mut History<'_>,
    settings: &Settings,
    cache: &review::ProbeCache,
    names: Option<&[String]>,
    done: &[usize],
) -> Result<(Vec<Member>, Vec<review::ProbeReport>), Error> {
    let wanted: Vec<String> = match names {
        Some(names) => names.to_vec(),
        None if !settings.panel.is_empty() => settings.panel.clone(),
        None if settings.command_reviews => vec!["command".to_owned()],
        None => vec![settings.reviewer.clone()],
    };
    let mut members = Vec::new();
    let mut unbound = Vec::new();
    for (slot, name) in wanted.into_iter().enumerate() {
        if done.contains(&slot) {
            continue;
        }
        let report = match review::probe(
            surfaces,
            &ProbeRequest {
                configured: &name,
                reviewer_command: settings.reviewer_command.as_deref(),
                path_env: settings.path_env.as_deref(),
                cache: Some(cache),
                acp_command: settings.acp_command.as_deref(),
                acp_handshake: false,
                fallback_order: Some(&settings.fallback_order),
            },
        ) {
            Ok(report) => report,
            Err(review::Error::NothingBinds { report, .. }) if settings.dry_run => {
                unbound.push(*report);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let bound = match report.clone().into_bound() {
            Ok(bound) => bound,
            Err(_) if settings.dry_run => {
                unbound.push(report);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let resume_session = if bound.supports_resume() {
            history.last_session_of(&bound.label())?
        } else {
            None
        };
        members.push(Member {
            slot,
            bound,
            report,
            resume_session,
        });
    }
    Ok((members, unbound))
}

/// Refuses a reviewer choice (model, effort) some member's realization does not take, or a
/// value outside its declared shape, by the member's name, before anything is stored.
pub(super) fn check_choices(members: &[Member], settings: &Settings) -> Result<(), Error> {
    for (choice, value) in settings.choices() {
        let key = if choice == "model" {
            "pair.reviewerModel"
        } else {
            "pair.reviewerEffort"
        };
        for m in members {
            m.bound
                .realization
                .check_choice(&m.bound.label(), choice, &value, &m.bound.capabilities)
                .map_err(|reason| Error::ReviewerChoice { key, reason })?;
        }
    }
    Ok(())
}

/// The records a review round reads, newest last: the round's own (its coder records,
/// dispatches, members' parts and reviews) back to and including the last review with a
/// verdict of an earlier round, which is all the round's rules and prompt need; older records
/// are read only on demand (a reviewer's last session, when the tail does not name it). A run
/// of a thousand rounds costs what its last round holds, not the run.
struct History<'r> {
    /// In stored order.
    tail: Vec<model::Record>,
    /// The records before the tail, newest first, read as asked for.
    older: Option<crate::store::NewestFirst<'r>>,
    /// Those read from `older` so far, newest first.
    read: Vec<model::Record>,
}

impl<'r> History<'r> {
    /// No history: reviewers bound afresh, nothing to resume.
    fn none() -> History<'r> {
        History {
            tail: Vec::new(),
            older: None,
            read: Vec::new(),
        }
    }

    fn read(repo: &'r Repo, state: &RunState, round: u32) -> Result<History<'r>, Error> {
        let mut newest = repo.records_newest_first(state)?;
        let mut tail = Vec::new();
        for record in newest.by_ref() {
            let record = record?;
            let earlier_verdict = matches!(&record.body,
                Body::Review(r) if r.verdict.is_some() && r.round < round);
            // Records from before coder records named their round count rounds by folding
            // from the start: such a run is read whole.
            if matches!(&record.body, Body::Coder(c) if c.round.is_none()) {
                return Ok(History {
                    tail: repo.records(state)?,
                    older: None,
                    read: Vec::new(),
                });
            }
            tail.push(record);
            if earlier_verdict {
                break;
            }
        }
        tail.reverse();
        Ok(History {
            tail,
            older: Some(newest),
            read: Vec::new(),
        })
    }

    /// The session of `reviewer`'s last answer with a verdict, to resume it.
    fn last_session_of(&mut self, reviewer: &str) -> Result<Option<String>, Error> {
        let session = |r: &model::Record| match &r.body {
            Body::Review(review) => review
                .reviewers
                .iter()
                .find(|a| a.tool == reviewer && a.verdict.is_some())
                .and_then(|a| a.session_id.clone()),
            _ => None,
        };
        if let Some(found) = self.tail.iter().rev().chain(&self.read).find_map(session) {
            return Ok(Some(found));
        }
        let Some(older) = self.older.as_mut() else {
            return Ok(None);
        };
        for record in older.by_ref() {
            let record = record?;
            let found = session(&record);
            self.read.push(record);
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }
}

fn parallelism(members: &[Member], settings: &Settings) -> review::Parallelism {
    let bound: Vec<&BoundRealization> = members.iter().map(|m| &m.bound).collect();
    review::panel_parallelism(&bound, settings.max_parallel)
}

/// Prepares the PR's final review (`review --pr N`): the change `old` → `new` (the PR's merge
/// base and head trees, as the remote has them), its packet redacted, the prompt's parts,
/// and fresh reviewers (no session resumed: the PR is read as a newcomer reads it). Checks
/// no loop rule (the caller did) and stores nothing.
pub fn prepare_change(
    repo: &Repo,
    run_id: &RunId,
    round: u32,
    old: ObjectId,
    new: ObjectId,
    settings: &Settings,
) -> Result<Plan, Error> {
    let state = repo.load(run_id)?;
    let records = repo.records(&state)?;
    let surfaces =
        Surfaces::load(settings.surface_file.as_deref()).map_err(crate::review::Error::from)?;
    let templates = Templates::with_override(settings.prompt_template.as_deref())?;
    let reask = surfaces.reask_instruction();
    if old == new {
        return Err(model::Refusal::EmptyChange {
            run_id: run_id.to_string(),
            base: old.to_string(),
        }
        .into());
    }
    let options = packet::Options {
        budget_bytes: settings.budget_bytes,
        exclude: settings.exclude.clone(),
    };
    let InPasses {
        built,
        file_sizes,
        secrets,
        passes,
    } = in_passes(repo, Some(old), new, &options, settings)?;
    let summaries = model::coder_rounds(&records)
        .into_iter()
        .map(|(_, _, coder)| coder.summary.clone())
        .collect();
    let parts = redact_parts(
        &settings.scanner,
        PromptParts {
            v: 1,
            mode: Mode::Code.as_str().to_owned(),
            task: state.manifest.task.clone(),
            summaries,
            coverage: built.coverage.summary.clone(),
            since: None,
            prior: Vec::new(),
            plan: None,
            file_sizes,
            pass_starts: pass_starts(&passes),
        },
    );
    let cache = review::ProbeCache::at(repo.pair_dir().join("probe-cache.json"));
    // No history: nothing is resumed, the PR is read as a newcomer reads it.
    let (members, unbound) =
        bind_members(&surfaces, &mut History::none(), settings, &cache, None, &[])?;
    let _ = cache.save();
    check_choices(&members, settings)?;
    let (files, file_secrets) = builtin_change(repo, &members, Some(old), new, settings)?;
    let parallelism = parallelism(&members, settings);
    Ok(Plan {
        run_id: run_id.clone(),
        round,
        mode: Mode::Code,
        snapshot: new,
        diff: passes.concat(),
        // Past every attempt number the round's own reviews could use, and past those of
        // the PR's earlier final reviews: no marker repeats.
        attempt_base: (attempts_so_far(&records, round) + pr_attempts_so_far(&records, round))
            * passes.len().max(1) as u32
            + 1000,
        passes,
        files,
        file_secrets,
        coverage: built.coverage,
        parts,
        members,
        parallelism,
        carried: Vec::new(),
        resumes: None,
        unbound,
        secrets,
        templates,
        reask,
    })
}

/// Prepares a review of the plan in `settings` alone, with no run and no repository: the
/// plan (redacted), the bound reviewers (probed without a cache). Stores nothing.
pub fn prepare_plan_alone(run_id: &RunId, settings: &Settings) -> Result<Plan, Error> {
    let surfaces =
        Surfaces::load(settings.surface_file.as_deref()).map_err(crate::review::Error::from)?;
    let templates = Templates::with_override(settings.prompt_template.as_deref())?;
    let reask = surfaces.reask_instruction();
    let parts = redact_parts(
        &settings.scanner,
        PromptParts {
            v: 1,
            mode: Mode::Plan.as_str().to_owned(),
            task: String::new(),
            summaries: Vec::new(),
            coverage: None,
            since: None,
            prior: Vec::new(),
            plan: settings.plan.clone(),
            file_sizes: Vec::new(),
            pass_starts: Vec::new(),
        },
    );
    let cache = review::ProbeCache::in_memory();
    let (members, unbound) =
        bind_members(&surfaces, &mut History::none(), settings, &cache, None, &[])?;
    check_choices(&members, settings)?;
    let parallelism = parallelism(&members, settings);
    Ok(Plan {
        run_id: run_id.clone(),
        round: 1,
        mode: Mode::Plan,
        snapshot: ObjectId::empty_tree(gix::hash::Kind::Sha1),
        diff: String::new(),
        attempt_base: 0,
        passes: Vec::new(),
        files: Vec::new(),
        file_secrets: Vec::new(),
        coverage: packet::Coverage {
            v: 1,
            files_total: 0,
            full: Default::default(),
            clipped: Default::default(),
            names_only: Default::default(),
            not_included: Default::default(),
            binary: 0,
            bytes_included: 0,
            bytes_total: Some(0),
            budget_bytes: settings.budget_bytes as u64,
            summary: None,
            passes: 1,
            unreviewed: Default::default(),
        },
        parts,
        members,
        parallelism,
        carried: Vec::new(),
        resumes: None,
        unbound,
        secrets: Vec::new(),
        templates,
        reask,
    })
}
