//! `skill install`: the embedded `pair-loop` skill written where Claude Code and Codex read
//! skills, user-wide (from `HOME` and `CLAUDE_CONFIG_DIR`) or in the repository's work tree.

use std::path::PathBuf;

use super::{Context, Error};
use crate::install::skill::{self, Agent, Location};
use crate::model::report::skill::{SkillInstalled, Skipped};

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

/// Installs the skill for each agent and returns what was written where. An agent whose
/// own configuration shows the git-pair plugin installed is skipped (the plugin carries the
/// skill; two copies are listed twice) unless `force`.
pub fn install(target: Target<'_>, request: &Request) -> Result<SkillInstalled, Error> {
    let wanted = if request.agents.is_empty() {
        Agent::ALL.to_vec()
    } else {
        request.agents.clone()
    };
    let options = skill::Options {
        force: request.force,
    };
    let env_dir = |name: &str| {
        std::env::var_os(name)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    };
    let home = env_dir("HOME");
    let claude_config_dir = env_dir("CLAUDE_CONFIG_DIR");
    let codex_home = env_dir("CODEX_HOME");
    let (project, records, root);
    let location = match target {
        Target::User => {
            project = false;
            Location::User {
                home: home.as_deref().ok_or(Error::NoHome)?,
                claude_config_dir: claude_config_dir.as_deref(),
            }
        }
        Target::Project(ctx) => {
            project = true;
            root = ctx.repo.work_dir()?.to_path_buf();
            records = ctx.repo.pair_dir().join("skills");
            Location::Project {
                root: &root,
                records: &records,
            }
        }
    };
    let mut agents = Vec::new();
    let mut skipped = Vec::new();
    for agent in wanted {
        let seen = home.as_deref().and_then(|home| {
            skill::plugin_installed(
                agent,
                home,
                claude_config_dir.as_deref(),
                codex_home.as_deref(),
            )
        });
        match seen {
            Some(plugin_seen_in) if !request.force => {
                let dir = skill::skill_dir(agent, &location);
                skipped.push(Skipped {
                    agent,
                    plugin_seen_in,
                    earlier_copy: dir.join("SKILL.md").is_file().then_some(dir),
                });
            }
            _ => agents.push(agent),
        }
    }
    Ok(SkillInstalled {
        project,
        installed: skill::install(&agents, &location, options)?,
        skipped,
    })
}
