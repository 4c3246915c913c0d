//! Whether a run's approval is consistent with its own records and material (SPEC §9), and
//! the `Pair-Approvals:` trailer that carries those checks from commit to commit: made once,
//! by the writer of the commit that brings the approval, so `verify` reads a run's tip alone.

use std::sync::OnceLock;

use gix::ObjectId;

use super::layout::record_kind;
use super::{Error, Material, Repo};
use crate::model::{Approval, Body, CarriedApprovals, Record, RunId, Verdict};
use crate::review::parse::{Parsed, parse_answer};

/// The fingerprint of the rules an approval is checked under: the source of the answer
/// parser, of the fold that says what a run approves, of the records it reads and of these
/// checks. Any change to them (a parser fix that stops reading a quoted verdict as one) gives
/// another fingerprint, and every trailer checked under the old one is read as unchecked:
/// `verify` reads that run's records and checks again under today's rules. A file's tests
/// (from its `#[cfg(test)]` module on) are not part of it.
pub fn rules() -> &'static str {
    static RULES: OnceLock<String> = OnceLock::new();
    RULES.get_or_init(|| {
        let mut hash = sha1_smol::Sha1::new();
        for source in [
            include_str!("../review/parse.rs"),
            include_str!("../review/schema.rs"),
            include_str!("../model/approval.rs"),
            include_str!("../model/carried_approvals.rs"),
            include_str!("../model/record.rs"),
            include_str!("approval_checks.rs"),
        ] {
            let code = source.split("\n#[cfg(test)]\n").next().unwrap_or(source);
            hash.update(&(code.len() as u64).to_le_bytes());
            hash.update(code.as_bytes());
        }
        hash.digest().to_string()[..16].to_owned()
    })
}

/// Whether approval `a` is consistent with the run's own records and material: its review's
/// dispatch record (`dispatch`: its round and snapshot, `None` when there is none) is of the
/// same round and snapshot, the snapshot stored for that round in the run tree `tree` is the
/// tree approved, and, for a review that said APPROVED, it carries no blocking finding and
/// each approving reviewer's stored answers read APPROVED under today's parser. `Err`: why
/// not, for the report.
pub fn consistency_of(
    repo: &Repo,
    a: &Approval,
    dispatch: Option<(u32, ObjectId)>,
    tree: ObjectId,
) -> Result<(), String> {
    let snapshot = ObjectId::from(a.snapshot);
    match dispatch {
        None => {
            return Err(format!(
                "its review of round {} has no dispatch record",
                a.round
            ));
        }
        Some((round, dispatched)) if round != a.round || dispatched != snapshot => {
            return Err(format!(
                "its review of round {} names a dispatch of another round or snapshot",
                a.round
            ));
        }
        Some(_) => {}
    }
    let stored = repo
        .entry_at(tree, &Material::Snapshot.path(a.round))
        .map_err(|e| e.to_string())?;
    if stored.map(|(id, _)| id) != Some(snapshot) {
        return Err(format!(
            "the snapshot stored for round {} is not the tree approved",
            a.round
        ));
    }
    if !a.review_approved {
        // A `--force` finish on a review that did not approve: an override, shown as
        // `forced`; there is no approving answer to read.
        return Ok(());
    }
    if let Some(n) = a.blocking_finding {
        return Err(format!(
            "its review of round {} carries a blocking finding (#{n})",
            a.round
        ));
    }
    let attempts = repo
        .blob_at(tree, &Material::Attempts.path(a.round))
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("round {} has no stored attempts", a.round))?;
    stored_answers_approve(&attempts, &a.approvers, a.round)
}

/// Whether the stored attempts of a round (`attempts.json`: `[{reviewer, attempt: {answer,
/// …}}]`) hold, for each of `approvers`, at least one answer that today's parser reads as
/// APPROVED with no blocking finding, and none that it reads as anything else.
fn stored_answers_approve(attempts: &[u8], approvers: &[String], round: u32) -> Result<(), String> {
    #[derive(serde::Deserialize)]
    struct Entry {
        reviewer: String,
        attempt: Stored,
    }
    #[derive(serde::Deserialize)]
    struct Stored {
        answer: Option<String>,
    }
    let entries: Vec<Entry> = serde_json::from_slice(attempts)
        .map_err(|e| format!("the attempts stored for round {round} do not parse: {e}"))?;
    if approvers.is_empty() {
        return Err(format!(
            "no reviewer of its review of round {round} answered APPROVED"
        ));
    }
    for approver in approvers {
        let mut approved = false;
        let mut any = false;
        for entry in entries.iter().filter(|e| &e.reviewer == approver) {
            any = true;
            let Some(answer) = &entry.attempt.answer else {
                continue;
            };
            match parse_answer(answer.as_bytes()) {
                Parsed::Verdict {
                    verdict: Verdict::Approved,
                    findings,
                    ..
                } => {
                    if let Some(f) = findings.iter().find(|f| f.blocks_approval()) {
                        return Err(format!(
                            "{approver}'s stored answer in round {round} carries a blocking finding (#{})",
                            f.n
                        ));
                    }
                    approved = true;
                }
                Parsed::Verdict { verdict, .. } => {
                    return Err(format!(
                        "{approver}'s stored answer in round {round} reads {}",
                        verdict.as_str()
                    ));
                }
                Parsed::NoVerdict { .. } => {}
            }
        }
        if !any {
            return Err(format!("round {round} stores no attempt of {approver}"));
        }
        if !approved {
            return Err(format!(
                "{approver}'s stored answer in round {round} does not read as APPROVED under today's rules"
            ));
        }
    }
    Ok(())
}

/// What a new run commit's [`CarriedApprovals`] are made from.
pub(crate) enum Carry<'a> {
    /// Its parent's (`None`: the parent carries none), the parent's tree and its new
    /// records: the parent's, stepped, when made under today's rules by a commit whose tree
    /// it names (a forged commit that kept an honest message passes nothing on); otherwise
    /// every record, read.
    From(Option<CarriedApprovals>, ObjectId, &'a [Record]),
    /// Every record of the run, at hand.
    All(&'a [Record]),
    /// Every record of the run, read from the commit's tree.
    Read,
}

impl Repo {
    /// The approvals carried by the message of run commit `commit`, if it carries them.
    pub fn carried_approvals(&self, commit: ObjectId) -> Result<Option<CarriedApprovals>, Error> {
        Ok(self.tip_approvals(commit)?.1)
    }

    /// The tree of run commit `commit`, and the approvals its message carries.
    pub fn tip_approvals(
        &self,
        commit: ObjectId,
    ) -> Result<(ObjectId, Option<CarriedApprovals>), Error> {
        let (commit, tree) = self.commit_and_tree(commit)?;
        Ok((
            tree,
            CarriedApprovals::in_message(commit.message_raw_sloppy()),
        ))
    }

    /// What the commit of run `run_id` whose tree is `tree` carries (see [`Carry`]), each
    /// approval not checked yet checked against `tree`, and the spend set. `None`: the run
    /// has no start record, or its records cannot be read (the commit carries nothing, and
    /// `verify` reads the records).
    pub(crate) fn carry_approvals(
        &self,
        run_id: &RunId,
        tree: ObjectId,
        carry: Carry<'_>,
        spent_usd: f64,
    ) -> Option<CarriedApprovals> {
        let read;
        let all = match carry {
            Carry::From(Some(mut carried), parent_tree, records)
                if carried.made_under(rules(), parent_tree.into()) =>
            {
                carried.step(records);
                return self.checked(run_id, tree, carried, spent_usd);
            }
            Carry::From(..) | Carry::Read => {
                read = self.records_in_tree(run_id, tree).ok()?;
                &read
            }
            Carry::All(records) => records,
        };
        let carried = CarriedApprovals::of_records(rules(), all)?;
        self.checked(run_id, tree, carried, spent_usd)
    }

    fn checked(
        &self,
        run_id: &RunId,
        tree: ObjectId,
        mut carried: CarriedApprovals,
        spent_usd: f64,
    ) -> Option<CarriedApprovals> {
        for (index, approval) in carried.unchecked() {
            let dispatch = self
                .dispatch_record(run_id, tree, &approval.dispatch)
                .ok()?;
            carried.set_check(index, consistency_of(self, &approval, dispatch, tree));
        }
        carried.set_spend(spent_usd);
        carried.set_tree(tree.into());
        Some(carried)
    }

    /// The round and snapshot of the dispatch record `id` of the run tree `tree`, newest
    /// first (a review's dispatch is usually among the last records).
    fn dispatch_record(
        &self,
        run_id: &RunId,
        tree: ObjectId,
        id: &str,
    ) -> Result<Option<(u32, ObjectId)>, Error> {
        let suffix = format!("-{id}.json");
        let mut newest = self.records_newest_first_in(run_id, tree)?;
        while let Some((name, oid)) = newest.next_entry()? {
            if record_kind(&name) != Some("review-dispatch") || !name.ends_with(&suffix) {
                continue;
            }
            let record = self.read_record(run_id, &name, oid)?;
            if let Body::ReviewDispatch(d) = record.body
                && record.id == id
            {
                return Ok(Some((d.round, d.snapshot.into())));
            }
        }
        Ok(None)
    }
}
