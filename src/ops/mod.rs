//! The operations of git pair, one module per operation: the rules of the loop and the order
//! of the steps, nothing about terminals. A command (`crate::cli`) parses its arguments,
//! calls one operation here, and renders the report it returns; operations call the domain
//! modules (`store`, `snapshot`, `packet`, `review`, `render`, `cost`, `sync`) and never the
//! command layer. Progress reaches the user through a callback, never a print.

pub mod adopt;
pub mod checkpoint;
pub mod coder_done;
pub mod common;
pub mod cost;
pub mod demo;
pub mod drop;
mod error;
pub mod finish;
pub mod gate;
pub mod hook;
pub mod install;
pub mod lifecycle;
pub mod log;
pub mod man;
pub mod probe;
pub mod review;
pub mod scrub;
pub mod settings;
pub mod show;
pub mod skill;
pub mod start;
pub mod status;
pub mod sync;
pub mod verify;

use std::path::{Path, PathBuf};

pub use error::Error;

use crate::config::Options;
use crate::model::RunId;
use crate::store::{Repo, RunState};

/// What every repository operation needs: the opened repository, the configuration in
/// force, and the run named on the command line (`--run`), if any.
pub struct Context {
    pub repo: Repo,
    pub options: Options,
    run_flag: Option<String>,
    /// The secret scanner, loaded on first use (`pair.secretsFile` or the shipped table).
    scanner: std::cell::OnceCell<crate::secrets::Scanner>,
}

impl Context {
    /// Opens the repository containing `dir` and reads the `pair.*` configuration.
    pub fn open(dir: &Path, run_flag: Option<String>) -> Result<Context, Error> {
        if !dir.is_dir() {
            return Err(Error::NoSuchDirectory {
                path: dir.display().to_string(),
            });
        }
        let repo = Repo::discover(dir)?;
        let options = Options::from_lookup(|key| repo.config_occurrences(key))?;
        Ok(Context {
            repo,
            options,
            run_flag,
            scanner: std::cell::OnceCell::new(),
        })
    }

    /// The secret scanner of this command: the table at `pair.secretsFile`, else the shipped
    /// one, loaded once. A file that cannot be read or used is an error naming it.
    pub fn scanner(&self) -> Result<crate::secrets::Scanner, Error> {
        if let Some(scanner) = self.scanner.get() {
            return Ok(scanner.clone());
        }
        let scanner = crate::secrets::Scanner::load(self.options.secrets_file.as_deref())?;
        Ok(self.scanner.get_or_init(|| scanner).clone())
    }

    /// The `--run` flag as given.
    pub fn run_flag(&self) -> Option<&str> {
        self.run_flag.as_deref()
    }

    /// Loads the run `run_id` as stored.
    pub fn load(&self, run_id: &RunId) -> Result<RunState, Error> {
        Ok(self.repo.load(run_id)?)
    }

    /// Loads the run `run_id` with its settings as in force now (run-owned, else `git
    /// config`): what the loop's rules read.
    pub fn load_effective(&self, run_id: &RunId) -> Result<RunState, Error> {
        let mut state = self.repo.load(run_id)?;
        state.manifest = crate::model::settings::apply(&state.manifest, &self.options);
        Ok(state)
    }

    /// Where agent logs and prices are, for measuring spend.
    pub fn spend_sources(&self) -> Result<crate::cost::spend::Sources, Error> {
        Ok(crate::cost::spend::Sources::new(
            self.options.pricing_file.as_deref(),
            &self.repo.pair_dir(),
        )?)
    }

    /// Re-renders the HANDOFF view after a change, unless `pair.handoffFile=false`; returns
    /// where it is.
    pub fn refresh_handoff(&self, run_id: &RunId) -> Result<Option<PathBuf>, Error> {
        if !self.options.handoff_file {
            return Ok(None);
        }
        let path = crate::ops::common::view::handoff_path(&self.repo)?;
        if path
            == self
                .repo
                .work_dir()?
                .join(crate::ops::common::view::HANDOFF_FILE)
        {
            // Only a view in the work tree needs hiding from `git status`.
            crate::ops::common::view::ensure_excluded(&self.repo)?;
        }
        crate::ops::common::view::refresh_handoff(&self.repo, run_id, &path)?;
        Ok(Some(path))
    }
}
