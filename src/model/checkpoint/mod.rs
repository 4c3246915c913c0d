//! Checkpoint records (SPEC §10): the packet a context handoff stores, its verifications, its
//! archiving, observed context compactions, and the one transition function that says what
//! state a checkpoint is in after each of them. Pure data; the rules that build and judge a
//! packet live in `crate::checkpoint`.

pub mod rules;

use serde::{Deserialize, Serialize};

/// The id of a checkpoint: `ck-` and 12 lowercase hex characters, e.g. `ck-3f9a1c0b2d4e`.
/// Any id given on the command line is validated before use (no path or ref injection).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CheckpointId(String);

/// Why a string is not a checkpoint id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{given}' is not a checkpoint id (expected ck- and 12 lowercase hex digits, e.g. ck-3f9a1c0b2d4e)"
)]
pub struct CheckpointIdError {
    pub given: String,
}

impl CheckpointId {
    const PREFIX: &'static str = "ck-";

    /// A fresh, unique id.
    pub fn generate() -> CheckpointId {
        CheckpointId(format!("{}{}", Self::PREFIX, crate::util::unique_hex(12)))
    }

    /// Validates an id given on the command line or read from a record.
    pub fn parse(s: &str) -> Result<CheckpointId, CheckpointIdError> {
        let valid = s.strip_prefix(Self::PREFIX).is_some_and(|hex| {
            hex.len() == 12
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        if valid {
            Ok(CheckpointId(s.to_owned()))
        } else {
            Err(CheckpointIdError {
                given: s.escape_debug().to_string(),
            })
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for CheckpointId {
    type Error = CheckpointIdError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        CheckpointId::parse(&s)
    }
}

impl From<CheckpointId> for String {
    fn from(id: CheckpointId) -> String {
        id.0
    }
}

/// What a checkpoint says about handing the task over now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Assessment {
    /// Hand over now: authorized, and the context is under pressure or was compacted twice.
    HandoffReady,
    /// Unsafe now (a merge, rebase, … in progress, or the index locked): nothing is stored.
    HandoffDeferred,
    /// Keep working in this context.
    Continue,
}

impl Assessment {
    /// As JSON and the human output spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Assessment::HandoffReady => "handoff-ready",
            Assessment::HandoffDeferred => "handoff-deferred",
            Assessment::Continue => "continue",
        }
    }
}

/// Where a checkpoint was made: what `verify` compares in the destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoIdentity {
    /// The absolute work-tree path.
    pub path: String,
    /// The commit `HEAD` pointed to.
    pub head: super::ids::CommitId,
    /// The branch, or `HEAD` when detached.
    pub branch: String,
    /// The status fingerprint: the work-tree snapshot's tree id, equal on any machine that
    /// holds the same files (the snapshot is stored with the checkpoint).
    pub status: super::ids::TreeId,
    /// The machine's host name.
    pub host: String,
}

/// A check command and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    /// The command, run with `sh -c` in the work tree's root.
    pub command: String,
    /// Its exit code; null when it did not exit by itself (timed out, killed, not started).
    pub exit_code: Option<i32>,
    /// `exited`, `timed-out`, `killed` or `not-started`.
    pub end: String,
    /// The last bytes of its output (stdout, then stderr), lossily decoded.
    #[serde(default)]
    pub output_tail: String,
    #[serde(default)]
    pub duration_ms: u64,
}

impl CheckRun {
    /// How it ended, in one comparable phrase: `exit 0`, `exit 2`, `timed-out`, ….
    pub fn outcome(&self) -> String {
        match self.exit_code {
            Some(code) if self.end == "exited" => format!("exit {code}"),
            _ => self.end.clone(),
        }
    }
}

/// How full the agent's context was, as the agent reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextUse {
    /// Tokens in use.
    pub used: u64,
    /// The context window's size in tokens.
    pub limit: u64,
}

impl ContextUse {
    /// `used / limit`.
    pub fn pressure(&self) -> f64 {
        // Token counts fit f64's 53-bit mantissa exactly.
        self.used as f64 / self.limit as f64
    }
}

/// The packet of `git pair checkpoint create` (record kind `checkpoint`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The checkpoint's id (`id` is the record's own).
    pub checkpoint: CheckpointId,
    pub repo: RepoIdentity,
    /// The check and its result at creation, when one was given.
    #[serde(default)]
    pub check: Option<CheckRun>,
    #[serde(default)]
    pub goal: Option<String>,
    /// The next action for whoever continues.
    pub next: String,
    #[serde(default)]
    pub criteria: Vec<String>,
    /// Evidence the source checked.
    #[serde(default)]
    pub verified: Vec<String>,
    /// Claims nobody checked yet.
    #[serde(default)]
    pub unverified: Vec<String>,
    /// The reply language exactly as given, or `unspecified`.
    pub language: String,
    /// As given, or `unspecified`; never inferred from the language.
    pub locale: String,
    /// As given, or `unspecified`; never inferred.
    pub time_zone: String,
    #[serde(default)]
    pub context: Option<ContextUse>,
    /// The human authorized handing the task over.
    #[serde(default)]
    pub authorized: bool,
    /// Context compactions observed in the run's current context when it was made.
    #[serde(default)]
    pub compactions: u32,
    pub assessment: Assessment,
    /// Why the assessment is what it is, one phrase each.
    #[serde(default)]
    pub reasons: Vec<String>,
}

/// What a verification found: `HANDOFF VERIFIED` or `HANDOFF REGRESSION`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum VerifyResult {
    #[serde(rename = "HANDOFF VERIFIED")]
    Verified,
    #[serde(rename = "HANDOFF REGRESSION")]
    Regression,
}

impl VerifyResult {
    /// As printed.
    pub fn as_str(self) -> &'static str {
        match self {
            VerifyResult::Verified => "HANDOFF VERIFIED",
            VerifyResult::Regression => "HANDOFF REGRESSION",
        }
    }
}

/// One recorded field that differs where the checkpoint is verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// `path`, `head`, `branch`, `status` or `check`.
    pub field: String,
    pub expected: String,
    pub found: String,
}

/// `git pair checkpoint verify` (record kind `checkpoint-verified`), recorded either way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointVerified {
    pub checkpoint: CheckpointId,
    pub result: VerifyResult,
    #[serde(default)]
    pub mismatches: Vec<Mismatch>,
    /// Where it was verified.
    pub path: String,
    pub host: String,
    /// The path was not compared (`--allow-other-path`).
    #[serde(default)]
    pub allow_other_path: bool,
    /// How the re-run check ended (`exit 0`, …); null when there was no check. Its output is
    /// not stored.
    #[serde(default)]
    pub check: Option<String>,
}

/// `git pair checkpoint archive` (record kind `checkpoint-archived`): the source context is
/// retired. A state, never a deletion: the checkpoint stays readable and restorable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointArchived {
    pub checkpoint: CheckpointId,
    /// Where it was archived.
    pub path: String,
    pub host: String,
}

/// An observed context compaction (record kind `compaction`). Holds nothing else: no prompt
/// text, no transcript, no session id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compaction {}

/// Where a checkpoint stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CheckpointState {
    /// Created; no verification recorded yet.
    #[serde(rename = "UNVERIFIED")]
    Unverified,
    /// The latest verification found a mismatch.
    #[serde(rename = "HANDOFF_REGRESSION")]
    Regression,
    /// Verified in the destination; the source context was not archived yet.
    #[serde(rename = "HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE")]
    VerifiedSourceActive,
    /// The source context is retired (recoverable: nothing was deleted).
    #[serde(rename = "SOURCE_ARCHIVED_CONFIRMED")]
    Archived,
}

impl CheckpointState {
    /// As JSON and the human output spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointState::Unverified => "UNVERIFIED",
            CheckpointState::Regression => "HANDOFF_REGRESSION",
            CheckpointState::VerifiedSourceActive => "HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE",
            CheckpointState::Archived => "SOURCE_ARCHIVED_CONFIRMED",
        }
    }

    /// The state after a verification with `result`: archived stays archived (a later
    /// verification does not bring a retired source back).
    pub fn after_verification(self, result: VerifyResult) -> CheckpointState {
        match (self, result) {
            (CheckpointState::Archived, _) => CheckpointState::Archived,
            (_, VerifyResult::Verified) => CheckpointState::VerifiedSourceActive,
            (_, VerifyResult::Regression) => CheckpointState::Regression,
        }
    }
}

/// The run's latest checkpoint, as the manifest projects it (`status` shows it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatestCheckpoint {
    pub id: CheckpointId,
    pub assessment: Assessment,
    pub state: CheckpointState,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_validated() {
        let id = CheckpointId::generate();
        assert_eq!(CheckpointId::parse(id.as_str()), Ok(id.clone()));
        assert!(id.as_str().starts_with("ck-") && id.as_str().len() == 15);
        for bad in [
            "",
            "ck-",
            "ck-3F9A1C0B2D4E",
            "ck-3f9a1c0b2d4",
            "ck-3f9a1c0b2d4e0",
            "ck-../../etc/pa",
            "3f9a1c0b2d4e",
            "20261129-231500-a1b2c3",
            "ck-3f9a1c0b2d4g",
        ] {
            assert!(CheckpointId::parse(bad).is_err(), "{bad}");
        }
        let err = serde_json::from_str::<CheckpointId>("\"refs/heads/x\"").expect_err("invalid");
        assert!(err.to_string().contains("not a checkpoint id"));
    }

    #[test]
    fn states_move_by_verification_and_archive_is_final() {
        use CheckpointState::*;
        assert_eq!(
            Unverified.after_verification(VerifyResult::Verified),
            VerifiedSourceActive
        );
        assert_eq!(
            VerifiedSourceActive.after_verification(VerifyResult::Regression),
            Regression
        );
        assert_eq!(
            Regression.after_verification(VerifyResult::Verified),
            VerifiedSourceActive
        );
        assert_eq!(
            Archived.after_verification(VerifyResult::Regression),
            Archived
        );
        for (state, text) in [
            (Unverified, "UNVERIFIED"),
            (Regression, "HANDOFF_REGRESSION"),
            (
                VerifiedSourceActive,
                "HANDOFF_VERIFIED_WITH_SOURCE_STILL_ACTIVE",
            ),
            (Archived, "SOURCE_ARCHIVED_CONFIRMED"),
        ] {
            assert_eq!(state.as_str(), text);
            assert_eq!(serde_json::to_value(state).expect("ser"), text);
        }
    }

    #[test]
    fn spellings_are_the_documented_ones() {
        for (a, text) in [
            (Assessment::HandoffReady, "handoff-ready"),
            (Assessment::HandoffDeferred, "handoff-deferred"),
            (Assessment::Continue, "continue"),
        ] {
            assert_eq!(a.as_str(), text);
            assert_eq!(serde_json::to_value(a).expect("ser"), text);
        }
        assert_eq!(
            serde_json::to_value(VerifyResult::Regression).expect("ser"),
            "HANDOFF REGRESSION"
        );
        let run = CheckRun {
            command: "make test".into(),
            exit_code: Some(2),
            end: "exited".into(),
            output_tail: String::new(),
            duration_ms: 1,
        };
        assert_eq!(run.outcome(), "exit 2");
        let timed_out = CheckRun {
            exit_code: None,
            end: "timed-out".into(),
            ..run
        };
        assert_eq!(timed_out.outcome(), "timed-out");
    }
}
