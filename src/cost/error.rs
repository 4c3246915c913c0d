//! The cost domain's one error type.

use std::path::PathBuf;

/// Errors of the cost domain.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    /// The id could name a path outside the log roots.
    #[error("invalid session id {session_id:?}: only letters, digits, '-' and '_' are allowed")]
    InvalidSessionId { session_id: String },
    /// No log file carries this session id.
    #[error(
        "no Claude Code or Codex log found for session {session_id} (searched: {})",
        display_paths(searched)
    )]
    SessionNotFound {
        session_id: String,
        searched: Vec<PathBuf>,
    },
    /// A log file exists but cannot be read.
    #[error("cannot read agent log {path}: {source}")]
    ReadLog {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The pricing override file (`pair.pricingFile`) cannot be read.
    #[error("cannot read pricing file {path}: {source}")]
    ReadPricing {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A price table is not JSON of the expected shape.
    #[error("invalid pricing table {origin}: {source}")]
    ParsePricing {
        origin: String,
        source: serde_json::Error,
    },
    /// A price table value is out of range (negative price, zero multiplier, wrong unit).
    #[error("invalid pricing table {origin}: model {model:?}: {reason}")]
    InvalidPricing {
        origin: String,
        model: String,
        reason: String,
    },
}

fn display_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "no log directory configured".to_owned();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
