//! `skill install`: the embedded `pair-loop` skill written where Claude Code and Codex read
//! skills, user-wide (from `HOME` and `CLAUDE_CONFIG_DIR`) or in the repository's work tree.

use std::path::PathBuf;

use super::{Context, Error};
use crate::install::skill::{self, Agent, Location};
use crate::model::report::skill::SkillInstalled;

/// Where the skill goes.
pub enum Target<'a> {
    /// For every repository of this user.
    User,
    /// Into the repository's work tree (`--project`).
    Project(&'a Context),
}

/// What `skill install` was asked for.
#[derive(Debug, Clone)]
pub struct Request {
    /// Which agents (both when the flags name none).
    pub agents: Vec<Agent>,
    /// Replace skill files the user edited.
    pub force: bool,
}

/// Installs the skill for each agent and returns what was written where.
pub fn install(target: Target<'_>, request: &Request) -> Result<SkillInstalled, Error> {
    let agents = if request.agents.is_empty() {
        Agent::ALL.to_vec()
    } else {
        request.agents.clone()
    };
    let options = skill::Options {
        force: request.force,
    };
    match target {
        Target::User => {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .ok_or(Error::NoHome)?;
            let claude_config_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from);
            let location = Location::User {
                home: &home,
                claude_config_dir: claude_config_dir.as_deref(),
            };
            Ok(SkillInstalled {
                project: false,
                installed: skill::install(&agents, &location, options)?,
            })
        }
        Target::Project(ctx) => {
            let root = ctx.repo.work_dir()?;
            Ok(SkillInstalled {
                project: true,
                installed: skill::install(&agents, &Location::Project { root }, options)?,
            })
        }
    }
}
