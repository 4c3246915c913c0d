//! What probing found, as data: the candidates tried, the capabilities each proved, and the
//! realization that binds, ready to run. Probing itself is [`super::probe`].

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::review::surface::{Realization, RealizationKind};

/// A realization ready to run: the data, the program it resolved to, what it proved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundRealization {
    /// Realization name (`codex`, `claude`, `builtin`, `command`, …).
    pub name: String,
    /// The realization's data.
    pub realization: Realization,
    /// Resolved executable; `None` for the built-in reviewer.
    pub program: Option<PathBuf>,
    /// Configured command arguments after the program (`command` realization).
    pub command_args: Vec<String>,
    /// Capabilities the probe proved.
    pub capabilities: BTreeSet<String>,
    /// Bound as a fallback for a configured reviewer that did not bind.
    pub fallback_used: bool,
}

impl BoundRealization {
    /// Whether this is the built-in reviewer (in-process: it reads the change's file diffs,
    /// not the prompt).
    pub fn is_builtin(&self) -> bool {
        self.realization.kind == RealizationKind::Builtin
    }

    /// The name it goes by everywhere ([`crate::model::reviewer::name`]): a reviewer command
    /// by its program (`command:approve.sh`), an ACP agent by its package or program
    /// (`acp:claude-agent-acp`), any other realization by its own name.
    pub fn label(&self) -> String {
        if self.realization.kind == RealizationKind::Acp {
            let argv: Vec<String> = self
                .program
                .iter()
                .map(|p| p.display().to_string())
                .chain(self.command_args.iter().cloned())
                .collect();
            return crate::model::reviewer::name(
                &self.name,
                crate::model::reviewer::acp_agent(&argv),
            );
        }
        let program = match self.realization.kind {
            RealizationKind::Command => self
                .program
                .as_deref()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy()),
            _ => None,
        };
        crate::model::reviewer::name(&self.name, program.as_deref())
    }

    /// Whether structured output will be requested (defined in the data and, when it names
    /// a capability, proven by the probe).
    pub fn supports_structured_output(&self) -> bool {
        self.realization
            .structured_output
            .as_ref()
            .is_some_and(|s| self.proven(s.capability.as_deref()))
    }

    /// Whether a later round can resume the reviewer's session.
    pub fn supports_resume(&self) -> bool {
        // An ACP agent says in its `initialize` answer whether it can (`loadSession`): the
        // attempt asks then, and starts a new session when it cannot.
        if self.realization.kind == RealizationKind::Acp {
            return true;
        }
        self.realization
            .resume
            .as_ref()
            .is_some_and(|r| self.proven(r.capability.as_deref()))
    }

    /// Whether a failed resume should be followed by a fresh review.
    pub fn resume_falls_back_to_fresh(&self) -> bool {
        self.realization
            .resume
            .as_ref()
            .is_some_and(|r| r.fallback_to_fresh)
    }

    /// At most this many of its reviews run at once.
    pub fn max_concurrency(&self) -> usize {
        self.realization.max_concurrency
    }

    fn proven(&self, capability: Option<&str>) -> bool {
        capability.is_none_or(|c| self.capabilities.contains(c))
    }
}

/// One capability check of a probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityCheck {
    /// Capability name from the data.
    pub name: String,
    /// Binding needs it.
    pub required: bool,
    /// Every substring was found.
    pub proven: bool,
    /// Substrings not found in the probe output.
    pub missing: Vec<String>,
}

/// What probing one candidate found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Realization name.
    pub name: String,
    /// Its kind.
    pub kind: RealizationKind,
    /// The executable looked for, when there is one.
    pub binary: Option<String>,
    /// Where it was found.
    pub path: Option<PathBuf>,
    /// The probe command as run.
    pub probe_argv: Vec<String>,
    /// How the probe command ended (exit status or failure).
    pub probe_result: Option<String>,
    /// Capability checks.
    pub capabilities: Vec<CapabilityCheck>,
    /// It binds.
    pub binds: bool,
    /// Why it binds or not, in one line.
    pub reason: String,
    /// How to install its CLI (from the realization data), when it was not found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
}

/// The outcome of probing: which realization won and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// The configured reviewer.
    pub configured: String,
    /// The realization that binds.
    pub winner: Option<String>,
    /// The winner is not the configured reviewer.
    pub fallback_used: bool,
    /// Every candidate probed, in order.
    pub probed: Vec<Candidate>,
    /// The bound realization, ready for [`crate::review::run_attempt`].
    pub bound: Option<BoundRealization>,
}
