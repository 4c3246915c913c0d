//! Run summaries: what listing runs and choosing the active one need of each run (branch,
//! finished or not, task, round, `next_action`), cached in `.git/pair/cache/runs-v3.jsonl` keyed
//! by each run's tip. Only runs whose tip moved since the cache was written are read again,
//! so listing 10,000 runs reads one file and the packed refs, not 10,000 manifests. The cache
//! is a view: rebuildable from the refs, ignored when unreadable, rewritten atomically.

use std::collections::HashMap;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Error, Repo};
use crate::model::{Manifest, NextAction, RunId, Verdict};

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
    fn of(run_id: &RunId, tip: ObjectId, m: &Manifest) -> RunSummary {
        RunSummary {
            run_id: run_id.clone(),
            tip: tip.to_string(),
            branch: m.branch.clone(),
            task: m.task.clone(),
            finished: m.is_finished(),
            round: m.current_coder_round().unwrap_or(0),
            max_rounds: m.max_rounds,
            next_action: m.next_action,
            verdict: m.outcome.verdict,
            created_at: m.created_at.clone(),
            claimed: m.claimed,
            cwd: m.cwd.clone(),
            carrier: m.carrier,
        }
    }
}

/// Named for the summary's shape: a cache written by a version whose summaries lacked a field
/// is another file, never read as this one.
const CACHE_FILE: &str = "runs-v3.jsonl";

/// Every readable run's summary, and the runs that cannot be read.
#[derive(Debug, Clone, Default)]
pub struct Summaries {
    /// Oldest first.
    pub runs: Vec<RunSummary>,
    /// Runs whose tip is not a commit holding a manifest that parses, with why: skipped by
    /// every listing and selection (never fatal for the others), never cached.
    pub malformed: Vec<(RunId, String)>,
}

impl Repo {
    /// Every run's summary, oldest first (ids sort by creation). Manifests are read only for
    /// runs whose tip is not the one cached. A run that cannot be read is set aside in
    /// [`Summaries::malformed`].
    pub fn run_summaries(&self) -> Result<Summaries, Error> {
        let tips = self.run_tips()?;
        let path = self.pair_dir().join("cache").join(CACHE_FILE);
        let mut cached: HashMap<RunId, RunSummary> = std::fs::read(&path)
            .map(|bytes| {
                bytes
                    .split(|b| *b == b'\n')
                    .filter_map(|line| serde_json::from_slice::<RunSummary>(line).ok())
                    .map(|s| (s.run_id.clone(), s))
                    .collect()
            })
            .unwrap_or_default();
        let mut changed = cached.len() != tips.len();
        let mut out = Vec::with_capacity(tips.len());
        let mut malformed = Vec::new();
        for (run_id, tip) in tips {
            match cached.remove(&run_id).filter(|s| tip == s.tip) {
                Some(summary) => out.push(summary),
                None => {
                    changed = true;
                    match self.load_at(&run_id, tip) {
                        Ok(state) => out.push(RunSummary::of(&run_id, tip, &state.manifest)),
                        Err(err) => malformed.push((
                            run_id,
                            crate::util::first_line_clipped(&err.to_string(), 300),
                        )),
                    }
                }
            }
        }
        if changed {
            let mut bytes = Vec::with_capacity(out.len() * 200);
            for summary in &out {
                if serde_json::to_writer(&mut bytes, summary).is_ok() {
                    bytes.push(b'\n');
                }
            }
            // A view: failing to write it costs speed next time, nothing else.
            let _ =
                crate::util::fs::write_atomically_via(&self.pair_dir().join("tmp"), &path, &bytes);
        }
        Ok(Summaries {
            runs: out,
            malformed,
        })
    }
}
