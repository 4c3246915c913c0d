//! What every repository command needs: the opened repository, the configuration in force,
//! and the run the command acts on.

use std::path::PathBuf;

use super::{Cli, CommandError};
use crate::config::Options;
use crate::model::RunId;
use crate::store::{Repo, RunState};

/// The opened repository and settings for one invocation.
pub struct Context {
    pub repo: Repo,
    pub options: Options,
    run_flag: Option<String>,
}

impl Context {
    /// Opens the repository at `-C` (or the current directory) and reads `pair.*` config.
    pub fn open(cli: &Cli) -> Result<Context, CommandError> {
        let mut dir = std::env::current_dir()
            .map_err(|e| CommandError::failed(format!("cannot read the current directory: {e}")))?;
        for d in &cli.directory {
            dir = dir.join(d);
        }
        if !dir.is_dir() {
            return Err(CommandError::failed(format!(
                "cannot change to '{}': no such directory",
                dir.display()
            )));
        }
        let repo = Repo::discover(&dir)?;
        let options = Options::from_lookup(|key| repo.config_occurrences(key))?;
        Ok(Context {
            repo,
            options,
            run_flag: cli.run.clone(),
        })
    }

    /// The run named by `explicit` (a positional argument), else `--run`, else the newest
    /// unfinished run on the current branch.
    pub fn run_id(&self, explicit: Option<&str>) -> Result<RunId, CommandError> {
        if let Some(id) = explicit.or(self.run_flag.as_deref()) {
            let id = RunId::parse(id)?;
            if self.repo.run_tip(&id)?.is_none() {
                return Err(crate::store::Error::UnknownRun {
                    run_id: id.to_string(),
                }
                .into());
            }
            return Ok(id);
        }
        let branch = self.repo.head()?.branch_name().to_owned();
        for id in self.repo.list_runs()?.into_iter().rev() {
            let state = self.repo.load(&id)?;
            if state.manifest.branch == branch && !state.manifest.is_finished() {
                return Ok(id);
            }
        }
        Err(CommandError::failed(format!("no active run on branch '{branch}'"))
            .with_hint("start one with: git pair start --task \"…\" (or pass --run <id>; git pair list shows runs)"))
    }

    /// Loads the run `run_id`.
    pub fn load(&self, run_id: &RunId) -> Result<RunState, CommandError> {
        Ok(self.repo.load(run_id)?)
    }

    /// Where agent logs and prices are, for measuring spend.
    pub fn spend_sources(&self) -> Result<crate::spend::Sources, CommandError> {
        crate::spend::Sources::new(self.options.pricing_file.as_deref(), &self.repo.pair_dir())
            .map_err(|e| CommandError::failed(super::error::single_line(&e.to_string())))
    }

    /// Re-renders `HANDOFF.md` after a change, unless `pair.handoffFile=false`.
    pub fn refresh_handoff(&self, run_id: &RunId) -> Result<Option<PathBuf>, CommandError> {
        if !self.options.handoff_file {
            return Ok(None);
        }
        let path = crate::view::handoff_path(&self.repo)?;
        crate::view::refresh_handoff(&self.repo, run_id, &path)?;
        Ok(Some(path))
    }
}
