//! Reviewer processes alive on this machine, per dispatch: recorded as they start (in
//! `.git/pair/live/`, local and never shared: pids mean nothing elsewhere), so that a later
//! `review` resuming a dispatch whose `git pair` was killed first kills what it left running.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use crate::process::{OnStart, Started};
use crate::store::Repo;

/// The record of one dispatch's reviewer processes.
#[derive(Debug, Clone)]
pub struct Live {
    path: PathBuf,
}

impl Live {
    /// The record of dispatch `dispatch_id` of run `run_id`.
    pub fn new(repo: &Repo, run_id: &str, dispatch_id: &str) -> Live {
        Live {
            path: repo
                .pair_dir()
                .join("live")
                .join(format!("{run_id}-{dispatch_id}")),
        }
    }

    /// A callback that appends each started reviewer (`<pid> <start time>` per line).
    pub fn recorder(&self) -> OnStart {
        let path = self.path.clone();
        OnStart(Arc::new(move |started: Started| {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            if let Ok(mut file) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
            {
                let start = started.start_time.map_or("-".to_owned(), |t| t.to_string());
                let _ = writeln!(file, "{} {start}", started.pid);
            }
        }))
    }

    /// Kills every recorded reviewer process group still alive (the same process: same start
    /// time); returns how many were. The record is removed.
    pub fn kill_leftovers(&self) -> usize {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return 0;
        };
        let mut killed = 0;
        for line in text.lines() {
            let mut fields = line.split_whitespace();
            let Some(pid) = fields.next().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            let start = fields.next().and_then(|t| t.parse::<u64>().ok());
            if crate::process::kill_group_if_alive(pid, start) {
                killed += 1;
            }
        }
        let _ = std::fs::remove_file(&self.path);
        killed
    }

    /// Before re-dispatching `interrupted` (a dispatch whose `git pair` died): kills what it
    /// left running, so it never runs beside the new review (with a vendor CLI that is
    /// spend) nor answers after it, and says so through `progress`.
    pub fn stop_interrupted(
        repo: &Repo,
        run_id: &str,
        interrupted: &str,
        progress: &(dyn Fn(&str) + Sync),
    ) {
        let killed = Live::new(repo, run_id, interrupted).kill_leftovers();
        if killed > 0 {
            progress(&format!(
                "stopped {killed} reviewer process group(s) left running by the interrupted review"
            ));
        }
    }

    /// Forgets the record once the dispatch's outcome is stored.
    pub fn clear(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
