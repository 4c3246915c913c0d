//! The one fold that computes a manifest from records ([`Manifest::apply`]): one function per
//! record kind, each changing only what its record says, then `next_action` recomputed.

use super::next_action::Observed;
use super::{Manifest, Outcome, PendingReview, Role, RoundEntry, SessionSpend};
use crate::model::checkpoint::{
    Checkpoint, CheckpointArchived, CheckpointState, CheckpointVerified, LatestCheckpoint,
};
use crate::model::record::{
    Body, Coder, CostEntry, Finding, Finish, Record, Review, ReviewDispatch, SetSetting, Start,
    Verdict,
};
use crate::model::settings::{self, Setting};

impl Manifest {
    /// Projects `records` (in stored order: by seq, then file name) from scratch.
    pub fn project<'a>(records: impl IntoIterator<Item = &'a Record>) -> Self {
        let mut manifest = Manifest::empty();
        for record in records {
            manifest.apply(record);
        }
        manifest
    }

    /// Folds one record into the projection. The only place the projection is computed.
    pub fn apply(&mut self, record: &Record) {
        self.count(record);
        match &record.body {
            Body::Start(start) => self.apply_start(record, start),
            Body::Coder(coder) => self.apply_coder(record, coder),
            Body::ReviewDispatch(dispatch) => self.apply_dispatch(record, dispatch),
            Body::Review(review) => self.apply_review(record, review),
            Body::Cost(cost) => self.apply_cost(cost),
            Body::Finish(finish) => self.apply_finish(finish),
            Body::Pr {
                number,
                final_round,
            } => {
                self.pr = Some(*number);
                if *final_round && self.pr_round.is_none() {
                    self.pr_round = Some(super::PrRound {
                        number: *number,
                        reviewed: None,
                        dispatched: 0,
                        pending: None,
                    });
                }
            }
            Body::PrReview(review) => {
                if let Some(pr) = self.pr_round.as_mut().filter(|p| p.number == review.number) {
                    pr.reviewed = Some(super::PrReviewed {
                        round: review.round,
                        findings: review.findings.len(),
                    });
                    pr.answer(review.dispatch.as_deref());
                }
            }
            Body::PrDispatch(dispatch) => {
                if let Some(pr) = self
                    .pr_round
                    .as_mut()
                    .filter(|p| p.number == dispatch.number)
                {
                    pr.dispatched = pr.dispatched.max(dispatch.attempt);
                    // A newer dispatch stands for any older one left unanswered.
                    pr.pending = Some(PendingReview {
                        dispatch: record.id.clone(),
                        round: dispatch.dispatch.round,
                        at: record.at.clone(),
                        runner: dispatch.dispatch.runner.clone(),
                    });
                }
            }
            // Nothing was put on the PR: its final review is still due.
            Body::PrReviewFailed(failed) => {
                if let Some(pr) = self.pr_round.as_mut().filter(|p| p.number == failed.number) {
                    pr.answer(Some(&failed.dispatch));
                }
            }
            Body::Set(set) => self.apply_set(set),
            Body::Abandon(_) => self.close(None, false, true),
            Body::Checkpoint(checkpoint) => self.apply_checkpoint(checkpoint),
            Body::CheckpointVerified(verified) => self.apply_verified(verified),
            Body::CheckpointArchived(archived) => self.apply_archived(archived),
            Body::Compaction(_) => self.compactions = self.compactions.saturating_add(1),
            // A panel member's part is projected with the round's `review` record.
            Body::AllowSecret(_) | Body::ReviewMember(_) | Body::Unknown { .. } => {}
        }
        if matches!(record.body, Body::Coder(_) | Body::Review(_)) {
            self.fold_old_rounds();
        }
        self.next_action = self.next_action(Observed {
            budget_alert: self.stored_budget_alert(),
            review_running: false,
        });
    }

    /// Counts `record`, flagging it when it shares its position with the one before (written
    /// concurrently on two machines).
    fn count(&mut self, record: &Record) {
        if let Some(previous) = self
            .last_record
            .as_ref()
            .filter(|_| record.seq == self.last_seq && self.records > 0)
        {
            self.conflicts.push(format!(
                "{} and {} were recorded concurrently at position {}",
                previous,
                record.file_name(),
                record.seq
            ));
        }
        self.records += 1;
        self.last_seq = self.last_seq.max(record.seq);
        self.last_record = Some(record.file_name());
    }

    fn apply_start(&mut self, record: &Record, start: &Start) {
        self.run_id = start.run_id.clone();
        self.task = start.task.clone();
        self.cwd = start.cwd.clone();
        self.branch = start.branch.clone();
        self.base = start.base;
        self.coder = start.coder.clone();
        self.reviewer = start.reviewer.clone();
        self.max_rounds = start.max_rounds;
        self.budget_usd = start.budget_usd;
        self.claimed = start.claimed;
        self.carrier = start.carrier;
        if let Some(ratio) = start
            .config
            .get("pair.budgetWarnRatio")
            .and_then(serde_json::Value::as_f64)
        {
            self.budget_warn_ratio = ratio;
        }
        self.run_settings = start.flags.as_ref().map(|flags| {
            flags
                .iter()
                .filter_map(|key| Some((key.clone(), settings::run_value(self, key)?)))
                .collect()
        });
        self.created_at = record.at.clone();
    }

    /// A `coder-done`: adds to the open coder round, or opens the next one.
    fn apply_coder(&mut self, record: &Record, coder: &Coder) {
        if let Some(id) = &coder.session_id {
            self.register_session(id, "coder", &coder.tool);
        }
        let open = self.current_coder_round().filter(|&n| !self.is_reviewed(n));
        match open.and_then(|n| self.entry_mut(n, Role::Coder)) {
            Some(entry) => add_to_round(entry, record, coder),
            None => self.open_coder_round(record, coder),
        }
    }

    fn open_coder_round(&mut self, record: &Record, coder: &Coder) {
        let n = self.current_coder_round().unwrap_or(0) + 1;
        let started_at = self
            .rounds
            .last()
            .map(|e| e.ended_at.clone())
            .unwrap_or_else(|| self.created_at.clone());
        self.rounds.push(RoundEntry {
            n,
            role: Role::Coder,
            tool: coder.tool.clone(),
            session_id: coder.session_id.clone(),
            started_at,
            ended_at: record.at.clone(),
            findings: 0,
            findings_addressed: coder.findings_addressed,
            verdict: None,
            outcome: None,
            cost_usd: None,
            summaries: Some(1),
            open_findings_digest: None,
            partial: false,
        });
    }

    fn apply_dispatch(&mut self, record: &Record, dispatch: &ReviewDispatch) {
        self.pending_review = Some(PendingReview {
            dispatch: record.id.clone(),
            round: dispatch.round,
            at: record.at.clone(),
            runner: dispatch.runner.clone(),
        });
    }

    /// A review: answers its dispatch (if pending) and adds a reviewer round entry.
    fn apply_review(&mut self, record: &Record, review: &Review) {
        let answered = self
            .pending_review
            .as_ref()
            .filter(|p| p.dispatch == review.dispatch);
        let started_at = answered.map_or_else(|| record.at.clone(), |p| p.at.clone());
        if answered.is_some() {
            self.pending_review = None;
        }
        if review.fallback_used {
            self.reviewer_fallback = true;
        }
        // The run's reviewer is the one that ran (named as everywhere), until a `set` names
        // another. A run from before settings followed configuration keeps its own reviewer
        // setting in this field, so the field stays that setting there.
        if self.run_settings.is_some() && !review.tool.is_empty() {
            self.reviewer = review.tool.clone();
        }
        for attempt in &review.reviewers {
            if let Some(id) = &attempt.session_id {
                self.register_session(id, "reviewer", &attempt.tool);
                if let (Some(usd), Some(session)) = (
                    attempt.cost_usd.filter(|c| c.is_finite() && *c >= 0.0),
                    self.sessions.get_mut(id),
                ) {
                    session.reported_usd = Some(session.reported_usd.map_or(usd, |r| r.max(usd)));
                }
            }
        }
        let open_findings_digest = (review.verdict == Some(Verdict::ChangesRequested))
            .then(|| findings_digest(&review.findings));
        self.rounds.push(RoundEntry {
            n: review.round,
            role: Role::Reviewer,
            tool: review.tool.clone(),
            session_id: review.reviewers.iter().find_map(|r| r.session_id.clone()),
            started_at,
            ended_at: record.at.clone(),
            findings: u32::try_from(review.findings.len()).unwrap_or(u32::MAX),
            findings_addressed: None,
            verdict: review.verdict,
            outcome: Some(review.outcome.clone()),
            cost_usd: None,
            summaries: None,
            open_findings_digest,
            partial: review.is_partial(),
        });
    }

    /// A cost measurement: what a session spent since its last one counts, to the run and
    /// to the round it was measured in.
    fn apply_cost(&mut self, cost: &CostEntry) {
        let previous = self.sessions.get(&cost.session_id).map_or(0.0, |s| s.usd);
        // A lower figure means logs were lost since the last measurement: the stored one
        // stands.
        let growth = cost.usd - previous;
        if growth > 0.0 {
            self.add_spend(cost, growth);
        }
        // The unpriced tokens of a measurement that lost nothing replace the stored ones.
        if growth >= 0.0 {
            if !cost.unpriced.is_empty() {
                self.register_session(&cost.session_id, &cost.role, &cost.agent);
            }
            if let Some(session) = self.sessions.get_mut(&cost.session_id) {
                session.unpriced = cost.unpriced.clone();
            }
        }
    }

    fn add_spend(&mut self, cost: &CostEntry, growth: f64) {
        self.spent_usd += growth;
        let reported_usd = self
            .sessions
            .get(&cost.session_id)
            .and_then(|s| s.reported_usd);
        self.sessions.insert(
            cost.session_id.clone(),
            SessionSpend {
                role: cost.role.clone(),
                agent: cost.agent.clone(),
                usd: cost.usd,
                unpriced: cost.unpriced.clone(),
                reported_usd,
            },
        );
        let role = if cost.role == "reviewer" {
            Role::Reviewer
        } else {
            Role::Coder
        };
        if let Some(entry) = self.entry_mut(cost.round, role) {
            entry.cost_usd = Some(entry.cost_usd.unwrap_or(0.0) + growth);
        }
    }

    fn apply_finish(&mut self, finish: &Finish) {
        self.close(Some(finish.verdict), finish.override_, false);
        self.outcome.accepted_partial = finish.accept_partial;
        if finish.pr.is_some() {
            self.pr = finish.pr;
        }
    }

    /// Closes the run: finished with `verdict`, or abandoned.
    fn close(&mut self, verdict: Option<Verdict>, override_: bool, abandoned: bool) {
        self.outcome = Outcome {
            verdict,
            rounds: self.current_coder_round().unwrap_or(0),
            override_,
            abandoned,
            accepted_partial: false,
        };
    }

    /// `git pair set`: the run owns the setting from now on (a value), or hands it back to
    /// configuration (none).
    fn apply_set(&mut self, set: &SetSetting) {
        if self.run_settings.is_none() {
            // A run from before settings could follow configuration owns all of them; from
            // now on it records which.
            let owned = Setting::ALL
                .into_iter()
                .filter_map(|s| Some((s.name().to_owned(), s.run_value(self)?)))
                .collect();
            self.run_settings = Some(owned);
        }
        let owned = self.run_settings.get_or_insert_with(Default::default);
        match &set.value {
            Some(value) => {
                owned.insert(set.key.clone(), value.clone());
                settings::write_field(self, &set.key, value);
            }
            None => {
                owned.remove(&set.key);
            }
        }
    }

    fn apply_checkpoint(&mut self, checkpoint: &Checkpoint) {
        self.checkpoint = Some(LatestCheckpoint {
            id: checkpoint.checkpoint.clone(),
            assessment: checkpoint.assessment,
            state: CheckpointState::Unverified,
        });
    }

    fn apply_verified(&mut self, verified: &CheckpointVerified) {
        if let Some(latest) = self
            .checkpoint
            .as_mut()
            .filter(|c| c.id == verified.checkpoint)
        {
            latest.state = latest.state.after_verification(verified.result);
        }
    }

    /// Archiving a checkpoint retires the old context: compactions count from zero again.
    fn apply_archived(&mut self, archived: &CheckpointArchived) {
        if let Some(latest) = self
            .checkpoint
            .as_mut()
            .filter(|c| c.id == archived.checkpoint)
        {
            latest.state = CheckpointState::Archived;
        }
        self.compactions = 0;
    }

    /// Drops the round entries older than the window (the newest `round_window` round
    /// numbers), except the last two reviews with a verdict, which the loop's rules read
    /// (the last verdict, a stalled loop); counts what it drops in `rounds_folded`. A cost
    /// measured later for a dropped round counts to the run's spend only.
    fn fold_old_rounds(&mut self) {
        let Some(window) = self.round_window else {
            return;
        };
        let Some(newest) = self.rounds.iter().map(|e| e.n).max() else {
            return;
        };
        let floor = newest.saturating_sub(window);
        if self.rounds.iter().all(|e| e.n > floor) {
            return;
        }
        let verdicts: Vec<usize> = self
            .rounds
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, e)| e.role == Role::Reviewer && e.verdict.is_some())
            .map(|(i, _)| i)
            .take(2)
            .collect();
        let before = self.rounds.len();
        let mut i = 0;
        self.rounds.retain(|e| {
            let keep = e.n > floor || verdicts.contains(&i);
            i += 1;
            keep
        });
        let dropped = u32::try_from(before - self.rounds.len()).unwrap_or(u32::MAX);
        self.rounds_folded = self.rounds_folded.saturating_add(dropped);
    }

    fn entry_mut(&mut self, n: u32, role: Role) -> Option<&mut RoundEntry> {
        self.rounds
            .iter_mut()
            .rev()
            .find(|e| e.n == n && e.role == role)
    }
}

/// A further `coder-done` of an open round: counts its summary and what it addressed.
fn add_to_round(entry: &mut RoundEntry, record: &Record, coder: &Coder) {
    entry.ended_at = record.at.clone();
    entry.summaries = Some(entry.summaries.unwrap_or(1).saturating_add(1));
    // Saturating: a damaged record must not overflow the fold.
    if let Some(addressed) = coder.findings_addressed {
        entry.findings_addressed = Some(
            entry
                .findings_addressed
                .unwrap_or(0)
                .saturating_add(addressed),
        );
    }
    if entry.session_id.is_none() {
        entry.session_id = coder.session_id.clone();
    }
}

/// Every coder record of `records` (in stored order) with the round it belongs to.
pub fn coder_rounds(records: &[Record]) -> Vec<(u32, &Record, &Coder)> {
    let mut projection: Option<Manifest> = None;
    let mut out = Vec::new();
    for record in records {
        let needs_fold =
            projection.is_some() || matches!(&record.body, Body::Coder(c) if c.round.is_none());
        if needs_fold {
            // Only old records lack the round: fold from the start once one is met.
            let manifest = projection.get_or_insert_with(|| {
                Manifest::project(records.iter().take_while(|r| r.id != record.id))
            });
            manifest.apply(record);
        }
        if let Body::Coder(coder) = &record.body {
            let round = coder
                .round
                .or_else(|| projection.as_ref().and_then(Manifest::current_coder_round));
            out.push((round.unwrap_or(1), record, coder));
        }
    }
    out
}

/// A digest of findings that ignores numbering, case and whitespace, so the same open
/// findings reported twice compare equal.
fn findings_digest(findings: &[Finding]) -> String {
    let mut lines: Vec<String> = findings
        .iter()
        .map(|f| {
            let text = f.text.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("{}|{}", f.category.to_lowercase(), text.to_lowercase())
        })
        .collect();
    lines.sort();
    let mut hasher = sha1_smol::Sha1::new();
    for line in &lines {
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
    }
    let mut digest = hasher.digest().to_string();
    digest.truncate(16);
    digest
}
