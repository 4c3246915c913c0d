//! `verify`, the CI check: proves that every commit of a range holds work a reviewer
//! approved. The note on a commit only says where to look; approval is always confirmed
//! against the run's own records (an APPROVED review whose snapshot is the commit's tree).
//! Commits without a confirmed note are looked up in an index of every run's approved
//! snapshots, built once, on first need, from the runs' review and finish records alone.
//! An approval covers a commit only when the run is consistent (SPEC §9: its stored answers
//! read APPROVED, its dispatch and attempts exist, no blocking finding, the stored snapshot is
//! the tree approved, its base leads to the commit) and the commit's own change is part of
//! what the reviewer saw. A run that cannot be read is reported and skipped, never fatal.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Mutex;

use gix::ObjectId;

use super::{Context, Error};
use crate::model::report::verify::{CommitLine, MalformedRun, Verified};
use crate::model::{Approval, Body, RunId};
use crate::store::notes::{self, NoteLine};
use crate::store::{CodeCommit, PackedRefs, RecordFiles, Repo};

/// How many differing paths a commit's entry lists at most.
pub const MAX_PATHS: usize = 20;

/// What `verify` was asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `A..B`, or one revision (that commit alone); `None`: the default range.
    pub range: Option<String>,
    /// A commit finished with `--force` passes.
    pub allow_forced: bool,
}

/// Where a commit stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// A run's records approve the commit's tree (or the commit adds nothing of its own).
    Approved,
    /// The commit's tree is what a run finished with `--force` on, unapproved.
    Forced,
    /// A run is linked to the commit, but the tree it approved is not the commit's tree.
    ChangedAfterReview,
    /// No run approved the commit's tree.
    Unreviewed,
}

impl Status {
    /// The status as `--json` and the tables spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Approved => "approved",
            Status::Forced => "forced",
            Status::ChangedAfterReview => "changed-after-review",
            Status::Unreviewed => "unreviewed",
        }
    }

    /// Whether a commit with this status passes (a forced one only with `--allow-forced`).
    pub fn passes(self, allow_forced: bool) -> bool {
        match self {
            Status::Approved => true,
            Status::Forced => allow_forced,
            Status::ChangedAfterReview | Status::Unreviewed => false,
        }
    }
}

/// How an approval was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The commit's `refs/notes/pair` note named the run, and its records confirm it.
    Note,
    /// The commit's `Pair-Run:` trailer named the run, and its records confirm it.
    Trailer,
    /// No confirmed note: a run's approved snapshot is the commit's tree.
    Tree,
    /// The commit adds no content of its own: each of its files is the file of one of its
    /// parents (an empty commit, or a merge without conflict edits).
    Parents,
}

impl Via {
    /// The spelling in `--json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Note => "note",
            Via::Trailer => "trailer",
            Via::Tree => "tree",
            Via::Parents => "parents",
        }
    }
}

/// The review a commit's status refers to.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRef {
    pub run_id: RunId,
    pub round: u32,
    pub reviewer: String,
    /// The run's measured spend; `None` when never measured.
    pub cost_usd: Option<f64>,
}

/// One commit's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitCheck {
    pub commit: ObjectId,
    pub subject: String,
    pub status: Status,
    pub via: Option<Via>,
    pub review: Option<ReviewRef>,
    /// Changed after review: the paths that differ from the approved tree. Unreviewed: the
    /// commit's own changes (for a merge, the paths no parent holds as merged). At most
    /// [`MAX_PATHS`].
    pub paths: Vec<String>,
    /// How many paths there were in all.
    pub paths_total: usize,
    /// One line saying why, for humans.
    pub detail: String,
}

/// The verdict on a range.
#[derive(Debug, Clone)]
pub struct Report {
    /// The range as verified (the default spelled out).
    pub range: String,
    pub allow_forced: bool,
    /// Oldest first.
    pub commits: Vec<CommitCheck>,
    /// Runs that could not be read, with why: skipped (they approve nothing).
    pub malformed: BTreeMap<RunId, String>,
}

impl Report {
    /// Whether `check` passes.
    pub fn passes(&self, check: &CommitCheck) -> bool {
        check.status.passes(self.allow_forced)
    }

    /// How many commits fail.
    pub fn failing(&self) -> usize {
        self.commits.iter().filter(|c| !self.passes(c)).count()
    }

    /// Whether every commit passes.
    pub fn ok(&self) -> bool {
        self.failing() == 0
    }

    /// The verdict as `verify` reports it (its `--json` contract), with why it fails.
    pub fn into_verified(self) -> Verified {
        let failing = self.failing();
        let n = self.commits.len();
        let error = (failing > 0).then(|| {
            format!(
                "{failing} of {n} commit{} in {} not approved by a review",
                if n == 1 { "" } else { "s" },
                self.range
            )
        });
        let allow_forced = self.allow_forced;
        Verified {
            ok: failing == 0,
            allow_forced,
            commits: self
                .commits
                .into_iter()
                .map(|c| {
                    let paths_omitted = c.paths_total - c.paths.len();
                    let (run, round, reviewer, cost_usd) = match c.review {
                        Some(r) => (Some(r.run_id), Some(r.round), Some(r.reviewer), r.cost_usd),
                        None => (None, None, None, None),
                    };
                    CommitLine {
                        commit: c.commit.to_string(),
                        status: c.status.as_str(),
                        passes: c.status.passes(allow_forced),
                        run,
                        round,
                        reviewer,
                        cost_usd,
                        paths: c.paths,
                        paths_omitted,
                        via: c.via.map(Via::as_str),
                        subject: c.subject,
                        detail: c.detail,
                    }
                })
                .collect(),
            malformed_runs: self
                .malformed
                .into_iter()
                .map(|(run, reason)| MalformedRun { run, reason })
                .collect(),
            range: self.range,
            error,
        }
    }
}

/// Verifies every commit of the range (see [`Request`]): `verify`'s report.
pub fn verify(ctx: &Context, request: &Request) -> Result<Verified, Error> {
    Ok(check_range(ctx, request)?.into_verified())
}

/// Every commit of the range, checked.
fn check_range(ctx: &Context, request: &Request) -> Result<Report, Error> {
    // The gate comes back to the same objects (a commit read by the walk and again for its
    // tree, a run's tree for its records and again for its review material): keep them.
    let repo = &ctx.repo.with_object_cache(OBJECT_CACHE_BYTES);
    let range = resolve(repo, request.range.as_deref())?;
    // What each commit's note and `Pair-Run:` trailers name is read on reader threads while
    // the walk goes on.
    let seen = Mutex::new(HashSet::new());
    let notes = notes::Reader::open(repo)?;
    // Without notes, every commit is looked up among every run's approvals: the runs are
    // listed first and their tips handed to the readers, which read them while the walk goes
    // on (without a commit-graph the walk reads every commit on this thread).
    let list_runs = !notes.exists();
    let ((commits, listed), read) = repo.map_while_producing(
        |feed| {
            let listed = list_runs.then(|| repo.run_tips().ok()).flatten();
            // Newest first, as the index reads them (see `Verifier::runs_with_snapshot`).
            for (run_id, tip) in listed.iter().flatten().rev() {
                feed(ToRead::Run(run_id.clone(), *tip));
            }
            let commits = match range.from_to {
                // Through the commit-graph the walk reads no commit: the readers read each
                // one with what it names, and hand it back.
                FromTo::Range { from, to } => {
                    let graph = repo.walk_range_graph(Some(from), to, &mut |id| {
                        feed(ToRead::Commit(Walked::Found(id)))
                    });
                    graph.and_then(|walked| match walked {
                        true => Ok(None),
                        false => repo
                            .commits_in_range_with(Some(from), to, &mut |c| {
                                feed(ToRead::Commit(Walked::Read(c.id, c.pair_runs.clone())))
                            })
                            .map(Some),
                    })
                }
                FromTo::One(commit) => repo.code_commit(commit).map(|commit| {
                    feed(ToRead::Commit(Walked::Read(
                        commit.id,
                        commit.pair_runs.clone(),
                    )));
                    Some(vec![commit])
                }),
            };
            (commits, listed)
        },
        |repo| (notes::Reader::open(repo).ok(), repo.packed_refs().ok()),
        |repo, (notes, packed), item| match item {
            ToRead::Commit(walked) => {
                Read::Commit(read_linked(repo, notes, packed.as_ref(), &seen, walked))
            }
            ToRead::Run(run_id, tip) => Read::Run(run_id, carried(repo, tip).map(Box::new)),
        },
    );
    let mut linked = Vec::with_capacity(read.len());
    let mut tips_read = Vec::new();
    for read in read {
        match read {
            Read::Commit(read) => linked.push(read),
            Read::Run(run_id, carried) => tips_read.push((run_id, carried)),
        }
    }
    let commits = match (commits?, &range.from_to) {
        (Some(commits), _) => commits,
        (None, from_to) => {
            let mut read = HashMap::with_capacity(linked.len());
            for linked in &mut linked {
                if let Some(commit) = linked.read.take() {
                    let commit = commit?;
                    read.insert(commit.id, commit);
                }
            }
            let tip = match from_to {
                FromTo::Range { to, .. } | FromTo::One(to) => *to,
            };
            crate::store::parents_first(tip, read)
        }
    };
    let mut report = Report {
        range: range.spelled,
        allow_forced: request.allow_forced,
        commits: Vec::with_capacity(commits.len()),
        malformed: BTreeMap::new(),
    };
    if commits.is_empty() {
        return Ok(report);
    }
    // Most commits name a run of their own: room for one each.
    let n = commits.len();
    let mut verifier = Verifier {
        repo,
        tips: HashMap::with_capacity(n),
        all_runs: None,
        notes,
        runs: HashMap::with_capacity(n),
        spent: HashMap::with_capacity(n),
        index: None,
        links: None,
        range_trees: commits.iter().map(|c| c.tree).collect(),
        commit_trees: commits.iter().map(|c| (c.id, c.tree)).collect(),
        noted: HashMap::with_capacity(n),
        prefetched: HashMap::with_capacity(n),
        branches: range.branches,
        facts: HashMap::with_capacity(n),
        consistency: HashMap::with_capacity(n),
        malformed: BTreeMap::new(),
    };
    verifier.take_linked(linked);
    if let Some(tips) = listed.filter(|tips| !tips.is_empty()) {
        verifier.all_runs = Some(tips.keys().cloned().collect());
        verifier
            .tips
            .extend(tips.into_iter().map(|(id, tip)| (id, Some(tip))));
    }
    verifier.take_carried(tips_read);
    let last = commits.len() - 1;
    for (i, commit) in commits.iter().enumerate() {
        report.commits.push(verifier.check(commit, i == last)?);
    }
    report.malformed = verifier.malformed;
    Ok(report)
}

enum FromTo {
    Range { from: ObjectId, to: ObjectId },
    One(ObjectId),
}

struct Range {
    spelled: String,
    from_to: FromTo,
    /// Branch names the range's tip stands for (runs recorded on them are linked to it).
    branches: Vec<String>,
}

/// The range `verify` checks when none is given (see [`resolve`]).
fn default_range(repo: &Repo) -> String {
    // origin/HEAD is spelled as the branch it names (`origin/master`), as people know it.
    let remote_default = repo
        .gix()
        .try_find_reference("refs/remotes/origin/HEAD")
        .ok()
        .flatten()
        .and_then(|r| match r.target() {
            gix::refs::TargetRef::Symbolic(name) => Some(name.shorten().to_string()),
            gix::refs::TargetRef::Object(_) => None,
        });
    std::iter::once("@{upstream}".to_owned())
        .chain(remote_default)
        .chain(["origin/main", "origin/master"].map(str::to_owned))
        .find(|rev| repo.resolve_commit(rev).is_ok())
        .map_or_else(
            || "origin/main..HEAD".to_owned(),
            |rev| format!("{rev}..HEAD"),
        )
}

/// Resolves `A..B` (an empty side is `HEAD`) or one revision; by default
/// `@{upstream}..HEAD`, else the remote's default branch (`origin/HEAD`, by the name it points at, which `git clone`
/// sets), else `origin/main` or `origin/master`, whichever exists, `..HEAD` (a detached CI
/// checkout has no upstream).
fn resolve(repo: &Repo, spec: Option<&str>) -> Result<Range, Error> {
    let spelled = match spec {
        Some(spec) => spec.to_owned(),
        None => default_range(repo),
    };
    let bad = |detail: String| Error::BadRange {
        range: spelled.escape_debug().to_string(),
        detail,
    };
    let commit = |rev: &str| -> Result<ObjectId, Error> {
        repo.resolve_commit(rev).map_err(|e| match e {
            crate::store::Error::BadRevision { detail, .. } => bad(format!(
                "'{}' is not a commit here ({detail})",
                rev.escape_debug()
            )),
            other => other.into(),
        })
    };
    if spelled.contains("...") {
        return Err(bad(
            "A...B (symmetric difference) is not supported; use A..B".into(),
        ));
    }
    let head = repo.head()?;
    let (from_to, tip_name) = match spelled.split_once("..") {
        Some((from, to)) => {
            let from = if from.is_empty() { "HEAD" } else { from };
            let to = if to.is_empty() { "HEAD" } else { to };
            (
                FromTo::Range {
                    from: commit(from)?,
                    to: commit(to)?,
                },
                to,
            )
        }
        None => (FromTo::One(commit(&spelled)?), spelled.as_str()),
    };
    let mut branches = vec![
        tip_name
            .strip_prefix("refs/heads/")
            .unwrap_or(tip_name)
            .to_owned(),
    ];
    if tip_name == "HEAD" || tip_name == "@" {
        branches.push(head.branch_name().to_owned());
    }
    // A detached HEAD is no branch: runs recorded on one share nothing but that.
    branches.retain(|b| b != "HEAD" && b != "@");
    Ok(Range {
        spelled: spelled.clone(),
        from_to,
        branches,
    })
}

/// A run's approvals by snapshot tree.
type Approvals = Vec<(ObjectId, Approval)>;

/// How many bytes of decoded objects verify keeps (per reader thread).
const OBJECT_CACHE_BYTES: usize = 16 << 20;

/// How many runs one approval's chain of bases may visit (see [`Verifier::grounding`]).
const MAX_CHAIN: usize = 64;

/// What verify read of one run: its approvals, by snapshot tree, and every snapshot a review
/// of it gave a verdict on.
struct RunApprovals {
    list: Approvals,
    reviewed: Vec<ObjectId>,
    /// Its record listing (`None`: the run is not here, or could not be read).
    files: Option<RecordFiles>,
}

impl RunApprovals {
    fn none() -> RunApprovals {
        RunApprovals {
            list: Vec::new(),
            reviewed: Vec::new(),
            files: None,
        }
    }

    /// The approval (its index and itself) of `tree`, forced or not.
    fn approving(&self, tree: ObjectId, forced: bool) -> Option<(usize, &Approval)> {
        self.list
            .iter()
            .enumerate()
            .find(|(_, (t, a))| *t == tree && a.forced == forced)
            .map(|(i, (_, a))| (i, a))
    }
}

/// What a run's start and dispatch records say, read only for runs that may approve a
/// commit (or be linked to one).
struct Facts {
    /// The base commit, from the start record (never the manifest: a cache).
    base: Option<ObjectId>,
    /// The base commit's tree, as the start record names it (runs since the base stopped
    /// travelling with the run), for a clone that lacks the base commit.
    base_tree: Option<ObjectId>,
    branch: String,
    /// Dispatch record id → (round, snapshot).
    dispatches: HashMap<String, (u32, ObjectId)>,
    /// The run's tree at its tip.
    tree: ObjectId,
}

/// What a reader thread read of one run ahead of the checks that need it (see
/// [`Verifier::prefetch_linked`]): each part is taken by the check that would otherwise read
/// it, read from the same tip in the same way, so that reading ahead changes no verdict and no
/// report (a run is reported malformed only when a check reaches it).
#[derive(Default)]
struct Prefetched {
    /// Its approvals, as [`read_approvals`] without spend reads them, or why it cannot be read.
    approvals: Option<Result<RunApprovals, String>>,
    /// Its spend from its cost records, or why they cannot be read (first line, clipped).
    spend: Option<Result<f64, String>>,
    /// Its start and dispatch facts, as [`facts_at`] reads them.
    facts: Option<Result<Facts, String>>,
    /// The consistency of each of its approvals (by index in its list), as
    /// [`consistency_of`] checks it.
    consistency: Vec<Option<Result<(), String>>>,
}

/// A run that may be linked to a commit without a note: one whose approvals no commit of the
/// range holds (its approved work was changed before it was committed).
struct Unclaimed {
    run_id: RunId,
    base: Option<ObjectId>,
    branch: String,
}

/// Why a run's approval does not cover a commit, for the report.
struct Rejected {
    review: ReviewRef,
    reason: String,
}

struct Verifier<'a> {
    repo: &'a Repo,
    /// Run tips looked up so far (`None`: no such run here).
    tips: HashMap<RunId, Option<ObjectId>>,
    /// Every run, oldest first; listed on first need.
    all_runs: Option<Vec<RunId>>,
    notes: notes::Reader,
    runs: HashMap<RunId, Rc<RunApprovals>>,
    /// Each reported run's spend.
    spent: HashMap<RunId, f64>,
    /// Snapshot tree → the runs that approved (or forced) it; built on first need.
    index: Option<HashMap<ObjectId, Vec<RunId>>>,
    /// Built on first need, after the index.
    links: Option<Vec<Unclaimed>>,
    range_trees: HashSet<ObjectId>,
    /// The tree of each commit of the range.
    commit_trees: HashMap<ObjectId, ObjectId>,
    /// The runs each commit's note names, read ahead (taken by [`Verifier::check`]).
    noted: HashMap<ObjectId, Vec<String>>,
    /// What was read ahead of runs, on reader threads (see [`Prefetched`]).
    prefetched: HashMap<RunId, Prefetched>,
    branches: Vec<String>,
    /// Each run's start and dispatch facts, or why they cannot be read.
    facts: HashMap<RunId, Result<Rc<Facts>, String>>,
    /// Each approval's record-level consistency (by run and index in its list).
    consistency: HashMap<(RunId, usize), Result<(), String>>,
    /// Runs that could not be read, and why.
    malformed: BTreeMap<RunId, String>,
}

impl Verifier<'_> {
    fn check(&mut self, commit: &CodeCommit, is_tip: bool) -> Result<CommitCheck, Error> {
        let mut linked: Vec<RunId> = Vec::new();
        let mut missing: Vec<String> = Vec::new();
        let noted = match self.noted.remove(&commit.id) {
            Some(noted) => noted,
            None => note_runs(&self.notes.get(self.repo, commit.id)?.unwrap_or_default()),
        };
        for value in noted {
            match RunId::parse(&value) {
                Ok(id) if self.tip(&id)?.is_some() => push_unique(&mut linked, id),
                _ => missing.push(value),
            }
        }
        let noted = linked.len();
        for value in &commit.pair_runs {
            match RunId::parse(value) {
                Ok(id) if self.tip(&id)?.is_some() => push_unique(&mut linked, id),
                _ => missing.push(value.clone()),
            }
        }
        let mut rejected: Option<Rejected> = None;
        // 1. The runs the note and the `Pair-Run:` trailer name, confirmed by their records.
        for (i, run_id) in linked.iter().enumerate() {
            let runs = self.read_run(run_id, true)?;
            if let Some((index, a)) = runs.approving(commit.tree, false) {
                let review = self.review_ref(run_id, a)?;
                match self.covers(run_id, index, commit)? {
                    Ok(()) => {
                        let via = if i < noted { Via::Note } else { Via::Trailer };
                        return Ok(passed(commit, via, review));
                    }
                    Err(reason) => {
                        rejected.get_or_insert(Rejected { review, reason });
                    }
                }
            }
        }
        // 2. Any run that approved this tree (the note was lost, or never written).
        let mut forced = None;
        for run_id in self.runs_with_snapshot(commit.tree)?.into_iter().rev() {
            let runs = self.approvals(&run_id)?;
            if let Some((index, a)) = runs.approving(commit.tree, false) {
                let review = self.review_ref(&run_id, a)?;
                match self.covers(&run_id, index, commit)? {
                    Ok(()) => return Ok(passed(commit, Via::Tree, review)),
                    Err(reason) => {
                        rejected.get_or_insert(Rejected { review, reason });
                    }
                }
            }
            if forced.is_none()
                && let Some((index, a)) = runs.approving(commit.tree, true)
            {
                let review = self.review_ref(&run_id, a)?;
                match self.covers(&run_id, index, commit)? {
                    Ok(()) => forced = Some(review),
                    Err(reason) => {
                        rejected.get_or_insert(Rejected { review, reason });
                    }
                }
            }
        }
        // 3. Finished with --force on this tree.
        if let Some(review) = forced {
            return Ok(CommitCheck {
                commit: commit.id,
                subject: commit.subject.clone(),
                status: Status::Forced,
                via: None,
                detail: format!(
                    "run {} was finished with --force on this tree; no review approved it",
                    review.run_id
                ),
                review: Some(review),
                paths: Vec::new(),
                paths_total: 0,
            });
        }
        // 4. Nothing of its own.
        let own = self.own_paths(commit)?;
        if own.is_empty() && !commit.parents.is_empty() {
            return Ok(CommitCheck {
                commit: commit.id,
                subject: commit.subject.clone(),
                status: Status::Approved,
                via: Some(Via::Parents),
                review: None,
                paths: Vec::new(),
                paths_total: 0,
                detail: "adds nothing of its own: every file is its first parent's, or that of a parent that is not an ancestor of the first".into(),
            });
        }
        // 5. A run approved this very tree, but its approval does not cover this commit.
        if let Some(Rejected { review, reason }) = rejected {
            let total = own.len();
            return Ok(CommitCheck {
                commit: commit.id,
                subject: commit.subject.clone(),
                status: Status::Unreviewed,
                via: None,
                detail: format!(
                    "run {} approved this tree (round {}), but {reason}",
                    review.run_id, review.round
                ),
                review: Some(review),
                paths: bounded(own),
                paths_total: total,
            });
        }
        // 6. A run linked to the commit approved another tree.
        for id in self.unclaimed_links(commit, is_tip, &own)? {
            push_unique(&mut linked, id);
        }
        let mut closest: Option<(Vec<String>, ReviewRef)> = None;
        for run_id in &linked {
            let runs = self.approvals(run_id)?;
            for (tree, approval) in &runs.list {
                let paths = changed_paths(self.repo, *tree, commit.tree)?;
                if closest.as_ref().is_none_or(|(p, _)| paths.len() < p.len()) {
                    closest = Some((paths, self.review_ref(run_id, approval)?));
                }
            }
        }
        if let Some((paths, review)) = closest {
            let total = paths.len();
            return Ok(CommitCheck {
                commit: commit.id,
                subject: commit.subject.clone(),
                status: Status::ChangedAfterReview,
                via: None,
                detail: format!(
                    "run {} approved another tree (round {}): {total} path{} differ{}",
                    review.run_id,
                    review.round,
                    if total == 1 { "" } else { "s" },
                    if total == 1 { "s" } else { "" },
                ),
                review: Some(review),
                paths: bounded(paths),
                paths_total: total,
            });
        }
        let detail = match (linked.first(), missing.first()) {
            (Some(run), _) if self.malformed.contains_key(run) => {
                format!("run {run} is named on the commit but could not be read (skipped)")
            }
            (Some(run), _) => format!("run {run} never approved a tree"),
            (None, Some(run)) => format!(
                "no run approved this tree; run {} is named on the commit but not in this repository (fetch refs/pair/runs/*)",
                run.escape_debug()
            ),
            (None, None) if commit.parents.len() > 1 => {
                "no run approved this tree, and the merge holds content no parent brings".into()
            }
            (None, None) => "no run approved this tree".into(),
        };
        let total = own.len();
        Ok(CommitCheck {
            commit: commit.id,
            subject: commit.subject.clone(),
            status: Status::Unreviewed,
            via: None,
            review: None,
            paths: bounded(own),
            paths_total: total,
            detail,
        })
    }

    /// Whether approval `index` of run `run_id` (of exactly `commit`'s tree) covers `commit`:
    /// the run is consistent, its base leads to the commit, and the commit's own change is
    /// part of what the reviewer saw. `Err`: why not, for the report.
    fn covers(
        &mut self,
        run_id: &RunId,
        index: usize,
        commit: &CodeCommit,
    ) -> Result<Result<(), String>, Error> {
        if let Err(reason) = self.consistent(run_id, index) {
            return Ok(Err(reason));
        }
        let before = match self.grounding(run_id, commit)? {
            Ok(before) => before,
            Err(reason) => return Ok(Err(reason)),
        };
        let parent_tree = match commit.parents.first() {
            Some(parent) => self.commit_tree(*parent)?,
            None => ObjectId::empty_tree(commit.tree.kind()),
        };
        if before.contains(&parent_tree) {
            return Ok(Ok(()));
        }
        for path in changed_paths(self.repo, parent_tree, commit.tree)? {
            let theirs = self.repo.entry_at(parent_tree, &path)?;
            let mut seen = false;
            for tree in &before {
                if self.repo.entry_at(*tree, &path)? == theirs {
                    seen = true;
                    break;
                }
            }
            if !seen {
                return Ok(Err(format!(
                    "the commit changes {} from a version no review of that run started from (a revert, or work on another base)",
                    path.escape_debug()
                )));
            }
        }
        Ok(Ok(()))
    }

    /// The "before" trees of approval chains ending in run `run_id` that lead to `commit`:
    /// the run's base tree and every snapshot it reviewed; when its base is not an ancestor of
    /// the commit (a squash of several runs' work), the same of each run that approved the
    /// base's tree, until one whose base is. `Err`: no chain leads to the commit.
    fn grounding(
        &mut self,
        run_id: &RunId,
        commit: &CodeCommit,
    ) -> Result<Result<Vec<ObjectId>, String>, Error> {
        let mut before: Vec<ObjectId> = Vec::new();
        let mut visited: HashSet<RunId> = HashSet::new();
        let mut queue: VecDeque<RunId> = VecDeque::from([run_id.clone()]);
        let mut first_base = None;
        while let Some(run) = queue.pop_front() {
            if visited.len() >= MAX_CHAIN || !visited.insert(run.clone()) {
                continue;
            }
            let Ok(facts) = self.facts(&run) else {
                continue;
            };
            first_base.get_or_insert(facts.base);
            let base_tree = match facts.base {
                Some(base) if self.has_commit(base) => self.commit_tree(base)?,
                // The base commit is not here (a run does not carry it): its tree, when the
                // start record names one this repository has, is the "before" side.
                Some(_) => match facts.base_tree.filter(|t| self.repo.has_tree(*t)) {
                    Some(tree) => tree,
                    None => continue,
                },
                None => ObjectId::empty_tree(commit.tree.kind()),
            };
            push_tree(&mut before, base_tree);
            for tree in &self.approvals(&run)?.reviewed {
                push_tree(&mut before, *tree);
            }
            let leads = match facts.base {
                None => true,
                Some(base) => {
                    commit.parents.contains(&base) || self.repo.is_ancestor(base, commit.id)
                }
            };
            if leads {
                return Ok(Ok(before));
            }
            for other in self.runs_with_snapshot(base_tree)? {
                if visited.contains(&other) {
                    continue;
                }
                let runs = self.approvals(&other)?;
                if let Some((index, _)) = runs.approving(base_tree, false)
                    && self.consistent(&other, index).is_ok()
                {
                    queue.push_back(other);
                }
            }
        }
        Ok(Err(match first_base.flatten() {
            Some(base) if self.repo.has_commit(base) => format!(
                "its base {} is not an ancestor of the commit",
                &base.to_string()[..10]
            ),
            Some(base) => format!("its base {base} is not in this repository"),
            None => "its start record cannot be read".into(),
        }))
    }

    /// Whether approval `index` of run `run_id` is consistent with the run's own records and
    /// material (read once per approval): its review's dispatch record exists for the same
    /// round and snapshot, the snapshot stored for that round is the tree approved, and, for a
    /// review that said APPROVED, it carries no blocking finding and each approving reviewer's
    /// stored answers read APPROVED under today's parser.
    fn consistent(&mut self, run_id: &RunId, index: usize) -> Result<(), String> {
        let key = (run_id.clone(), index);
        if let Some(found) = self.consistency.get(&key) {
            return found.clone();
        }
        let found = self.check_consistency(run_id, index);
        self.consistency.insert(key, found.clone());
        found
    }

    fn check_consistency(&mut self, run_id: &RunId, index: usize) -> Result<(), String> {
        let runs = self.approvals(run_id).map_err(|e| e.to_string())?;
        let (_, a) = runs.list.get(index).ok_or("no such approval")?;
        let facts = self.facts(run_id)?;
        let ahead = self
            .prefetched
            .get_mut(run_id)
            .and_then(|p| p.consistency.get_mut(index))
            .and_then(Option::take);
        match ahead {
            Some(found) => found,
            None => consistency_of(self.repo, a, &facts),
        }
    }

    /// The start and dispatch facts of run `run_id` (read once per run).
    fn facts(&mut self, run_id: &RunId) -> Result<Rc<Facts>, String> {
        if let Some(found) = self.facts.get(run_id) {
            return found.clone();
        }
        let found = self.read_facts(run_id).map(Rc::new);
        if let Err(reason) = &found {
            self.malformed
                .entry(run_id.clone())
                .or_insert_with(|| reason.clone());
        }
        self.facts.insert(run_id.clone(), found.clone());
        found
    }

    fn read_facts(&mut self, run_id: &RunId) -> Result<Facts, String> {
        let runs = self.approvals(run_id).map_err(|e| e.to_string())?;
        // Read ahead (from the records, or from the tip's trailer, which lists no record
        // files).
        if let Some(found) = self.prefetched.get_mut(run_id).and_then(|p| p.facts.take()) {
            return found;
        }
        let files = runs
            .files
            .as_ref()
            .ok_or_else(|| format!("run {run_id} cannot be read"))?;
        let tip = self
            .tip(run_id)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("run {run_id} is not here"))?;
        facts_at(self.repo, run_id, tip, files)
    }

    /// Takes what reader threads read ahead of each commit (see [`read_linked`]).
    fn take_linked(&mut self, linked: Vec<LinkedRead>) {
        for read in linked {
            if let Some(noted) = read.noted {
                self.noted.insert(read.commit, noted);
            }
            for (run_id, read) in read.runs {
                match read {
                    RunRead::Unreadable => {}
                    RunRead::Absent => {
                        self.tips.insert(run_id, None);
                    }
                    RunRead::Here(tip, ahead) => {
                        self.tips.insert(run_id.clone(), Some(tip));
                        self.prefetched.insert(run_id, *ahead);
                    }
                }
            }
        }
    }

    /// Takes what reader threads read of the listed runs' tips: each run whose tip carries
    /// its approvals is read, as [`Verifier::runs_with_snapshot`] would read it; any other
    /// (and any run read already) is left as it is.
    fn take_carried(&mut self, read: Vec<(RunId, Option<Box<CarriedRun>>)>) {
        for (run_id, carried) in read {
            let Some((runs, ahead)) = carried.map(|c| *c) else {
                continue;
            };
            if self.runs.contains_key(&run_id) || self.prefetched.contains_key(&run_id) {
                continue;
            }
            self.prefetched.insert(run_id.clone(), ahead);
            self.runs.insert(run_id, Rc::new(runs));
        }
    }

    /// The tree of `commit` (from the range when it is one of its commits).
    fn commit_tree(&self, commit: ObjectId) -> Result<ObjectId, Error> {
        match self.commit_trees.get(&commit) {
            Some(tree) => Ok(*tree),
            None => Ok(self.repo.commit_tree(commit)?),
        }
    }

    /// Whether commit `id` is here.
    fn has_commit(&self, id: ObjectId) -> bool {
        self.commit_trees.contains_key(&id) || self.repo.has_commit(id)
    }

    /// The tip of run `run_id`, if this repository has it (looked up once per run).
    fn tip(&mut self, run_id: &RunId) -> Result<Option<ObjectId>, Error> {
        if let Some(tip) = self.tips.get(run_id) {
            return Ok(*tip);
        }
        let tip = self.repo.run_tip(run_id)?;
        self.tips.insert(run_id.clone(), tip);
        Ok(tip)
    }

    /// Every run id, oldest first, with their tips remembered (one listing of the refs).
    fn all_runs(&mut self) -> Result<Vec<RunId>, Error> {
        if let Some(ids) = &self.all_runs {
            return Ok(ids.clone());
        }
        let tips = self.repo.run_tips()?;
        if tips.is_empty() {
            // Nothing can be confirmed: say that the records are missing, not that every
            // commit is unreviewed. (A commit confirmed through its note proved runs exist;
            // any other commit comes here first.)
            return Err(Error::NoReviewRecords {
                notes: self.notes.exists(),
            });
        }
        let ids: Vec<RunId> = tips.keys().cloned().collect();
        for (id, tip) in tips {
            self.tips.insert(id, Some(tip));
        }
        self.all_runs = Some(ids.clone());
        Ok(ids)
    }

    /// The approvals of `run_id` (read once per run, from its review and finish records).
    fn approvals(&mut self, run_id: &RunId) -> Result<Rc<RunApprovals>, Error> {
        self.read_run(run_id, false)
    }

    /// Reads a run's approvals, and with `with_spend` its spend in the same pass (for a run
    /// that will likely be reported: one listing of its records instead of two). A run that
    /// cannot be read approves nothing and is remembered as malformed.
    fn read_run(&mut self, run_id: &RunId, with_spend: bool) -> Result<Rc<RunApprovals>, Error> {
        if let Some(found) = self.runs.get(run_id) {
            return Ok(Rc::clone(found));
        }
        let Some(tip) = self.tip(run_id)? else {
            let found = Rc::new(RunApprovals::none());
            self.runs.insert(run_id.clone(), Rc::clone(&found));
            return Ok(found);
        };
        let ahead = self
            .prefetched
            .get_mut(run_id)
            .and_then(|p| Some((p.approvals.take()?, p.spend.clone())));
        let read = match ahead {
            // Read ahead the way `read_approvals` reads: the spend's error, when asked for,
            // makes the run unreadable.
            Some((Ok(runs), Some(spend))) if with_spend => spend.map(|s| (runs, Some(s))),
            Some((Ok(runs), _)) if !with_spend => Ok((runs, None)),
            Some((Err(reason), _)) => Err(reason),
            _ => read_approvals(self.repo, run_id, tip, with_spend),
        };
        let found = match read {
            Ok((runs, spent)) => {
                if let Some(spent) = spent {
                    self.spent.insert(run_id.clone(), spent);
                }
                runs
            }
            Err(reason) => self.skip(run_id, reason),
        };
        let found = Rc::new(found);
        self.runs.insert(run_id.clone(), Rc::clone(&found));
        Ok(found)
    }

    /// Remembers run `run_id` as malformed: it approves nothing.
    fn skip(&mut self, run_id: &RunId, reason: String) -> RunApprovals {
        self.malformed.entry(run_id.clone()).or_insert(reason);
        RunApprovals::none()
    }

    /// The run's measured spend (0 when never measured, or its cost records do not parse),
    /// read once per run.
    fn spent(&mut self, run_id: &RunId) -> Result<f64, Error> {
        if let Some(spent) = self.spent.get(run_id) {
            return Ok(*spent);
        }
        let ahead = self.prefetched.get(run_id).and_then(|p| p.spend.clone());
        let listed = self.runs.get(run_id).and_then(|r| r.files.clone());
        let spent = match (ahead, listed, self.tip(run_id)?) {
            (Some(read), _, _) => read.unwrap_or(0.0),
            // The record listing already read for its approvals, at the same tip.
            (None, Some(files), _) => self
                .repo
                .read_records(&files, &["cost"])
                .map_or(0.0, |records| spend(&records)),
            (None, None, Some(tip)) => self
                .repo
                .records_of_kinds(run_id, tip, &["cost"])
                .map_or(0.0, |records| spend(&records)),
            (None, None, None) => 0.0,
        };
        self.spent.insert(run_id.clone(), spent);
        Ok(spent)
    }

    /// The runs (oldest first) with an approved or forced snapshot equal to `tree`.
    fn runs_with_snapshot(&mut self, tree: ObjectId) -> Result<Vec<RunId>, Error> {
        if self.index.is_none() {
            let ids = self.all_runs()?;
            // Every run not read yet, read on a few threads: the one cost that grows with
            // the number of runs.
            // Newest first (run ids sort by creation): git packs a run's objects as deltas
            // against those of newer runs (its history walk goes newest first), in chains up
            // to 50 long (a run's `reviews/<round>` tree, which differs from its neighbours'
            // by a few ids, sits 25 deep on average in a gc'ed clone); a chain's result is
            // kept, its intermediates are not (gix), so reading oldest first inflates every
            // chain whole, while reading newest first finds each delta's base already decoded.
            let todo: Vec<(RunId, ObjectId)> = ids
                .iter()
                .rev()
                .filter(|id| !self.runs.contains_key(*id))
                .filter_map(|id| Some((id.clone(), (*self.tips.get(id)?)?)))
                .collect();
            // A run that approved a tree of the range will be checked: what that needs is
            // read on the same thread, now.
            let range_trees = &self.range_trees;
            let lists = self.repo.map_parallel(&todo, |repo, (run_id, tip)| {
                if let Some((runs, ahead)) = carried(repo, *tip) {
                    return Ok((Ok(runs), Some(ahead)));
                }
                let read = read_approvals(repo, run_id, *tip, false).map(|(runs, _)| runs);
                let ahead = match &read {
                    Ok(runs) if runs.list.iter().any(|(t, _)| range_trees.contains(t)) => {
                        Some(read_ahead(repo, run_id, *tip, runs))
                    }
                    _ => None,
                };
                Ok((read, ahead))
            })?;
            for ((run_id, _), (read, ahead)) in todo.into_iter().zip(lists) {
                let runs = match read {
                    Ok(runs) => runs,
                    Err(reason) => self.skip(&run_id, reason),
                };
                if let Some(ahead) = ahead {
                    self.prefetched.insert(run_id.clone(), ahead);
                }
                self.runs.insert(run_id, Rc::new(runs));
            }
            let mut index: HashMap<ObjectId, Vec<RunId>> = HashMap::new();
            for run_id in ids {
                for (snapshot, _) in &self.approvals(&run_id)?.list {
                    let runs = index.entry(*snapshot).or_default();
                    if runs.last() != Some(&run_id) {
                        runs.push(run_id.clone());
                    }
                }
            }
            self.index = Some(index);
        }
        Ok(self
            .index
            .as_ref()
            .and_then(|index| index.get(&tree))
            .cloned()
            .unwrap_or_default())
    }

    /// Unclaimed runs linked to `commit`: runs whose approved work no commit of the range
    /// holds, that started on the commit's first parent (or, for the range's tip, were
    /// recorded on the branch the range names), and whose approved change touches some of
    /// the paths the commit changes (`own`), so that another task's run started from the
    /// same commit is not taken for this one.
    fn unclaimed_links(
        &mut self,
        commit: &CodeCommit,
        is_tip: bool,
        own: &[String],
    ) -> Result<Vec<RunId>, Error> {
        if self.links.is_none() {
            let mut links = Vec::new();
            for run_id in self.all_runs()? {
                let runs = self.approvals(&run_id)?;
                if runs.list.is_empty()
                    || runs.list.iter().any(|(t, _)| self.range_trees.contains(t))
                {
                    continue;
                }
                let Ok(facts) = self.facts(&run_id) else {
                    continue;
                };
                links.push(Unclaimed {
                    run_id,
                    base: facts.base,
                    branch: facts.branch.clone(),
                });
            }
            self.links = Some(links);
        }
        let parent = commit.parents.first().copied();
        let candidates: Vec<(RunId, Option<ObjectId>)> = self
            .links
            .iter()
            .flatten()
            .filter(|l| {
                (parent.is_some() && l.base == parent)
                    || (is_tip && self.branches.contains(&l.branch))
            })
            .map(|l| (l.run_id.clone(), l.base))
            .rev()
            .collect();
        let own: HashSet<&str> = own.iter().map(String::as_str).collect();
        let mut out = Vec::new();
        for (run_id, base) in candidates {
            let base_tree = match base {
                Some(base) if self.has_commit(base) => self.commit_tree(base)?,
                Some(_) => continue,
                None => ObjectId::empty_tree(commit.tree.kind()),
            };
            for (tree, _) in &self.approvals(&run_id)?.list {
                let changed = changed_paths(self.repo, base_tree, *tree)?;
                if changed.iter().any(|p| own.contains(p.as_str())) {
                    out.push(run_id.clone());
                    break;
                }
            }
        }
        Ok(out)
    }

    /// The paths of `commit` that hold content no parent brings (all its paths for a root
    /// commit). A file is its parents' when it equals that file in the first parent, or in a
    /// parent that is not an ancestor of the first: an ancestor of the first parent brings
    /// nothing new, so taking a file from it (an old version back) is the merge's own change.
    fn own_paths(&self, commit: &CodeCommit) -> Result<Vec<String>, Error> {
        let empty = ObjectId::empty_tree(commit.tree.kind());
        let Some((first, rest)) = commit.parents.split_first() else {
            return changed_paths(self.repo, empty, commit.tree);
        };
        let mut own = changed_paths(self.repo, self.commit_tree(*first)?, commit.tree)?;
        for parent in rest {
            if own.is_empty() {
                break;
            }
            if self.repo.is_ancestor(*parent, *first) {
                continue;
            }
            let theirs: BTreeSet<String> =
                changed_paths(self.repo, self.commit_tree(*parent)?, commit.tree)?
                    .into_iter()
                    .collect();
            own.retain(|p| theirs.contains(p));
        }
        Ok(own)
    }

    fn review_ref(&mut self, run_id: &RunId, approval: &Approval) -> Result<ReviewRef, Error> {
        let spent = self.spent(run_id)?;
        Ok(ReviewRef {
            run_id: run_id.clone(),
            round: approval.round,
            reviewer: approval.reviewer.clone(),
            cost_usd: (spent > 0.0).then(|| crate::util::round_usd(spent)),
        })
    }
}

/// Whether approval `a` is consistent with the run's own records and material (see
/// [`Verifier::consistent`]), given the run's start and dispatch `facts`.
fn consistency_of(repo: &Repo, a: &Approval, facts: &Facts) -> Result<(), String> {
    let dispatch = facts.dispatches.get(&a.dispatch).copied();
    crate::store::consistency_of(repo, a, dispatch, facts.tree)
}

/// What run `run_id`'s tip commit `tip` carries of its approvals (its `Pair-Approvals:`
/// trailer), as [`read_approvals`] and [`read_ahead`] would read them from its records, when
/// the trailer was checked under today's rules and carried whole; `None`: read the records.
fn carried(repo: &Repo, tip: ObjectId) -> Option<CarriedRun> {
    if crate::util::test_switch("GIT_PAIR_TEST_VERIFY_READS_RECORDS").is_some() {
        return None;
    }
    let (tree, carried) = repo.tip_approvals(tip).ok()?;
    let carried = carried?;
    carried.checked_under(crate::store::approval_rules(), tree.into())?;
    let facts = *carried.facts?;
    let list: Approvals = facts
        .fold
        .approvals()
        .into_iter()
        .map(|a| (a.snapshot.into(), a))
        .collect();
    let consistency = facts
        .checks
        .iter()
        .map(|check| Some(check.clone().map_or(Ok(()), Err)))
        .collect();
    let runs = RunApprovals {
        list,
        reviewed: facts
            .fold
            .reviewed()
            .iter()
            .copied()
            .map(ObjectId::from)
            .collect(),
        files: None,
    };
    let ahead = Prefetched {
        approvals: None,
        spend: Some(Ok(facts.spent_usd)),
        facts: Some(Ok(Facts {
            base: facts.base.map(ObjectId::from),
            base_tree: facts.base_tree.map(ObjectId::from),
            branch: facts.branch,
            dispatches: HashMap::new(),
            tree,
        })),
        consistency,
    };
    Some((runs, ahead))
}

/// The start and dispatch facts of run `run_id` at `tip`, from its record `files`.
fn facts_at(
    repo: &Repo,
    run_id: &RunId,
    tip: ObjectId,
    files: &RecordFiles,
) -> Result<Facts, String> {
    let tree = repo.commit_tree(tip).map_err(|e| e.to_string())?;
    let records = repo
        .read_records(files, &["start", "review-dispatch"])
        .map_err(|e| e.to_string())?;
    let mut start = None;
    let mut dispatches = HashMap::new();
    for record in records {
        match record.body {
            Body::Start(s) if start.is_none() => start = Some(s),
            Body::ReviewDispatch(d) => {
                dispatches.insert(record.id, (d.round, d.snapshot.into()));
            }
            _ => {}
        }
    }
    let start = start.ok_or_else(|| format!("run {run_id} has no start record"))?;
    Ok(Facts {
        base: start.base.map(ObjectId::from),
        base_tree: start.base_tree.map(ObjectId::from),
        branch: start.branch,
        dispatches,
        tree,
    })
}

fn push_tree(trees: &mut Vec<ObjectId>, tree: ObjectId) {
    if !trees.contains(&tree) {
        trees.push(tree);
    }
}

/// A run's approvals (by snapshot tree), and with `with_spend` its spend, from its records:
/// the review records, and the finish record only where it can matter (most runs end on an
/// approving review), so indexing reads one object fewer per run. `Err`: why the run cannot
/// be read (a ref that is not a commit, a record that does not parse).
fn read_approvals(
    repo: &Repo,
    run_id: &RunId,
    tip: ObjectId,
    with_spend: bool,
) -> Result<(RunApprovals, Option<f64>), String> {
    let read = || -> Result<(RunApprovals, Option<f64>), crate::store::Error> {
        let files = repo.record_files(run_id, tip)?;
        let mut records = repo.read_records(&files, &["review"])?;
        if files.has_kind("finish") && crate::model::finish_matters(&records) {
            records.extend(repo.read_records(&files, &["finish"])?);
        }
        let spent = if with_spend {
            Some(spend(&repo.read_records(&files, &["cost"])?))
        } else {
            None
        };
        let list = crate::model::approvals(&records)
            .into_iter()
            .map(|a| (a.snapshot.into(), a))
            .collect();
        let reviewed = crate::model::reviewed_snapshots(&records)
            .into_iter()
            .map(ObjectId::from)
            .collect();
        Ok((
            RunApprovals {
                list,
                reviewed,
                files: Some(files),
            },
            spent,
        ))
    };
    read().map_err(|e| crate::util::first_line_clipped(&e.to_string(), 300))
}

/// What a reader thread read ahead for one commit of the range: what checking it through the
/// runs its note and `Pair-Run:` trailers name will read (see [`Prefetched`]). Nothing here is
/// fatal: what cannot be read ahead is read (and fails) where it is needed.
struct LinkedRead {
    commit: ObjectId,
    /// The commit itself, when the walk handed over its id alone ([`Walked::Found`]).
    read: Option<Result<CodeCommit, crate::store::Error>>,
    /// The runs its note names (`None`: the note could not be read).
    noted: Option<Vec<String>>,
    /// Each run it names that no other commit's read took first.
    runs: Vec<(RunId, RunRead)>,
}

/// What the walk hands a reader thread.
enum ToRead {
    /// A commit of the range.
    Commit(Walked),
    /// A listed run's tip (no notes: every run is indexed).
    Run(RunId, ObjectId),
}

/// What a reader thread read of a [`ToRead`].
enum Read {
    Commit(LinkedRead),
    /// The run's approvals its tip carries ([`carried`]; `None`: its records are read when
    /// the index is built).
    Run(RunId, Option<Box<CarriedRun>>),
}

/// A run as its tip's trailer gives it: its approvals and what checks read of it beyond
/// them (see [`carried`]).
type CarriedRun = (RunApprovals, Prefetched);

/// A commit of the range as the walk hands it to a reader thread.
enum Walked {
    /// Found through the commit-graph, not read: the reader reads it.
    Found(ObjectId),
    /// Read by the walk: its id and `Pair-Run:` trailers.
    Read(ObjectId, Vec<String>),
}

/// What a reader thread found of a run.
enum RunRead {
    /// Its ref could not be read: it is looked up again where it is needed.
    Unreadable,
    /// No such run here.
    Absent,
    /// Its tip, and what was read ahead of it.
    Here(ObjectId, Box<Prefetched>),
}

/// Reads ahead, on a reader thread, the note of `commit` and each run it or its `Pair-Run:`
/// trailers (`pair_runs`) name, once per run (`seen`).
fn read_linked(
    repo: &Repo,
    notes: &mut Option<notes::Reader>,
    packed: Option<&PackedRefs>,
    seen: &Mutex<HashSet<RunId>>,
    walked: Walked,
) -> LinkedRead {
    let (commit, pair_runs, read) = match walked {
        Walked::Read(commit, pair_runs) => (commit, pair_runs, None),
        Walked::Found(commit) => match repo.code_commit(commit) {
            Ok(read) => (commit, read.pair_runs.clone(), Some(Ok(read))),
            Err(err) => {
                return LinkedRead {
                    commit,
                    read: Some(Err(err)),
                    noted: None,
                    runs: Vec::new(),
                };
            }
        },
    };
    let noted = notes
        .as_mut()
        .and_then(|notes| notes.get(repo, commit).ok())
        .map(|note| note_runs(&note.unwrap_or_default()));
    let named = noted.iter().flatten().chain(&pair_runs);
    let mut runs = Vec::new();
    for value in named {
        let Ok(run_id) = RunId::parse(value) else {
            continue;
        };
        if !seen
            .lock()
            .is_ok_and(|mut seen| seen.insert(run_id.clone()))
        {
            continue;
        }
        let tip = match packed {
            Some(packed) => repo.run_tip_in(packed, &run_id),
            None => repo.run_tip(&run_id),
        };
        let read = match tip {
            Err(_) => RunRead::Unreadable,
            Ok(None) => RunRead::Absent,
            Ok(Some(tip)) => RunRead::Here(tip, Box::new(read_run_ahead(repo, &run_id, tip))),
        };
        runs.push((run_id, read));
    }
    LinkedRead {
        commit,
        read,
        noted,
        runs,
    }
}

/// What checking a commit against run `run_id` at `tip` reads, read ahead: from the tip's
/// trailer when it carries what is needed, else from the records.
fn read_run_ahead(repo: &Repo, run_id: &RunId, tip: ObjectId) -> Prefetched {
    if let Some((runs, mut ahead)) = carried(repo, tip) {
        ahead.approvals = Some(Ok(runs));
        return ahead;
    }
    let read = read_approvals(repo, run_id, tip, false).map(|(runs, _)| runs);
    let mut ahead = match &read {
        Ok(runs) => read_ahead(repo, run_id, tip, runs),
        Err(_) => Prefetched::default(),
    };
    ahead.approvals = Some(read);
    ahead
}

/// What checking a commit against run `run_id` (at `tip`, whose approvals are `runs`) reads
/// beyond its approvals: its spend, its facts and each approval's consistency, read the way
/// [`Verifier`] reads them (see [`Prefetched`]).
fn read_ahead(repo: &Repo, run_id: &RunId, tip: ObjectId, runs: &RunApprovals) -> Prefetched {
    let Some(files) = &runs.files else {
        return Prefetched::default();
    };
    let spend = repo
        .read_records(files, &["cost"])
        .map(|records| spend(&records))
        .map_err(|e| crate::util::first_line_clipped(&e.to_string(), 300));
    let facts = facts_at(repo, run_id, tip, files);
    let consistency = match &facts {
        Ok(facts) => runs
            .list
            .iter()
            .map(|(_, a)| Some(consistency_of(repo, a, facts)))
            .collect(),
        Err(_) => Vec::new(),
    };
    Prefetched {
        approvals: None,
        spend: Some(spend),
        facts: Some(facts),
        consistency,
    }
}

/// A run's spend as its manifest computes it, from its cost records alone (the one fold).
fn spend(records: &[crate::model::Record]) -> f64 {
    crate::model::Manifest::project(records.iter().filter(|r| matches!(r.body, Body::Cost(_))))
        .spent_usd
}

fn passed(commit: &CodeCommit, via: Via, review: ReviewRef) -> CommitCheck {
    CommitCheck {
        commit: commit.id,
        subject: commit.subject.clone(),
        status: Status::Approved,
        via: Some(via),
        detail: format!(
            "approved by run {} in round {} ({})",
            review.run_id, review.round, review.reviewer
        ),
        review: Some(review),
        paths: Vec::new(),
        paths_total: 0,
    }
}

fn changed_paths(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<Vec<String>, Error> {
    if old == new {
        return Ok(Vec::new());
    }
    Ok(repo.changed_paths(old, new)?)
}

fn bounded(mut paths: Vec<String>) -> Vec<String> {
    paths.truncate(MAX_PATHS);
    paths
}

/// The run ids `note`'s lines of ours name, in order.
fn note_runs(note: &str) -> Vec<String> {
    note.lines()
        .filter_map(NoteLine::parse)
        .map(|line| line.run_id)
        .collect()
}

fn push_unique(ids: &mut Vec<RunId>, id: RunId) {
    if !ids.contains(&id) {
        ids.push(id);
    }
}
