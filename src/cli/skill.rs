//! `git pair skill install [--claude|--codex] [--project] [--force]`: the `pair-loop` skill
//! where the agents read skills, without the plugin.

use super::{CommandError, Context, Report};
use crate::install::skill::Agent;
use crate::ops;

/// Install the agent skill (without the plugin).
///
/// Writes skills/pair-loop (embedded in this binary) where Claude Code and Codex read skills:
/// user-wide (${CLAUDE_CONFIG_DIR:-~/.claude}/skills/ and ~/.agents/skills/), or with
/// --project into this repository's .claude/skills/ and .agents/skills/ (what git pair wrote
/// is recorded in .git/pair/skills/, not in the work tree). Prints where. Running it again
/// updates what an earlier git pair wrote; a skill file you edited is kept unless --force.
/// Use the plugin or the skill, not both: an agent that has the git-pair plugin installed
/// (its own configuration says so) is skipped, since the plugin carries the skill.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Install the pair-loop skill for Claude Code and Codex (or the one named).
    Install {
        /// Only for Claude Code.
        #[arg(long, conflicts_with = "codex")]
        claude: bool,
        /// Only for Codex.
        #[arg(long)]
        codex: bool,
        /// Into this repository (its work tree root) instead of your home directory.
        #[arg(long)]
        project: bool,
        /// Replace skill files you edited, and install for an agent that has the plugin too.
        #[arg(long)]
        force: bool,
    },
}

pub fn run(
    open: &dyn Fn() -> Result<Context, CommandError>,
    args: &Args,
) -> Result<Report, CommandError> {
    let Action::Install {
        claude,
        codex,
        project,
        force,
    } = args.action;
    let mut agents = Vec::new();
    if claude {
        agents.push(Agent::Claude);
    }
    if codex {
        agents.push(Agent::Codex);
    }
    let request = ops::skill::Request { agents, force };
    let installed = if project {
        let ctx = open()?;
        ops::skill::install(ops::skill::Target::Project(&ctx), &request)?
    } else {
        ops::skill::install(ops::skill::Target::User, &request)?
    };
    Ok(Report::rendered(&installed, crate::render::skill::human))
}
