//! `verify`, the CI check: proves that every commit of a range holds work a reviewer
//! approved. The note on a commit only says where to look; approval is always confirmed
//! against the run's own records (an APPROVED review whose snapshot is the commit's tree).
//! Commits without a confirmed note are looked up in an index of every run's approved
//! snapshots, built once, on first need, from the runs' review and finish records alone.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

use gix::ObjectId;

use super::{Context, Error};
use crate::model::report::verify::{CommitLine, Verified};
use crate::model::{Approval, Body, CommitId, RunId};
use crate::store::notes::{self, NoteLine};
use crate::store::{CodeCommit, Repo};

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
}

impl Report {
    /// Whether `check` passes.
    pub fn passes(&self, check: &CommitCheck) -> bool {
        match check.status {
            Status::Approved => true,
            Status::Forced => self.allow_forced,
            Status::ChangedAfterReview | Status::Unreviewed => false,
        }
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
    pub fn verified(&self) -> Verified {
        let failing = self.failing();
        let n = self.commits.len();
        Verified {
            range: self.range.clone(),
            ok: failing == 0,
            allow_forced: self.allow_forced,
            commits: self
                .commits
                .iter()
                .map(|c| {
                    let review = c.review.as_ref();
                    CommitLine {
                        commit: c.commit.to_string(),
                        status: c.status.as_str(),
                        passes: self.passes(c),
                        run: review.map(|r| r.run_id.clone()),
                        round: review.map(|r| r.round),
                        reviewer: review.map(|r| r.reviewer.clone()),
                        cost_usd: review.and_then(|r| r.cost_usd),
                        paths: c.paths.clone(),
                        paths_omitted: c.paths_total - c.paths.len(),
                        via: c.via.map(Via::as_str),
                        subject: c.subject.clone(),
                        detail: c.detail.clone(),
                    }
                })
                .collect(),
            error: (failing > 0).then(|| {
                format!(
                    "{failing} of {n} commit{} in {} not approved by a review",
                    if n == 1 { "" } else { "s" },
                    self.range
                )
            }),
        }
    }
}

/// Verifies every commit of the range (see [`Request`]): `verify`'s report.
pub fn verify(ctx: &Context, request: &Request) -> Result<Verified, Error> {
    Ok(check_range(ctx, request)?.verified())
}

/// Every commit of the range, checked.
fn check_range(ctx: &Context, request: &Request) -> Result<Report, Error> {
    let repo = &ctx.repo;
    let range = resolve(repo, request.range.as_deref())?;
    let commits = match range.from_to {
        FromTo::Range { from, to } => repo.commits_in_range(Some(from), to)?,
        FromTo::One(commit) => vec![repo.code_commit(commit)?],
    };
    let mut report = Report {
        range: range.spelled,
        allow_forced: request.allow_forced,
        commits: Vec::with_capacity(commits.len()),
    };
    if commits.is_empty() {
        return Ok(report);
    }
    let mut verifier = Verifier {
        repo,
        tips: HashMap::new(),
        all_runs: None,
        notes: notes::Reader::open(repo)?,
        runs: HashMap::new(),
        spent: HashMap::new(),
        index: None,
        links: None,
        range_trees: commits.iter().map(|c| c.tree).collect(),
        branches: range.branches,
    };
    let last = commits.len() - 1;
    for (i, commit) in commits.iter().enumerate() {
        report.commits.push(verifier.check(commit, i == last)?);
    }
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

/// Resolves `A..B` (an empty side is `HEAD`) or one revision; by default
/// `@{upstream}..HEAD`, or `origin/main..HEAD` without an upstream.
fn resolve(repo: &Repo, spec: Option<&str>) -> Result<Range, Error> {
    let spelled = match spec {
        Some(spec) => spec.to_owned(),
        None if repo.resolve_commit("@{upstream}").is_ok() => "@{upstream}..HEAD".to_owned(),
        None => "origin/main..HEAD".to_owned(),
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

/// A run's approvals, by snapshot tree.
struct RunApprovals {
    list: Approvals,
}

impl RunApprovals {
    fn approving(&self, tree: ObjectId, forced: bool) -> Option<&Approval> {
        self.list
            .iter()
            .find(|(t, a)| *t == tree && a.forced == forced)
            .map(|(_, a)| a)
    }
}

/// A run that may be linked to a commit without a note: one whose approvals no commit of the
/// range holds (its approved work was changed before it was committed).
struct Unclaimed {
    run_id: RunId,
    base: Option<CommitId>,
    branch: String,
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
    branches: Vec<String>,
}

impl Verifier<'_> {
    fn check(&mut self, commit: &CodeCommit, is_tip: bool) -> Result<CommitCheck, Error> {
        let mut linked: Vec<RunId> = Vec::new();
        let mut missing: Vec<String> = Vec::new();
        let note = self.notes.get(self.repo, commit.id)?.unwrap_or_default();
        for line in note.lines().filter_map(NoteLine::parse) {
            match RunId::parse(&line.run_id) {
                Ok(id) if self.tip(&id)?.is_some() => push_unique(&mut linked, id),
                _ => missing.push(line.run_id),
            }
        }
        let noted = linked.len();
        for value in &commit.pair_runs {
            match RunId::parse(value) {
                Ok(id) if self.tip(&id)?.is_some() => push_unique(&mut linked, id),
                _ => missing.push(value.clone()),
            }
        }
        // 1. The runs the note and the `Pair-Run:` trailer name, confirmed by their records.
        for (i, run_id) in linked.iter().enumerate() {
            let runs = self.read_run(run_id, true)?;
            if let Some(a) = runs.approving(commit.tree, false) {
                let review = self.review_ref(run_id, a)?;
                let via = if i < noted { Via::Note } else { Via::Trailer };
                return Ok(passed(commit, via, review));
            }
        }
        // 2. Any run that approved this tree (the note was lost, or never written).
        let mut forced = None;
        for run_id in self.runs_with_snapshot(commit.tree)?.into_iter().rev() {
            let runs = self.approvals(&run_id)?;
            if let Some(a) = runs.approving(commit.tree, false) {
                let review = self.review_ref(&run_id, a)?;
                return Ok(passed(commit, Via::Tree, review));
            }
            if forced.is_none()
                && let Some(a) = runs.approving(commit.tree, true)
            {
                forced = Some(self.review_ref(&run_id, a)?);
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
                detail: "adds nothing of its own: every file is one of its parents' files".into(),
            });
        }
        // 5. A run linked to the commit approved another tree.
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
            (Some(run), _) => format!("run {run} never approved a tree"),
            (None, Some(run)) => format!(
                "no run approved this tree; run {} is named on the commit but not in this repository (fetch refs/pair/runs/*)",
                run.escape_debug()
            ),
            (None, None) if commit.parents.len() > 1 => {
                "no run approved this tree, and the merge holds content neither parent has".into()
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
    /// that will likely be reported: one listing of its records instead of two).
    fn read_run(&mut self, run_id: &RunId, with_spend: bool) -> Result<Rc<RunApprovals>, Error> {
        if let Some(found) = self.runs.get(run_id) {
            return Ok(Rc::clone(found));
        }
        let Some(tip) = self.tip(run_id)? else {
            let found = Rc::new(RunApprovals { list: Vec::new() });
            self.runs.insert(run_id.clone(), Rc::clone(&found));
            return Ok(found);
        };
        let (list, spent) = read_approvals(self.repo, run_id, tip, with_spend)?;
        if let Some(spent) = spent {
            self.spent.insert(run_id.clone(), spent);
        }
        let found = Rc::new(RunApprovals { list });
        self.runs.insert(run_id.clone(), Rc::clone(&found));
        Ok(found)
    }

    /// The run's measured spend (0 when never measured), read once per run.
    fn spent(&mut self, run_id: &RunId) -> Result<f64, Error> {
        if let Some(spent) = self.spent.get(run_id) {
            return Ok(*spent);
        }
        let spent = match self.tip(run_id)? {
            Some(tip) => spend(&self.repo.records_of_kinds(run_id, tip, &["cost"])?),
            None => 0.0,
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
            let todo: Vec<(RunId, ObjectId)> = ids
                .iter()
                .filter(|id| !self.runs.contains_key(*id))
                .filter_map(|id| Some((id.clone(), (*self.tips.get(id)?)?)))
                .collect();
            let lists = self.repo.map_parallel(&todo, |repo, (run_id, tip)| {
                read_approvals(repo, run_id, *tip, false).map(|(list, _)| list)
            })?;
            for ((run_id, _), list) in todo.into_iter().zip(lists) {
                self.runs.insert(run_id, Rc::new(RunApprovals { list }));
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
                let manifest = self.repo.load(&run_id)?.manifest;
                links.push(Unclaimed {
                    run_id,
                    base: manifest.base,
                    branch: manifest.branch,
                });
            }
            self.links = Some(links);
        }
        let parent = commit.parents.first().copied();
        let candidates: Vec<(RunId, Option<CommitId>)> = self
            .links
            .iter()
            .flatten()
            .filter(|l| {
                (parent.is_some() && l.base.map(ObjectId::from) == parent)
                    || (is_tip && self.branches.contains(&l.branch))
            })
            .map(|l| (l.run_id.clone(), l.base))
            .rev()
            .collect();
        let own: HashSet<&str> = own.iter().map(String::as_str).collect();
        let mut out = Vec::new();
        for (run_id, base) in candidates {
            let base_tree = match base {
                // A run's chain does not carry its base: a run whose base this clone lacks
                // cannot be compared here, so it vouches for nothing (the commit is not its).
                Some(base) => match self.repo.commit_tree(base.into()) {
                    Ok(tree) => tree,
                    Err(_) => continue,
                },
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

    /// The paths of `commit` that hold content none of its parents has at that path (all
    /// its paths for a root commit).
    fn own_paths(&self, commit: &CodeCommit) -> Result<Vec<String>, Error> {
        let empty = ObjectId::empty_tree(commit.tree.kind());
        let Some((first, rest)) = commit.parents.split_first() else {
            return changed_paths(self.repo, empty, commit.tree);
        };
        let mut own = changed_paths(self.repo, self.repo.commit_tree(*first)?, commit.tree)?;
        for parent in rest {
            if own.is_empty() {
                break;
            }
            let theirs: BTreeSet<String> =
                changed_paths(self.repo, self.repo.commit_tree(*parent)?, commit.tree)?
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

/// A run's approvals (by snapshot tree), and with `with_spend` its spend, from its records:
/// the review records, and the finish record only where it can matter (most runs end on an
/// approving review), so indexing reads one object fewer per run.
fn read_approvals(
    repo: &Repo,
    run_id: &RunId,
    tip: ObjectId,
    with_spend: bool,
) -> Result<(Approvals, Option<f64>), crate::store::Error> {
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
    Ok((list, spent))
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

fn push_unique(ids: &mut Vec<RunId>, id: RunId) {
    if !ids.contains(&id) {
        ids.push(id);
    }
}
