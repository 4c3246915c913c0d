//! The `skill install` report: for each agent, the skill's folder and what happened to each
//! of its files.

use std::path::PathBuf;

use serde::Serialize;

/// What `skill install` did.
#[derive(Debug, Clone, Serialize)]
pub struct SkillInstalled {
    /// Into this repository (`--project`) rather than the user's home.
    pub project: bool,
    pub installed: Vec<Installed>,
    /// Agents that have the git-pair plugin installed: the plugin carries the skill, so no
    /// second copy was written (`--force` writes one anyway).
    pub skipped: Vec<Skipped>,
}

/// An agent `skill install` left alone because its plugin is installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub agent: Agent,
    /// The agent's file that names the plugin.
    pub plugin_seen_in: PathBuf,
    /// A copy an earlier `skill install` left where the agent reads skills (listed twice).
    pub earlier_copy: Option<PathBuf>,
}

/// An agent that reads skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    Claude,
    Codex,
}

impl Agent {
    /// Both agents: what `skill install` without `--claude`/`--codex` means.
    pub const ALL: [Agent; 2] = [Agent::Claude, Agent::Codex];

    /// The agent as `--json` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileOutcome {
    /// The file was not there.
    Created,
    /// The file was there with this content: not written.
    Unchanged,
    /// An earlier git pair wrote a different version: replaced.
    Updated,
    /// The user had changed it and `force` replaced it.
    Overwritten,
}

/// One written (or checked) file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    pub path: PathBuf,
    pub outcome: FileOutcome,
}

/// The skill as installed for one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Installed {
    pub agent: Agent,
    /// The skill's folder.
    pub dir: PathBuf,
    pub files: Vec<FileReport>,
}
