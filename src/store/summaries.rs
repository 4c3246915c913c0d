//! Run summaries: what listing runs and choosing the active one need of each run (branch,
//! finished or not, task, round, `next_action`), cached in `.git/pair/cache/runs-v3.jsonl` keyed
//! by each run's tip. Only runs whose tip moved since the cache was written are read again,
//! so listing 10,000 runs reads one file and the packed refs, not 10,000 manifests. The cache
//! is a view: rebuildable from the refs, ignored when unreadable, rewritten atomically.

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Error, Repo};
use crate::model::{CarriedSummary, Manifest, NextAction, Role, RunId, Verdict};

/// One run as `list` and run selection see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub run_id: RunId,
    /// The tip this summary was read from (hex).
    pub tip: String,
    pub branch: String,
    pub task: String,
    pub finished: bool,
    /// The highest coder round.
    pub round: u32,
    pub max_rounds: u32,
    /// As the stored projection says (live facts — spend, a running review — are the
    /// command's to add).
    pub next_action: NextAction,
    /// The outcome's verdict, once finished.
    pub verdict: Option<Verdict>,
    pub created_at: String,
    /// The manifest's `claimed` (see [`Manifest::claimed`]).
    pub claimed: bool,
    /// The work tree the run was started in.
    pub cwd: String,
    /// The run only carries a checkpoint (see [`Manifest::carrier`]).
    #[serde(default)]
    pub carrier: bool,
}

impl RunSummary {
    /// The summary a run's tip commit `tip` carries (see [`CarriedSummary`]).
    fn carried(run_id: &RunId, tip: ObjectId, s: CarriedSummary) -> RunSummary {
        RunSummary {
            run_id: run_id.clone(),
            tip: tip.to_string(),
            branch: s.branch,
            task: s.task,
            finished: s.finished,
            round: s.round,
            max_rounds: s.max_rounds,
            next_action: s.next_action,
            verdict: s.verdict,
            created_at: s.created_at,
            claimed: s.claimed,
            cwd: s.cwd,
            carrier: s.carrier,
        }
    }

    /// The summary of manifest `m` (what its commit carries).
    fn of(run_id: &RunId, tip: ObjectId, m: &Manifest) -> RunSummary {
        RunSummary::carried(run_id, tip, CarriedSummary::of(m))
    }
}

/// Named for the summary's shape: a cache written by a version whose summaries lacked a field
/// is another file, never read as this one.
const CACHE_FILE: &str = "runs-v3.jsonl";

/// The ids of the runs whose start record does not claim them (started by a version before
/// runs had owners), one a line: written with the summaries, so choosing the active run
/// finds them without listing every run. Removed when a pull creates runs (one of them may
/// be such a run); rebuilt by the next full listing.
const UNCLAIMED_FILE: &str = "unclaimed-v1";

/// Every readable run's summary, and the runs that cannot be read.
#[derive(Debug, Clone, Default)]
pub struct Summaries {
    /// Oldest first.
    pub runs: Vec<RunSummary>,
    /// Runs whose tip is not a commit holding a manifest that parses, with why: skipped by
    /// every listing and selection (never fatal for the others), never cached.
    pub malformed: Vec<(RunId, String)>,
}

/// One run as a listing meets it, newest first.
#[derive(Debug, Clone)]
pub enum Listed {
    Run(RunSummary),
    /// A run that cannot be read, with why.
    Malformed(RunId, String),
}

/// Up to how many runs a limited listing reads directly, without the cache file.
const READ_DIRECTLY_UP_TO: usize = 64;
/// How many missing summaries are read at a time (on a few threads).
const LOAD_BATCH: usize = 4096;

impl Repo {
    /// Every run's summary, oldest first (ids sort by creation). Manifests are read only for
    /// runs whose tip is not the one cached. A run that cannot be read is set aside in
    /// [`Summaries::malformed`]. Holds every summary: a listing streams with
    /// [`Repo::each_run_summary`] instead.
    pub fn run_summaries(&self) -> Result<Summaries, Error> {
        let mut out = Summaries::default();
        self.each_run_summary(None, &mut |listed| {
            match listed {
                Listed::Run(summary) => out.runs.push(summary),
                Listed::Malformed(run_id, reason) => out.malformed.push((run_id, reason)),
            }
            Ok(true)
        })?;
        out.runs.reverse();
        out.malformed.reverse();
        Ok(out)
    }

    /// Hands each run's summary to `visit`, newest first, the newest `limit` only when given,
    /// until `visit` says stop (`false`). Holds no more than the cache file's bytes and the
    /// summaries it must read again: the cached ones are parsed one at a time as they are
    /// handed over. A small `limit` reads those runs directly and leaves the cache alone.
    pub fn each_run_summary(
        &self,
        limit: Option<usize>,
        visit: &mut dyn FnMut(Listed) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        if let Some(n) = limit.filter(|n| *n <= READ_DIRECTLY_UP_TO) {
            for (run_id, tip) in self.newest_run_tips(n)?.into_iter().rev() {
                if !visit(self.summary_at(&run_id, tip))? {
                    break;
                }
            }
            return Ok(());
        }
        let tips: Vec<(RunId, ObjectId)> = match limit {
            Some(n) => self.newest_run_tips(n)?,
            None => self.run_tips()?.into_iter().collect(),
        };
        let complete = limit.is_none_or(|n| n >= tips.len());
        let cache_dir = self.pair_dir().join("cache");
        let path = cache_dir.join(CACHE_FILE);
        let bytes = std::fs::read(&path).unwrap_or_default();
        let cached = cached_lines(&bytes, &tips);
        // A full listing also drops the lines of runs that are gone.
        let mut changed = complete
            && bytes
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .count()
                != cached.iter().flatten().count();
        // The summaries to read again, newest first, a batch at a time (each batch on a few
        // threads), so a cold listing neither waits for every manifest before printing nor
        // holds them all.
        // The lines of the summaries read again, one after another in `fresh_bytes` (a line
        // apiece would more than double what 100,000 of them hold), where each run's starts.
        let mut fresh_bytes: Vec<u8> = Vec::new();
        let mut fresh: Vec<Option<(usize, usize)>> = vec![None; tips.len()];
        let mut unclaimed: Vec<&RunId> = Vec::new();
        let mut stopped = false;
        let mut next = tips.len();
        while next > 0 && !stopped {
            let from = next.saturating_sub(LOAD_BATCH);
            let missing: Vec<usize> = (from..next).filter(|i| cached[*i].is_none()).collect();
            let loaded = self.map_parallel(&missing, |repo, i| {
                let (run_id, tip) = &tips[*i];
                Ok(repo.summary_at(run_id, *tip))
            })?;
            let mut loaded = missing.iter().zip(loaded).rev();
            for i in (from..next).rev() {
                let listed = match cached[i] {
                    Some(line) => match serde_json::from_slice::<RunSummary>(line) {
                        Ok(summary) => Listed::Run(summary),
                        Err(_) => {
                            changed = true;
                            self.summary_at(&tips[i].0, tips[i].1)
                        }
                    },
                    None => {
                        changed = true;
                        match loaded.next() {
                            Some((j, listed)) if *j == i => listed,
                            _ => self.summary_at(&tips[i].0, tips[i].1),
                        }
                    }
                };
                if let Listed::Run(summary) = &listed {
                    if !summary.claimed {
                        unclaimed.push(&tips[i].0);
                    }
                    if cached[i].is_none() {
                        let start = fresh_bytes.len();
                        if serde_json::to_writer(&mut fresh_bytes, summary).is_ok() {
                            fresh[i] = Some((start, fresh_bytes.len()));
                        } else {
                            fresh_bytes.truncate(start);
                        }
                    }
                }
                if !visit(listed)? {
                    stopped = true;
                    break;
                }
            }
            next = from;
        }
        let tmp = self.pair_dir().join("tmp");
        let unclaimed_path = cache_dir.join(UNCLAIMED_FILE);
        if complete && !stopped && (changed || !unclaimed_path.exists()) {
            let mut ids = String::new();
            for run_id in unclaimed.iter().rev() {
                ids.push_str(run_id.as_str());
                ids.push('\n');
            }
            // A view like the summaries (rebuilt when missing).
            let _ = crate::util::fs::write_atomically_via(&tmp, &unclaimed_path, ids.as_bytes());
        }
        if changed {
            // Oldest first, as the tips sort: the next listing joins them in one pass. Runs
            // not reached (a limited listing) keep their valid lines, and the rest of the
            // old file is kept when only the newest runs were listed.
            // Streamed into the file, not built beside what it is built from.
            let fill = |out: &mut dyn std::io::Write| -> std::io::Result<()> {
                if !complete {
                    let first = tips.first().map(|(id, _)| id.as_str().as_bytes());
                    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                        if line_run_id(line).is_some_and(|id| first.is_some_and(|f| id < f)) {
                            out.write_all(line)?;
                            out.write_all(b"\n")?;
                        }
                    }
                }
                for (line, new) in cached.iter().zip(&fresh) {
                    let new = new.map(|(start, end)| &fresh_bytes[start..end]);
                    if let Some(line) = line.or(new) {
                        out.write_all(line)?;
                        out.write_all(b"\n")?;
                    }
                }
                Ok(())
            };
            // A view: failing to write it costs speed next time, nothing else.
            let _ = crate::util::fs::write_atomically_with(&tmp, &path, &fill);
        }
        Ok(())
    }

    /// The summary of run `run_id` at `tip`, read from its manifest (not kept in this
    /// handle's manifest cache: a listing reads each once).
    fn summary_at(&self, run_id: &RunId, tip: ObjectId) -> Listed {
        let known = self.is_loaded(tip);
        if !known && let Some(summary) = self.summary_from_head(run_id, tip) {
            return Listed::Run(summary);
        }
        let listed = match self.load_at(run_id, tip) {
            Ok(state) => Listed::Run(RunSummary::of(run_id, tip, &state.manifest)),
            Err(err) => Listed::Malformed(
                run_id.clone(),
                crate::util::first_line_clipped(&err.to_string(), 300),
            ),
        };
        if !known {
            self.manifests.borrow_mut().remove(&tip);
        }
        listed
    }
}

impl Repo {
    /// The summary of run `run_id` at `tip` read the short way: the tip commit's
    /// [`CarriedSummary`] when it has one; otherwise (a commit an older version wrote) its
    /// tree once, and only the fields a summary needs of the stored manifest (rounds reduced
    /// to their number and role; no whole projection built). Only a manifest stamped with the
    /// tree's own records (as [`Repo::load_at`] would take it) is read so; anything else — no
    /// stamp, another stamp, no manifest, too large, not parsing — is `None`, left to the
    /// careful reading.
    fn summary_from_head(&self, run_id: &RunId, tip: ObjectId) -> Option<RunSummary> {
        let commit = self.repo.find_commit(tip).ok()?;
        if let Some(carried) = CarriedSummary::in_message(commit.message_raw_sloppy()) {
            return Some(RunSummary::carried(run_id, tip, carried));
        }
        let tree = commit.tree_id().ok()?.detach();
        let (manifest, records) = self.manifest_and_records_ids(tree).ok()?;
        let bytes = self
            .blob_within(manifest?, super::runs::MAX_MANIFEST_BYTES)
            .ok()?
            .ok()?;
        summary_of_head(run_id, tip, &bytes, records?)
    }
}

/// The summary that `manifest.json` (`bytes`) gives of run `run_id` at `tip`, when it parses
/// and is stamped with `records`, the tree's own records.
fn summary_of_head(
    run_id: &RunId,
    tip: ObjectId,
    bytes: &[u8],
    records: ObjectId,
) -> Option<RunSummary> {
    let head: ManifestHead = serde_json::from_slice(bytes).ok()?;
    // Compared as text, as [`Repo::load_at`] compares it.
    let mut hex = [0u8; 40];
    if head.records_tree?.as_bytes() != records.hex_to_buf(&mut hex[..]).as_bytes() {
        return None;
    }
    Some(RunSummary {
        run_id: run_id.clone(),
        tip: tip.to_string(),
        finished: head.outcome.verdict.is_some() || head.outcome.abandoned,
        round: head
            .rounds
            .iter()
            .rev()
            .find(|r| r.role == Role::Coder)
            .map_or(0, |r| r.n),
        branch: head.branch,
        task: head.task,
        max_rounds: head.max_rounds,
        next_action: head.next_action,
        verdict: head.outcome.verdict,
        created_at: head.created_at,
        claimed: head.claimed,
        cwd: head.cwd,
        carrier: head.carrier,
    })
}

/// What a summary needs of `manifest.json` (the same names and types as [`Manifest`]'s;
/// everything else skipped unread).
#[derive(Deserialize)]
struct ManifestHead {
    task: String,
    cwd: String,
    branch: String,
    max_rounds: u32,
    created_at: String,
    rounds: Vec<RoundHead>,
    outcome: OutcomeHead,
    next_action: NextAction,
    #[serde(default)]
    claimed: bool,
    #[serde(default)]
    carrier: bool,
    #[serde(default)]
    records_tree: Option<String>,
}

#[derive(Deserialize)]
struct RoundHead {
    n: u32,
    role: Role,
}

#[derive(Deserialize)]
struct OutcomeHead {
    verdict: Option<Verdict>,
    #[serde(default)]
    abandoned: bool,
}

/// The run id a cache line starts with (`{"run_id":"<id>","tip":"<hex>",…`), unparsed.
fn line_run_id(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(br#"{"run_id":""#)?;
    let end = rest.iter().position(|b| *b == b'"')?;
    Some(&rest[..end])
}

/// For each tip (oldest first), the cache line holding its summary at that tip, when there
/// is one: the file is written in the tips' order, so one backwards walk joins them. A line
/// out of order or for another tip is not used (the run is read again).
fn cached_lines<'a>(bytes: &'a [u8], tips: &[(RunId, ObjectId)]) -> Vec<Option<&'a [u8]>> {
    let mut out = vec![None; tips.len()];
    let mut lines = bytes
        .rsplit(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|line| Some((line_run_id(line)?, line)))
        .peekable();
    let mut hex = [0u8; 40];
    for (i, (run_id, tip)) in tips.iter().enumerate().rev() {
        let id = run_id.as_str().as_bytes();
        while lines.peek().is_some_and(|(line_id, _)| *line_id > id) {
            lines.next();
        }
        let Some((line_id, line)) = lines.peek() else {
            break;
        };
        if *line_id != id {
            continue;
        }
        let tip_hex = tip.hex_to_buf(&mut hex[..]).as_bytes();
        let wanted_tail = [br#"","tip":""#.as_slice(), tip_hex, b"\""].concat();
        if line[br#"{"run_id":""#.len() + id.len()..].starts_with(&wanted_tail) {
            out[i] = Some(*line);
        }
        lines.next();
    }
    out
}

impl Repo {
    /// The runs whose start record does not claim them (see [`Manifest::claimed`]), oldest
    /// first, from the index the summaries keep; when it is missing, every run is listed
    /// once to rebuild it. Ids that no longer name a run may be among them.
    pub fn unclaimed_runs(&self) -> Result<Vec<RunId>, Error> {
        let path = self.pair_dir().join("cache").join(UNCLAIMED_FILE);
        if let Ok(text) = std::fs::read_to_string(&path) {
            let ids: Option<Vec<RunId>> = text.lines().map(|l| RunId::parse(l).ok()).collect();
            if let Some(ids) = ids {
                return Ok(ids);
            }
        }
        Ok(self
            .run_summaries()?
            .runs
            .into_iter()
            .filter(|s| !s.claimed)
            .map(|s| s.run_id)
            .collect())
    }

    /// Whether this handle remembers the run state at `tip`.
    pub fn is_loaded(&self, tip: ObjectId) -> bool {
        self.manifests.borrow().contains_key(&tip)
    }

    /// Drops what this handle remembers of the run state at `tip` (its manifest), for a pass
    /// over many runs that reads each once (a push's scan) and must not hold them all.
    pub fn forget_loaded(&self, tip: ObjectId) {
        self.manifests.borrow_mut().remove(&tip);
    }

    /// Forgets the index of unclaimed runs (runs arrived that may be such runs): the next
    /// [`Repo::unclaimed_runs`] rebuilds it.
    pub fn forget_unclaimed_runs(&self) {
        let _ = std::fs::remove_file(self.pair_dir().join("cache").join(UNCLAIMED_FILE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(byte: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[byte; 20])
    }

    fn line(run: &str, tip: ObjectId) -> String {
        format!(r#"{{"run_id":"{run}","tip":"{tip}","branch":"main"}}"#)
    }

    /// A stored manifest as git pair writes it (one of the benchmark fixture's).
    const STORED: &str = include_str!("../../fixtures/manifests/stored.json");

    #[test]
    fn the_short_reading_of_a_manifest_agrees_with_the_whole_one() {
        let run_id = RunId::parse("20250101-105645-826423").expect("id");
        let stamp = oid(1);
        let base: serde_json::Value = serde_json::from_str(STORED).expect("json");
        let variants: [fn(&mut serde_json::Value); 4] = [
            |_| {},
            |m| {
                m["outcome"] = serde_json::json!({"verdict": null, "rounds": 0,
                    "override": false, "abandoned": true});
                m["claimed"] = false.into();
            },
            |m| {
                m["outcome"]["verdict"] = serde_json::Value::Null;
                m["next_action"] = "review".into();
                m["carrier"] = true.into();
                let mut later = m["rounds"][0].clone();
                later["n"] = 2.into();
                m["rounds"].as_array_mut().expect("rounds").push(later);
            },
            |m| {
                m["rounds"] = serde_json::json!([]);
                m.as_object_mut().expect("object").remove("claimed");
                m["next_action"] = "code".into();
            },
        ];
        for (i, change) in variants.iter().enumerate() {
            let mut value = base.clone();
            change(&mut value);
            let bytes = serde_json::to_vec(&value).expect("bytes");
            let whole: Manifest = serde_json::from_slice(&bytes).expect("manifest");
            assert_eq!(
                summary_of_head(&run_id, oid(2), &bytes, stamp),
                Some(RunSummary::of(&run_id, oid(2), &whole)),
                "variant {i}"
            );
        }
        // Another stamp, no stamp, or no parse: left to the careful reading.
        let bytes = STORED.as_bytes();
        assert_eq!(summary_of_head(&run_id, oid(2), bytes, oid(3)), None);
        let mut unstamped = base.clone();
        unstamped
            .as_object_mut()
            .expect("object")
            .remove("records_tree");
        let unstamped = serde_json::to_vec(&unstamped).expect("bytes");
        assert_eq!(summary_of_head(&run_id, oid(2), &unstamped, stamp), None);
        assert_eq!(summary_of_head(&run_id, oid(2), &bytes[..100], stamp), None);
    }

    #[test]
    fn the_summary_a_commit_carries_is_its_manifests() {
        let run_id = RunId::parse("20250101-105645-826423").expect("id");
        let mut manifest: Manifest = serde_json::from_str(STORED).expect("manifest");
        for (carrier, claimed) in [(false, true), (true, false)] {
            manifest.carrier = carrier;
            manifest.claimed = claimed;
            let message = format!("s\n\nPair-Run: {run_id}\n{}", manifest.summary_trailer());
            let carried = CarriedSummary::in_message(message.as_bytes()).expect("carried");
            assert_eq!(
                RunSummary::carried(&run_id, oid(3), carried),
                RunSummary::of(&run_id, oid(3), &manifest)
            );
        }
    }

    #[test]
    fn cache_lines_join_the_tips_in_one_pass_and_only_at_the_same_tip() {
        let ids: Vec<RunId> = [
            "20260101-000001-aaaaaa",
            "20260101-000002-bbbbbb",
            "20260101-000003-cccccc",
            "20260101-000004-dddddd",
        ]
        .iter()
        .map(|s| RunId::parse(s).expect("id"))
        .collect();
        let tips: Vec<(RunId, ObjectId)> = ids
            .iter()
            .cloned()
            .zip([oid(1), oid(2), oid(3), oid(4)])
            .collect();
        // Run 1 cached at its tip, run 2 at an older tip, run 3 not at all, run 4 cached;
        // a line of a run that is gone sorts between them, and one is not a summary.
        let text = [
            line(ids[0].as_str(), oid(1)),
            line(ids[1].as_str(), oid(9)),
            line("20260101-000003-000000", oid(7)),
            "garbage".to_owned(),
            line(ids[3].as_str(), oid(4)),
        ]
        .join("\n");
        let joined = cached_lines(text.as_bytes(), &tips);
        let hit: Vec<bool> = joined.iter().map(Option::is_some).collect();
        assert_eq!(hit, [true, false, false, true]);
        assert_eq!(joined[3], Some(line(ids[3].as_str(), oid(4)).as_bytes()));
        // Out of order (an older version's file): what cannot be joined is read again.
        let reversed = [line(ids[3].as_str(), oid(4)), line(ids[0].as_str(), oid(1))].join("\n");
        let joined = cached_lines(reversed.as_bytes(), &tips);
        assert_eq!(joined.iter().filter(|l| l.is_some()).count(), 1);
        assert!(cached_lines(b"", &tips).iter().all(Option::is_none));
    }
}
