//! Sharing run state between machines (SPEC §8): `pull` fetches a remote's `refs/pair/*` and
//! `refs/notes/pair` into a staging namespace (`refs/pair-remotes/<remote>/…`) and merges
//! them into the local refs; `push` publishes local refs with a remote compare-and-swap,
//! pulling and retrying when someone pushed first.
//!
//! Dropped runs travel as tombstones (`refs/pair/dropped/<run-id>`): a pull never creates a
//! tombstoned run and removes a local copy of one; a push publishes tombstones and deletes
//! the runs they name on the remote (each deletion a compare-and-swap), and never publishes
//! a tombstoned run. Before anything is sent, the caller's guard sees every ref the push
//! would update (it scans them for secrets and may refuse: then nothing is published).
//!
//! The transport is the `git` CLI (credentials, ssh and helpers work as for any push), and
//! it runs through [`crate::process::git`], the one spawn path. The user's
//! `remote.*` configuration is never changed. Merging is the store's job ([`crate::store`]);
//! nothing here prints.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use gix::ObjectId;

use crate::model::RunId;
use crate::store::{self, Counts, Integration, Repo, dropped_ref, notes};

/// The remote used when none is named.
pub const DEFAULT_REMOTE: &str = "origin";
pub use crate::store::STAGING_ROOT;
/// From how many loose staging refs on a pull packs them.
const PACK_STAGING_FROM: usize = 32;
/// How many times a push is attempted (each retry pulls and merges first).
const MAX_PUSH_ATTEMPTS: u32 = 5;

/// What went wrong sharing state.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no such remote '{remote}'")]
    NoSuchRemote { remote: String },
    #[error("'{remote}' cannot be used as a remote: {detail}")]
    BadRemote { remote: String, detail: String },
    #[error("cannot fetch from '{remote}': {detail}")]
    Fetch { remote: String, detail: String },
    #[error("cannot push to '{remote}': {detail}")]
    Push { remote: String, detail: String },
    #[error(
        "push to '{remote}' was rejected {attempts} times (the remote kept changing): {detail}"
    )]
    PushRejected {
        remote: String,
        attempts: u32,
        detail: String,
    },
    #[error("cannot run git: {source}")]
    Spawn {
        #[source]
        source: crate::process::ToolError,
    },
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A remote as named on the command line, and where its refs are staged locally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// The name, URL or path given (passed to git as is).
    pub name: String,
    /// `refs/pair-remotes/<component>/`.
    pub staging: String,
}

impl Remote {
    /// Resolves `given`: a configured remote keeps its name as the staging component; a URL
    /// or path (anything git accepts) is staged under `url-<hash>`. A bare word that is
    /// neither is refused here, before git runs.
    pub fn resolve(repo: &Repo, given: &str) -> Result<Remote, Error> {
        if given.is_empty() || given.starts_with('-') || given.chars().any(char::is_control) {
            return Err(Error::BadRemote {
                remote: given.escape_debug().to_string(),
                detail: "not a remote name, URL or path".into(),
            });
        }
        let configured = !repo
            .config_values(&format!("remote.{given}.url"))
            .is_empty();
        let component = if configured && is_safe_ref_component(given) {
            given.to_owned()
        } else if configured || looks_like_location(given) {
            let digest = sha1_smol::Sha1::from(given.as_bytes()).digest().to_string();
            format!("url-{}", &digest[..12])
        } else {
            return Err(Error::NoSuchRemote {
                remote: given.to_owned(),
            });
        };
        Ok(Remote {
            name: given.to_owned(),
            staging: format!("{STAGING_ROOT}{component}/"),
        })
    }

    fn staged_runs_prefix(&self) -> String {
        format!("{}pair/runs/", self.staging)
    }

    fn staged_notes(&self) -> String {
        format!("{}notes/pair", self.staging)
    }

    fn staged_tombstones_prefix(&self) -> String {
        format!("{}pair/dropped/", self.staging)
    }

    fn fetch_refspecs(&self) -> [String; 2] {
        [
            format!("+refs/pair/*:{}pair/*", self.staging),
            // A glob, because fetching a named ref the remote lacks is an error.
            format!("+{}*:{}notes/pair*", notes::NOTES_REF, self.staging),
        ]
    }
}

/// What a pull did.
#[derive(Debug, Clone, Default)]
pub struct PullReport {
    /// How many runs the remote has (as fetched).
    pub remote_runs: usize,
    pub runs: Counts,
    /// What happened to `refs/notes/pair`; `None` when the remote has no notes.
    pub notes: Option<Integration>,
    /// Runs whose local ref moved.
    pub changed: Vec<RunId>,
    /// Tombstones learnt from the remote (runs dropped elsewhere).
    pub tombstones: usize,
    /// Local runs removed because the remote has their tombstone.
    pub removed: Vec<RunId>,
    /// Local runs with a tombstone that were kept: they hold records the dropper never saw
    /// (they are not published either; `git pair drop` removes them here).
    pub kept_dropped: Vec<RunId>,
    /// Local runs with a tombstone that were kept because they are this clone's active work
    /// (the caller's `keep` said so): a fetched tombstone never deletes them; `git pair drop
    /// --force` does. Not published either.
    pub kept_active: Vec<RunId>,
    /// Note lines of dropped runs removed locally.
    pub removed_note_lines: usize,
}

/// Which local runs a fetched tombstone must not remove (this clone's active work): asked
/// only about runs a tombstone would remove. When unsure, the answer is `true`.
pub type Keep<'a> = &'a dyn Fn(&RunId) -> bool;

impl PullReport {
    /// Folds in the pull of a later push attempt: changes add up; what stayed as it was is
    /// reported as of the latest attempt.
    fn absorb(&mut self, later: PullReport) {
        self.remote_runs = later.remote_runs;
        self.runs = Counts {
            created: self.runs.created + later.runs.created,
            fast_forwarded: self.runs.fast_forwarded + later.runs.fast_forwarded,
            merged: self.runs.merged + later.runs.merged,
            unchanged: later.runs.unchanged,
            local_ahead: later.runs.local_ahead,
        };
        // Across attempts, report the most telling thing that happened to the notes.
        let rank = |n: Option<Integration>| match n {
            None => 0,
            Some(Integration::Unchanged) => 1,
            Some(Integration::LocalAhead) => 2,
            Some(Integration::Created) => 3,
            Some(Integration::FastForwarded) => 4,
            Some(Integration::Merged) => 5,
        };
        if rank(later.notes) > rank(self.notes) {
            self.notes = later.notes;
        }
        for run in later.changed {
            if !self.changed.contains(&run) {
                self.changed.push(run);
            }
        }
        self.tombstones += later.tombstones;
        self.removed.extend(later.removed);
        self.kept_dropped.extend(later.kept_dropped);
        for run in later.kept_active {
            if !self.kept_active.contains(&run) {
                self.kept_active.push(run);
            }
        }
        self.removed_note_lines += later.removed_note_lines;
    }
}

/// What a push did.
#[derive(Debug, Clone, Default)]
pub struct PushReport {
    /// What merging the remote's state in (before and between attempts) did locally.
    pub pulled: PullReport,
    /// Run refs created or moved on the remote.
    pub pushed_runs: usize,
    /// Whether `refs/notes/pair` moved on the remote.
    pub pushed_notes: bool,
    /// Tombstones published.
    pub pushed_tombstones: usize,
    /// Runs deleted on the remote because they are tombstoned here.
    pub removed_runs: Vec<RunId>,
    /// Push attempts made (1 when nobody pushed first).
    pub attempts: u32,
}

/// Which refs a push publishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every run, tombstone and the notes.
    Everything,
    /// Only what dropping this run takes: its tombstone, its deletion, and the notes.
    Dropping(RunId),
}

/// One ref a push would update, as the guard sees it before anything is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    /// A run the remote lacks (`expected` None) or holds an ancestor of.
    Run {
        run_id: RunId,
        expected: Option<ObjectId>,
        new: ObjectId,
    },
    /// `refs/notes/pair`.
    Notes {
        expected: Option<ObjectId>,
        new: ObjectId,
    },
    /// A tombstone the remote lacks, pointing at this blob.
    Tombstone { run_id: RunId, blob: ObjectId },
    /// A run the remote holds that is tombstoned here: deleted there.
    Deletion { run_id: RunId },
}

/// What the guard decided about a push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guarded {
    /// Send it.
    Proceed,
    /// The guard changed local state (it recorded something): plan the push again.
    Replan,
}
/// Fetches the remote's state into the staging namespace, then merges it into the local
/// refs. A remote without any git pair refs is not an error: nothing happens.
pub fn pull(repo: &Repo, remote: &Remote, keep: Keep<'_>) -> Result<PullReport, Error> {
    fetch(repo, remote)?;
    let report = integrate(repo, remote, keep)?;
    pack_staging(repo, remote)?;
    remember_merged(repo, remote)?;
    Ok(report)
}

/// Where the fingerprint of `remote`'s staging copy, as it was when last merged in whole (or
/// last pushed from), is kept: a view, like the summaries (a missing or stale one only costs
/// a fetch).
fn merged_marker(repo: &Repo, remote: &Remote) -> std::path::PathBuf {
    let digest = sha1_smol::Sha1::from(remote.staging.as_bytes())
        .digest()
        .to_string();
    repo.pair_dir()
        .join("cache")
        .join(format!("merged-staging-{}", &digest[..12]))
}

/// The staging copy of `remote`, sorted by name.
fn staged_listing(repo: &Repo, remote: &Remote) -> Result<Listing, Error> {
    let mut staged = repo.refs_under(&remote.staging)?;
    staged.sort_unstable();
    Ok(staged)
}

/// A digest of a sorted ref listing.
fn fingerprint(listing: &[(String, ObjectId)]) -> String {
    let mut hasher = sha1_smol::Sha1::new();
    let mut hex = [0u8; 40];
    for (name, id) in listing {
        hasher.update(id.hex_to_buf(&mut hex[..]).as_bytes());
        hasher.update(b" ");
        hasher.update(name.as_bytes());
        hasher.update(b"\n");
    }
    hasher.digest().to_string()
}

/// Notes that every staged ref of `remote` is merged into the local refs (after a whole
/// pull), or was pushed from them: a push finding the remote still holding exactly this
/// need not fetch and merge it again.
fn remember_merged(repo: &Repo, remote: &Remote) -> Result<(), Error> {
    let print = fingerprint(&staged_listing(repo, remote)?);
    let path = merged_marker(repo, remote);
    let tmp = repo.pair_dir().join("tmp");
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // A view: failing to write it costs a fetch next time, nothing else.
    let _ = crate::util::fs::write_atomically_via(&tmp, &path, print.as_bytes());
    Ok(())
}

/// The push plan made from the staging copy as it is, when `remote` holds exactly the git
/// pair refs staged for it and that staging copy is the one last merged in whole (or pushed
/// from): then a pull would fetch nothing and merge nothing. The remote is asked for its refs
/// (`git ls-remote`, as cheap as the advertisement any push reads) on another thread while
/// the plan is made here. Any doubt (no marker, another copy, a remote that does not answer)
/// gives `None`: the caller pulls first.
fn plan_if_unchanged(
    repo: &Repo,
    remote: &Remote,
    scope: &Scope,
) -> Result<Option<PushPlan>, Error> {
    let Ok(marker) = std::fs::read_to_string(merged_marker(repo, remote)) else {
        return Ok(None);
    };
    let dir = run_dir(repo);
    std::thread::scope(|threads| {
        // Asked from another thread (a `Repo` stays on its own): by directory.
        let asked = threads.spawn(|| ls_remote(dir, remote));
        let planned = staged_plan(repo, remote, scope, marker.trim());
        let asked = asked
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let Some((staged, plan)) = planned? else {
            return Ok(None);
        };
        let Ok(out) = asked else {
            return Ok(None);
        };
        if !out.success {
            return Ok(None);
        }
        let mut listed = staged_names(remote, &out.stdout);
        listed.sort_unstable();
        Ok((listed == staged).then_some(plan))
    })
}

/// A ref listing, sorted by name.
type Listing = Vec<(String, ObjectId)>;

/// The staging copy of `remote` and the push plan made from it, when the copy is the one
/// `marker` fingerprints.
fn staged_plan(
    repo: &Repo,
    remote: &Remote,
    scope: &Scope,
    marker: &str,
) -> Result<Option<(Listing, PushPlan)>, Error> {
    let staged = staged_listing(repo, remote)?;
    if fingerprint(&staged) != marker {
        return Ok(None);
    }
    Ok(Some((staged, push_set(repo, remote, scope)?)))
}

/// The refs of `git ls-remote` output that a pull stages, under their staging names (as the
/// fetch refspecs map them; peeled lines left out).
fn staged_names(remote: &Remote, stdout: &str) -> Listing {
    stdout
        .lines()
        .filter_map(|line| {
            let (id, name) = line.split_once('\t')?;
            let name = name.trim_end();
            if name.ends_with("^{}") {
                return None;
            }
            let staged = if let Some(rest) = name.strip_prefix("refs/pair/") {
                format!("{}pair/{rest}", remote.staging)
            } else if let Some(rest) = name.strip_prefix(notes::NOTES_REF) {
                format!("{}notes/pair{rest}", remote.staging)
            } else {
                return None;
            };
            Some((staged, ObjectId::from_hex(id.trim().as_bytes()).ok()?))
        })
        .collect()
}

/// Keeps the staging copy in `packed-refs`: git fetch writes one loose file per changed
/// ref, and reading a thousand of them on every pull would cost more than the fetch.
fn pack_staging(repo: &Repo, remote: &Remote) -> Result<(), Error> {
    repo.pack_loose_refs(&remote.staging, PACK_STAGING_FROM)?;
    Ok(())
}

/// Publishes local runs, tombstones and notes that the remote lacks or holds older versions
/// of (within `scope`), never forcing. Each attempt first pulls (fetch and merge), so the
/// local refs contain the remote's; then `guard` sees what would be sent and may refuse
/// (its error is returned and nothing is published); then every ref is pushed with
/// `--force-with-lease` against the value just fetched (empty: the remote must not have it)
/// in one atomic push. When someone pushed in between, the push is rejected as a whole and
/// the next attempt pulls again, up to a bound.
pub fn push<E: From<Error>>(
    repo: &Repo,
    remote: &Remote,
    scope: &Scope,
    keep: Keep<'_>,
    guard: &mut dyn FnMut(&[Pending]) -> Result<Guarded, E>,
) -> Result<PushReport, E> {
    let mut report = PushReport::default();
    let mut atomic = true;
    let mut last_rejection = String::new();
    for attempt in 1..=MAX_PUSH_ATTEMPTS {
        report.attempts = attempt;
        // The first attempt fetches and merges only when the remote changed since this clone
        // last merged it in or pushed to it: with nothing new there, a pull would do nothing.
        let unchanged = match attempt {
            1 => plan_if_unchanged(repo, remote, scope)?,
            _ => None,
        };
        let mut plan = match unchanged {
            Some(plan) => plan,
            None => {
                let pulled = pull(repo, remote, keep).map_err(|err| match err {
                    // The user asked to push: say so when the remote cannot be reached.
                    Error::Fetch { remote, detail } => Error::Push { remote, detail },
                    other => other,
                })?;
                report.pulled.absorb(pulled);
                push_set(repo, remote, scope)?
            }
        };
        let mut replans = 0;
        loop {
            if plan.updates.is_empty() {
                return Ok(report);
            }
            match guard(&plan.pending())? {
                Guarded::Proceed => break,
                Guarded::Replan if replans < 2 => {
                    replans += 1;
                    plan = push_set(repo, remote, scope)?;
                }
                Guarded::Replan => {
                    return Err(Error::Push {
                        remote: remote.name.clone(),
                        detail: "the local state kept changing while the push was checked".into(),
                    }
                    .into());
                }
            }
        }
        let updates = &plan.updates;
        let out = git(repo, &push_args(remote, &plan, atomic))?;
        let statuses = parse_push_porcelain(&out.stdout);
        if out.success {
            record_pushed(repo, updates, &statuses)?;
            // Everything staged now is what was merged before or pushed from here.
            remember_merged(repo, remote)?;
            report.pushed_runs = updates
                .iter()
                .filter(|u| matches!(u.target, Target::Run(_)))
                .count();
            report.pushed_notes = updates.iter().any(|u| u.target == Target::Notes);
            report.pushed_tombstones = updates
                .iter()
                .filter(|u| matches!(u.target, Target::Tombstone(_)))
                .count();
            report.removed_runs = updates
                .iter()
                .filter_map(|u| match &u.target {
                    Target::Deletion(run_id) => Some(run_id.clone()),
                    _ => None,
                })
                .collect();
            return Ok(report);
        }
        if atomic && out.stderr.contains("does not support --atomic") {
            // Each ref still carries its own lease, so a non-atomic push is as safe.
            atomic = false;
            continue;
        }
        match classify_rejection(&statuses) {
            Rejection::LostRace(detail) => {
                // Refs that did land (non-atomic push) are recorded; the rest is retried.
                record_pushed(repo, updates, &statuses)?;
                last_rejection = detail;
            }
            Rejection::Refused(detail) => {
                return Err(Error::Push {
                    remote: remote.name.clone(),
                    detail,
                }
                .into());
            }
            Rejection::NoRefStatus => {
                return Err(Error::Push {
                    remote: remote.name.clone(),
                    detail: git_error_line(&out.stderr, out.code),
                }
                .into());
            }
        }
    }
    Err(Error::PushRejected {
        remote: remote.name.clone(),
        attempts: MAX_PUSH_ATTEMPTS,
        detail: last_rejection,
    }
    .into())
}

/// What dropping runs locally removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    /// The refs deleted (the runs' refs and every staged copy of them).
    pub refs: Vec<String>,
    /// Note lines of the runs removed from `refs/notes/pair`.
    pub note_lines: usize,
}

/// Removes runs from this repository for good: their refs, every remote's staged copy of
/// them, this clone's ownership refs of them (all with their reflogs), and their lines in
/// `refs/notes/pair`. Their tombstones are
/// the caller's business; objects only these refs held become garbage for `git gc`.
pub fn remove_locally(repo: &Repo, run_ids: &[RunId]) -> Result<Removed, Error> {
    if run_ids.is_empty() {
        return Ok(Removed::default());
    }
    let ids: BTreeSet<String> = run_ids.iter().map(ToString::to_string).collect();
    let staged: Vec<String> = repo
        .refs_under(STAGING_ROOT)?
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| {
            name.rsplit_once("/pair/runs/")
                .is_some_and(|(_, id)| ids.contains(id))
        })
        .collect();
    let mut names: Vec<String> = run_ids.iter().map(store::run_ref).collect();
    names.extend(staged);
    // This clone's claim on the run and the ref keeping its base go with it.
    names.extend(run_ids.iter().map(store::owned_ref));
    names.extend(run_ids.iter().map(store::base_ref));
    names.extend(run_ids.iter().map(store::scrubbed_ref));
    let mut refs = Vec::new();
    // A run appended to meanwhile is deleted all the same, on the next try.
    for attempt in 0.. {
        match repo.delete_refs(&names) {
            Ok(deleted) => {
                refs = deleted;
                break;
            }
            Err(store::Error::LostRace { .. }) if attempt < 5 => continue,
            Err(err) => return Err(err.into()),
        }
    }
    let note_lines = notes::remove_run_lines(repo, &ids)?;
    Ok(Removed { refs, note_lines })
}

/// Why a push failed, from its ref lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Someone else moved a ref first (a stale lease checked by git, or the remote's own
    /// compare-and-swap failing); pulling and pushing again will do.
    LostRace(String),
    /// The remote refused for another reason (a hook, a permission, a bad name).
    Refused(String),
    /// No ref line was printed: the transport itself failed.
    NoRefStatus,
}

/// Sorts a failed push's ref lines into a lost race (retry) or a refusal (give up).
pub fn classify_rejection(statuses: &[RefStatus]) -> Rejection {
    let rejected: Vec<&RefStatus> = statuses.iter().filter(|s| s.flag == '!').collect();
    let lost_race = |s: &RefStatus| {
        s.summary.starts_with("[rejected]")
            || [
                "(atomic transaction failed)",
                "(failed to update ref)",
                "(failed to lock)",
                "(incorrect old value provided)",
            ]
            .iter()
            .any(|reason| s.summary.starts_with("[remote rejected]") && s.summary.ends_with(reason))
    };
    let describe = |s: &RefStatus| format!("{} {}", s.to, s.summary);
    if let Some(refused) = rejected.iter().find(|s| !lost_race(s)) {
        return Rejection::Refused(describe(refused));
    }
    match rejected.first() {
        Some(first) => Rejection::LostRace(describe(first)),
        None => Rejection::NoRefStatus,
    }
}

/// Merges what is staged for `remote` into the local refs (no network): tombstones first
/// (learnt ones created, local copies of tombstoned runs removed), then the runs no tombstone
/// names, then the notes (without lines of dropped runs).
fn integrate(repo: &Repo, remote: &Remote, keep: Keep<'_>) -> Result<PullReport, Error> {
    let local_tombstones = repo.tombstones()?;
    let learnt: Vec<(RunId, ObjectId)> = staged_tombstones(repo, remote)?
        .into_iter()
        .filter(|(run_id, _)| !local_tombstones.contains_key(run_id))
        .collect();
    let tombstones = repo.create_tombstones(&learnt)?;
    let dropped: BTreeSet<RunId> = local_tombstones
        .into_keys()
        .chain(learnt.into_iter().map(|(run_id, _)| run_id))
        .collect();
    let all_tombstones = repo.tombstones()?;
    let mut kept = Vec::new();
    let mut kept_active = Vec::new();
    let mut removed: Vec<RunId> = Vec::new();
    if !dropped.is_empty() {
        for (run_id, local_tip) in repo.run_tips()? {
            if !dropped.contains(&run_id) {
                continue;
            }
            let seen = all_tombstones
                .get(&run_id)
                .map(|blob| dropped_tips(repo, *blob))
                .transpose()?
                .unwrap_or_default();
            // A local copy goes only when the dropper saw all of it: a tombstone never
            // deletes records made here that it does not name.
            if !seen.contains(&local_tip) {
                kept.push(run_id);
            } else if keep(&run_id) {
                // This clone's active work goes only on purpose (`drop --force`), as a local
                // drop of it would.
                kept_active.push(run_id);
            } else {
                removed.push(run_id);
            }
        }
    }
    let removed_refs = remove_locally(repo, &removed)?;

    // A run ref the remote points at something other than a commit (a blob, a tree) is not
    // a run: it is never created or merged here.
    let staged: Vec<(RunId, ObjectId)> = staged_runs(repo, remote)?
        .into_iter()
        .filter(|(run_id, tip)| !dropped.contains(run_id) && repo.has_commit(*tip))
        .collect();
    let runs = repo.integrate_runs(&staged)?;
    if runs.counts.created > 0 {
        // A run that arrived may have been started before runs had owners.
        repo.forget_unclaimed_runs();
    }
    let notes = match staged_notes_tip(repo, remote)? {
        Some(tip) => Some(notes::integrate(repo, tip)?),
        None => None,
    };
    // Notes merge by line union: a line of a dropped run that came back with the remote's
    // notes goes again.
    let mut removed_note_lines = removed_refs.note_lines;
    let notes_moved = matches!(
        notes,
        Some(Integration::Created | Integration::FastForwarded | Integration::Merged)
    );
    if !dropped.is_empty() && (notes_moved || tombstones > 0) {
        let ids: BTreeSet<String> = dropped.iter().map(ToString::to_string).collect();
        removed_note_lines += notes::remove_run_lines(repo, &ids)?;
    }
    Ok(PullReport {
        remote_runs: staged.len(),
        runs: runs.counts,
        notes,
        changed: runs.changed,
        tombstones,
        removed,
        kept_dropped: kept,
        kept_active,
        removed_note_lines,
    })
}

/// The run tips a tombstone says its dropper saw (`tip <oid>` lines of its text); one over
/// 1 MiB is not git pair's and, unread, names none (so it removes nothing).
fn dropped_tips(repo: &Repo, blob: ObjectId) -> Result<Vec<ObjectId>, Error> {
    let Ok(text) = repo.blob_within(blob, 1 << 20)? else {
        return Ok(Vec::new());
    };
    Ok(String::from_utf8_lossy(&text)
        .lines()
        .filter_map(|l| l.strip_prefix("tip "))
        // A tombstone is shared text: a `tip` line that names no object vouches for no tip,
        // so it protects nothing from removal (the run's own ref still decides).
        .filter_map(|hex| ObjectId::from_hex(hex.trim().as_bytes()).ok())
        .collect())
}

fn staged_runs(repo: &Repo, remote: &Remote) -> Result<BTreeMap<RunId, ObjectId>, Error> {
    let prefix = remote.staged_runs_prefix();
    Ok(repo
        .refs_under(&prefix)?
        .into_iter()
        .filter_map(|(name, id)| Some((crate::store::ref_run_id(&name, &prefix)?, id)))
        .collect())
}

fn staged_notes_tip(repo: &Repo, remote: &Remote) -> Result<Option<ObjectId>, Error> {
    Ok(repo.ref_target(&remote.staged_notes())?)
}

fn staged_tombstones(repo: &Repo, remote: &Remote) -> Result<BTreeMap<RunId, ObjectId>, Error> {
    let prefix = remote.staged_tombstones_prefix();
    Ok(repo
        .refs_under(&prefix)?
        .into_iter()
        .filter_map(|(name, id)| Some((crate::store::ref_run_id(&name, &prefix)?, id)))
        .collect())
}

/// What one pushed ref is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Run(RunId),
    Notes,
    Tombstone(RunId),
    /// The run's ref is deleted on the remote.
    Deletion(RunId),
}

/// One ref to publish: the remote's value we expect (None: must not exist) and ours (for a
/// deletion, none).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Update {
    target: Target,
    remote_ref: String,
    staged_ref: String,
    expected: Option<ObjectId>,
    new: Option<ObjectId>,
}

/// What to push: the refs to update, and local run refs to hold back.
#[derive(Debug, Default)]
struct PushPlan {
    updates: Vec<Update>,
    /// Run refs that do not contain what the remote holds (a merge that has not happened):
    /// pushing them would rewrite the remote's history.
    held_back: Vec<String>,
}

impl PushPlan {
    fn pending(&self) -> Vec<Pending> {
        self.updates
            .iter()
            .filter_map(|u| {
                Some(match &u.target {
                    Target::Run(run_id) => Pending::Run {
                        run_id: run_id.clone(),
                        expected: u.expected,
                        new: u.new?,
                    },
                    Target::Notes => Pending::Notes {
                        expected: u.expected,
                        new: u.new?,
                    },
                    Target::Tombstone(run_id) => Pending::Tombstone {
                        run_id: run_id.clone(),
                        blob: u.new?,
                    },
                    Target::Deletion(run_id) => Pending::Deletion {
                        run_id: run_id.clone(),
                    },
                })
            })
            .collect()
    }
}

/// Local refs the remote (as staged) lacks or holds an ancestor of, within `scope`; the
/// remote's runs that are tombstoned here, to delete there.
fn push_set(repo: &Repo, remote: &Remote, scope: &Scope) -> Result<PushPlan, Error> {
    let staged = staged_runs(repo, remote)?;
    let tombstones = repo.tombstones()?;
    let staged_tombstones = staged_tombstones(repo, remote)?;
    let in_scope = |run_id: &RunId| match scope {
        Scope::Everything => true,
        Scope::Dropping(dropping) => dropping == run_id,
    };
    let mut plan = PushPlan::default();
    let updates = &mut plan.updates;
    for (run_id, blob) in &tombstones {
        if !in_scope(run_id) {
            continue;
        }
        if !staged_tombstones.contains_key(run_id) {
            updates.push(Update {
                target: Target::Tombstone(run_id.clone()),
                remote_ref: dropped_ref(run_id),
                staged_ref: format!("{}{run_id}", remote.staged_tombstones_prefix()),
                expected: None,
                new: Some(*blob),
            });
        }
        if let Some(theirs) = staged.get(run_id) {
            updates.push(Update {
                target: Target::Deletion(run_id.clone()),
                remote_ref: store::run_ref(run_id),
                staged_ref: format!("{}{run_id}", remote.staged_runs_prefix()),
                expected: Some(*theirs),
                new: None,
            });
        }
    }
    let runs = match scope {
        Scope::Everything => repo.run_tips()?,
        Scope::Dropping(_) => BTreeMap::new(),
    };
    for (run_id, tip) in runs {
        if tombstones.contains_key(&run_id) {
            continue;
        }
        let expected = staged.get(&run_id).copied();
        let publish = match expected {
            None => true,
            Some(theirs) if theirs == tip => false,
            Some(theirs) if repo.run_contains(&run_id, tip, theirs)? => true,
            Some(_) => {
                plan.held_back.push(store::run_ref(&run_id));
                false
            }
        };
        if publish {
            updates.push(Update {
                remote_ref: store::run_ref(&run_id),
                staged_ref: format!("{}{}", remote.staged_runs_prefix(), run_id),
                target: Target::Run(run_id),
                expected,
                new: Some(tip),
            });
        }
    }
    if let Some(tip) = notes::tip(repo)? {
        let expected = staged_notes_tip(repo, remote)?;
        let publish = match expected {
            None => true,
            Some(theirs) if theirs == tip => false,
            Some(theirs) => notes::contains(repo, tip, theirs)?,
        };
        if publish {
            updates.push(Update {
                target: Target::Notes,
                remote_ref: notes::NOTES_REF.into(),
                staged_ref: remote.staged_notes(),
                expected,
                new: Some(tip),
            });
        }
    }
    Ok(plan)
}

/// After a push, the staged copies follow what the remote now holds, so the next lease
/// expects it. One pass over git's ref lines (a set of the refs that landed), then one over
/// the updates: matching each update against every line took most of a 100,000-run push.
fn record_pushed(repo: &Repo, updates: &[Update], statuses: &[RefStatus]) -> Result<(), Error> {
    let landed: HashSet<&str> = statuses
        .iter()
        .filter(|s| matches!(s.flag, ' ' | '*' | '+' | '=' | '-'))
        .map(|s| s.to.as_str())
        .collect();
    let mut set: Vec<(String, ObjectId)> = Vec::new();
    let mut deleted: Vec<String> = Vec::new();
    for update in updates {
        if !landed.contains(update.remote_ref.as_str()) {
            continue;
        }
        match update.new {
            Some(new) => set.push((update.staged_ref.clone(), new)),
            None => deleted.push(update.staged_ref.clone()),
        }
    }
    repo.overwrite_refs(&set)?;
    repo.delete_refs(&deleted)?;
    Ok(())
}

fn fetch(repo: &Repo, remote: &Remote) -> Result<(), Error> {
    // Prunes only what the refspecs map to: the staging namespace.
    git_fetch(repo, remote, &["--prune"], remote.fetch_refspecs())
}

/// Fetches each commit of `commits` from `remote` into its local ref (`(id, ref)`, a ref
/// under `refs/pair-local/`): a pull request's head and base by their ids, as the remote
/// has them. Nothing else is fetched or updated.
pub fn fetch_commits(
    repo: &Repo,
    remote: &str,
    commits: &[(ObjectId, String)],
) -> Result<(), Error> {
    let remote = Remote::resolve(repo, remote)?;
    let mut refspecs = Vec::with_capacity(commits.len());
    for (id, dest) in commits {
        if !dest.starts_with("refs/pair-local/") {
            return Err(Error::Fetch {
                remote: remote.name.clone(),
                detail: format!("refusing to fetch into {dest}"),
            });
        }
        // Already here and kept by its ref: nothing to fetch, and no ref to lock (a second
        // review of the same PR starting at once meets no lock held by this one).
        let kept = repo.has_commit(*id)
            && repo
                .gix()
                .try_find_reference(dest.as_str())
                .ok()
                .flatten()
                .and_then(|mut r| r.peel_to_id().ok())
                .is_some_and(|at| at.detach() == *id);
        if !kept {
            refspecs.push(format!("+{id}:{dest}"));
        }
    }
    if refspecs.is_empty() {
        return Ok(());
    }
    git_fetch(repo, &remote, &[], refspecs)
}

/// `git fetch` of exactly `refspecs` from `remote`: no tags, no FETCH_HEAD, no submodules,
/// no opportunistic updates of the user's remote-tracking refs (`--refmap=`).
fn git_fetch(
    repo: &Repo,
    remote: &Remote,
    extra: &[&str],
    refspecs: impl IntoIterator<Item = String>,
) -> Result<(), Error> {
    let mut args: Vec<String> = ["fetch", "--no-tags"].map(String::from).to_vec();
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args.extend(
        [
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            "--refmap=",
            "--quiet",
            "--",
        ]
        .map(String::from),
    );
    args.push(remote.name.clone());
    args.extend(refspecs);
    let out = git(repo, &args)?;
    if out.success {
        Ok(())
    } else {
        Err(Error::Fetch {
            remote: remote.name.clone(),
            detail: git_error_line(&out.stderr, out.code),
        })
    }
}

/// The commits `remote` advertises (every ref outside `refs/pair/` and `refs/notes/`, and
/// the commits annotated tags point at): what a push can count on the remote having. Run
/// state is left out (it holds no project history), which at worst makes a scan cover more.
pub fn advertised(repo: &Repo, remote: &Remote) -> Result<Vec<ObjectId>, Error> {
    let out = ls_remote(run_dir(repo), remote)?;
    if !out.success {
        return Err(Error::Push {
            remote: remote.name.clone(),
            detail: git_error_line(&out.stderr, out.code),
        });
    }
    Ok(parse_ls_remote(&out.stdout))
}

/// `git ls-remote` of `remote`: every ref it advertises.
fn ls_remote(dir: &std::path::Path, remote: &Remote) -> Result<GitOutput, Error> {
    let args: Vec<String> = ["ls-remote", "--", remote.name.as_str()]
        .map(String::from)
        .to_vec();
    git_in(dir, &args)
}

/// The ids of `git ls-remote` lines naming refs outside git pair's namespaces.
fn parse_ls_remote(stdout: &str) -> Vec<ObjectId> {
    stdout
        .lines()
        .filter_map(|line| {
            let (id, name) = line.split_once('\t')?;
            let name = name.trim();
            if name.starts_with("refs/pair/")
                || name.starts_with("refs/notes/")
                || name.starts_with(STAGING_ROOT)
            {
                return None;
            }
            ObjectId::from_hex(id.trim().as_bytes()).ok()
        })
        .collect()
}

/// `git push` arguments for `plan`. Run refs go as one glob refspec (git matches a thousand
/// explicit refspecs in quadratic time: 6 s instead of 2 s for 1,000 runs), with negative
/// refspecs for the runs held back; refs already equal on the remote are reported as up to
/// date and not sent.
fn push_args(remote: &Remote, plan: &PushPlan, atomic: bool) -> Vec<String> {
    let updates = &plan.updates;
    let mut args: Vec<String> = vec![
        "push".into(),
        "--porcelain".into(),
        "--no-follow-tags".into(),
        "--recurse-submodules=no".into(),
    ];
    if atomic {
        args.push("--atomic".into());
    }
    for update in updates {
        // A run the remote does not have is created without a lease: the push never forces,
        // so git creates it only where it is still absent, or fast-forwards one that appeared
        // meanwhile from a commit our run contains; anything else is rejected (a lost race,
        // retried). A lease there would add nothing but cost: git matches every lease against
        // every ref, which took 12 of the 13 s of a first push of 10,000 runs.
        if update.expected.is_none() && matches!(update.target, Target::Run(_)) {
            continue;
        }
        let expected = update.expected.map(|id| id.to_string()).unwrap_or_default();
        args.push(format!(
            "--force-with-lease={}:{expected}",
            update.remote_ref
        ));
    }
    args.push("--".into());
    args.push(remote.name.clone());
    // No `+`: a push never forces; the leases make each update a compare-and-swap, and
    // git's own check of the advertised value each creation.
    if updates.iter().any(|u| matches!(u.target, Target::Run(_))) {
        args.push(format!("{0}*:{0}*", store::RUNS_PREFIX));
        for held in &plan.held_back {
            args.push(format!("^{held}"));
        }
    }
    for update in updates {
        match &update.target {
            Target::Tombstone(_) => args.push(format!("{0}:{0}", update.remote_ref)),
            Target::Deletion(_) => args.push(format!(":{}", update.remote_ref)),
            Target::Run(_) | Target::Notes => {}
        }
    }
    if updates.iter().any(|u| u.target == Target::Notes) {
        args.push(format!("{0}:{0}", notes::NOTES_REF));
    }
    args
}

/// What one git invocation left behind. A non-zero exit is data, not an error.
struct GitOutput {
    success: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `git args` for `repo` through the one spawn module (bounded, `LC_ALL=C`, null stdin).
fn git(repo: &Repo, args: &[String]) -> Result<GitOutput, Error> {
    git_in(run_dir(repo), args)
}

/// Where git runs for `repo`: its work tree, else (bare) its git directory.
fn run_dir(repo: &Repo) -> &std::path::Path {
    repo.work_dir().unwrap_or_else(|_| repo.common_dir())
}

/// [`git`] run in `dir`.
fn git_in(dir: &std::path::Path, args: &[String]) -> Result<GitOutput, Error> {
    let out = crate::process::git(dir, args, crate::process::GIT_TRANSPORT_TIMEOUT)
        .map_err(|source| Error::Spawn { source })?;
    Ok(GitOutput {
        success: out.status.is_some_and(|s| s.success()),
        code: out.status.and_then(|s| s.code),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr_tail).into_owned(),
    })
}

/// One ref line of `git push --porcelain`: `<flag>\t<from>:<to>\t<summary>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefStatus {
    /// ` ` fast-forward, `+` forced, `-` deleted, `*` new, `!` rejected, `=` up to date.
    pub flag: char,
    pub from: String,
    pub to: String,
    /// e.g. `[new reference]`, `[rejected] (stale info)`, `[remote rejected] (hook declined)`.
    pub summary: String,
}

/// Parses the ref lines of `git push --porcelain` output; other lines are skipped.
pub fn parse_push_porcelain(stdout: &str) -> Vec<RefStatus> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let flag_field = fields.next()?;
            let refs = fields.next()?;
            let summary = fields.next()?;
            let mut chars = flag_field.chars();
            let flag = chars.next()?;
            if chars.next().is_some() || !" +-*!=".contains(flag) {
                return None;
            }
            let (from, to) = refs.split_once(':')?;
            Some(RefStatus {
                flag,
                from: from.to_owned(),
                to: to.to_owned(),
                summary: summary.trim().to_owned(),
            })
        })
        .collect()
}

/// The line of git's stderr that says what failed: the first `fatal:` or `error:` line
/// (prefix removed), else the last non-empty line.
pub fn git_error_line(stderr: &str, code: Option<i32>) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find_map(|l| {
            l.strip_prefix("fatal: ")
                .or_else(|| l.strip_prefix("error: "))
        })
        .or_else(|| lines.last().copied())
        .map(str::to_owned)
        .unwrap_or_else(|| match code {
            Some(code) => format!("git exited with status {code}"),
            None => "git was killed by a signal".into(),
        })
}

/// Whether `s` is usable as one or more ref name components as is.
fn is_safe_ref_component(s: &str) -> bool {
    !s.is_empty()
        && s.split('/').all(|part| {
            !part.is_empty()
                && !part.starts_with('.')
                && !part.ends_with(".lock")
                && !part.contains("..")
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        })
}

/// Whether `s` reads as a URL or a path rather than a remote name (as git decides too).
fn looks_like_location(s: &str) -> bool {
    s.contains('/') || s.contains(':') || std::path::Path::new(s).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ls_remote_lines_map_to_their_staging_names_as_the_fetch_refspecs_do() {
        let remote = Remote {
            name: "origin".into(),
            staging: format!("{STAGING_ROOT}origin/"),
        };
        let a = "1".repeat(40);
        let b = "2".repeat(40);
        let stdout = format!(
            "{a}\tHEAD\n{a}\trefs/heads/main\n{a}\trefs/pair/runs/20260101-000000-abcdef\n\
             {b}\trefs/pair/dropped/20260101-000001-abcdef\n{b}\trefs/notes/pair\n\
             {a}\trefs/notes/pairs-other\n{a}\trefs/pair/tags/t\n{b}\trefs/pair/tags/t^{{}}\n\
             {a}\trefs/notes/commits\nnot a line\n"
        );
        let id = |hex: &str| ObjectId::from_hex(hex.as_bytes()).expect("hex");
        let staged = |name: &str| format!("{STAGING_ROOT}origin/{name}");
        assert_eq!(
            staged_names(&remote, &stdout),
            vec![
                (staged("pair/runs/20260101-000000-abcdef"), id(&a)),
                (staged("pair/dropped/20260101-000001-abcdef"), id(&b)),
                (staged("notes/pair"), id(&b)),
                (staged("notes/pairs-other"), id(&a)),
                (staged("pair/tags/t"), id(&a)),
            ]
        );
        // The fingerprint follows every name and id.
        let listing = staged_names(&remote, &stdout);
        let mut moved = listing.clone();
        moved[2].1 = id(&a);
        assert_ne!(fingerprint(&listing), fingerprint(&moved));
        assert_ne!(fingerprint(&listing), fingerprint(&listing[1..]));
        assert_eq!(fingerprint(&listing), fingerprint(&listing.clone()));
    }

    #[test]
    fn porcelain_ref_lines_parse_and_other_lines_are_skipped() {
        let out = "To /tmp/remote.git\n\
                   *\t1111:refs/pair/runs/a\t[new reference]\n\
                   \x20\t2222:refs/pair/runs/b\t3333..2222\n\
                   !\t4444:refs/pair/runs/c\t[rejected] (stale info)\n\
                   !\t5555:refs/notes/pair\t[remote rejected] (hook declined)\n\
                   =\trefs/notes/pair:refs/notes/pair\t[up to date]\n\
                   Done\n";
        let parsed = parse_push_porcelain(out);
        let flags: Vec<char> = parsed.iter().map(|s| s.flag).collect();
        assert_eq!(flags, ['*', ' ', '!', '!', '=']);
        assert_eq!(parsed[1].to, "refs/pair/runs/b");
        assert_eq!(parsed[1].from, "2222");
        assert_eq!(parsed[2].summary, "[rejected] (stale info)");
        assert_eq!(parsed[3].summary, "[remote rejected] (hook declined)");
        assert!(parse_push_porcelain("Done\nTo x\n").is_empty());
    }

    fn status(flag: char, summary: &str) -> RefStatus {
        RefStatus {
            flag,
            from: "1111".into(),
            to: "refs/pair/runs/a".into(),
            summary: summary.into(),
        }
    }

    #[test]
    fn rejections_are_races_or_refusals() {
        let race =
            |statuses: &[RefStatus]| matches!(classify_rejection(statuses), Rejection::LostRace(_));
        // Checked against real git 2.47 output: a stale lease, a remote that moved between
        // its advertisement and the update (atomic and not), a plain non-fast-forward.
        assert!(race(&[status('!', "[rejected] (stale info)")]));
        assert!(race(&[
            status('!', "[remote rejected] (atomic transaction failed)"),
            status('!', "[remote rejected] (atomic transaction failed)"),
        ]));
        assert!(race(&[
            status(' ', "1111..2222"),
            status('!', "[remote rejected] (failed to update ref)"),
        ]));
        assert!(race(&[status('!', "[rejected] (fetch first)")]));
        assert!(race(&[status('!', "[rejected] (atomic push failed)")]));
        // A hook or a policy on the remote is a refusal, even beside a race.
        assert_eq!(
            classify_rejection(&[
                status('!', "[rejected] (atomic push failed)"),
                status('!', "[remote rejected] (pre-receive hook declined)"),
            ]),
            Rejection::Refused(
                "refs/pair/runs/a [remote rejected] (pre-receive hook declined)".into()
            )
        );
        assert!(matches!(
            classify_rejection(&[status('!', "[remote rejected] (funny refname)")]),
            Rejection::Refused(_)
        ));
        assert_eq!(classify_rejection(&[]), Rejection::NoRefStatus);
        assert_eq!(
            classify_rejection(&[status('*', "[new reference]")]),
            Rejection::NoRefStatus
        );
    }

    #[test]
    fn ls_remote_lines_outside_git_pairs_namespaces_count() {
        let out = "1111111111111111111111111111111111111111\tHEAD\n\
                   2222222222222222222222222222222222222222\trefs/heads/main\n\
                   3333333333333333333333333333333333333333\trefs/pair/runs/20261129-231500-a1b2c3\n\
                   4444444444444444444444444444444444444444\trefs/notes/pair\n\
                   5555555555555555555555555555555555555555\trefs/tags/v1^{}\n\
                   not-an-id\trefs/heads/x\n";
        let ids: Vec<String> = parse_ls_remote(out)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            ids,
            [
                "1111111111111111111111111111111111111111",
                "2222222222222222222222222222222222222222",
                "5555555555555555555555555555555555555555"
            ]
        );
    }

    #[test]
    fn git_error_line_picks_the_fatal_line() {
        let cases = [
            (
                "fatal: '/x' does not appear to be a git repository\nfatal: Could not read from remote repository.\n",
                "'/x' does not appear to be a git repository",
            ),
            (
                "error: failed to push some refs to 'x'\n",
                "failed to push some refs to 'x'",
            ),
            ("warning: a\nsomething odd\n", "something odd"),
            ("", "git exited with status 128"),
        ];
        for (stderr, want) in cases {
            assert_eq!(git_error_line(stderr, Some(128)), want);
        }
    }

    #[test]
    fn ref_components_and_locations() {
        for ok in ["origin", "team/a", "up-stream_2", "a.b"] {
            assert!(is_safe_ref_component(ok), "{ok}");
        }
        for bad in [
            "", ".hidden", "a..b", "x.lock", "a//b", "sp ace", "a:b", "*",
        ] {
            assert!(!is_safe_ref_component(bad), "{bad}");
        }
        for loc in [
            "../remote.git",
            "/srv/r.git",
            "file:///srv/r.git",
            "host:r.git",
        ] {
            assert!(looks_like_location(loc), "{loc}");
        }
        assert!(!looks_like_location("surely-not-a-file-here-0f3a"));
    }

    #[test]
    fn push_args_lease_every_ref_and_never_force() {
        let remote = Remote {
            name: "origin".into(),
            staging: "refs/pair-remotes/origin/".into(),
        };
        let a = ObjectId::from_hex(b"1111111111111111111111111111111111111111").expect("hex");
        let b = ObjectId::from_hex(b"2222222222222222222222222222222222222222").expect("hex");
        let run = RunId::parse("20261129-231500-a1b2c3").expect("id");
        let plan = PushPlan {
            updates: vec![
                Update {
                    target: Target::Run(run.clone()),
                    remote_ref: store::run_ref(&run),
                    staged_ref: String::new(),
                    expected: Some(a),
                    new: Some(b),
                },
                Update {
                    target: Target::Notes,
                    remote_ref: notes::NOTES_REF.into(),
                    staged_ref: String::new(),
                    expected: None,
                    new: Some(a),
                },
            ],
            held_back: vec!["refs/pair/runs/20261129-231500-ffffff".into()],
        };
        let args = push_args(&remote, &plan, true);
        assert!(args.contains(&"--atomic".to_string()));
        assert!(args.contains(&format!(
            "--force-with-lease=refs/pair/runs/20261129-231500-a1b2c3:{a}"
        )));
        assert!(args.contains(&"--force-with-lease=refs/notes/pair:".to_string()));
        assert!(!args.iter().any(|a| a.starts_with('+') || a == "--force"));
        let dashdash = args.iter().position(|a| a == "--").expect("--");
        assert_eq!(
            args[dashdash + 1..],
            [
                "origin",
                "refs/pair/runs/*:refs/pair/runs/*",
                "^refs/pair/runs/20261129-231500-ffffff",
                "refs/notes/pair:refs/notes/pair",
            ]
        );
        assert!(!push_args(&remote, &plan, false).contains(&"--atomic".to_string()));
        // A run the remote lacks is created without a lease (git refuses a non-fast-forward).
        let new_run = RunId::parse("20261129-231500-eeeeee").expect("id");
        let creation = PushPlan {
            updates: vec![Update {
                target: Target::Run(new_run.clone()),
                remote_ref: store::run_ref(&new_run),
                staged_ref: String::new(),
                expected: None,
                new: Some(b),
            }],
            held_back: vec![],
        };
        let args = push_args(&remote, &creation, true);
        assert!(
            !args.iter().any(|a| a.starts_with("--force-with-lease")),
            "{args:?}"
        );
        assert!(args.contains(&"refs/pair/runs/*:refs/pair/runs/*".to_string()));
        // Only notes to push: no run refspec at all.
        let notes_only = PushPlan {
            updates: plan.updates[1..].to_vec(),
            held_back: vec![],
        };
        let args = push_args(&remote, &notes_only, true);
        assert_eq!(
            args.last().expect("refspec"),
            "refs/notes/pair:refs/notes/pair"
        );
        assert!(!args.iter().any(|a| a.contains("refs/pair/runs/*")));
        // Dropping a run: its tombstone must not exist there, its ref is deleted with a lease.
        let gone = RunId::parse("20261129-231500-dddddd").expect("id");
        let drop_plan = PushPlan {
            updates: vec![
                Update {
                    target: Target::Tombstone(gone.clone()),
                    remote_ref: dropped_ref(&gone),
                    staged_ref: String::new(),
                    expected: None,
                    new: Some(b),
                },
                Update {
                    target: Target::Deletion(gone.clone()),
                    remote_ref: store::run_ref(&gone),
                    staged_ref: String::new(),
                    expected: Some(a),
                    new: None,
                },
            ],
            held_back: vec![],
        };
        let args = push_args(&remote, &drop_plan, true);
        assert!(
            args.contains(
                &"--force-with-lease=refs/pair/dropped/20261129-231500-dddddd:".to_string()
            )
        );
        assert!(args.contains(&format!(
            "--force-with-lease=refs/pair/runs/20261129-231500-dddddd:{a}"
        )));
        let dashdash = args.iter().position(|a| a == "--").expect("--");
        assert_eq!(
            args[dashdash + 1..],
            [
                "origin",
                "refs/pair/dropped/20261129-231500-dddddd:refs/pair/dropped/20261129-231500-dddddd",
                ":refs/pair/runs/20261129-231500-dddddd",
            ]
        );
    }
}
