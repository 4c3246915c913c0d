//! The secret scanner's one error type: a pattern table that cannot be read or used.

use std::fmt;
use std::path::PathBuf;

/// Why a pattern table could not be loaded.
#[derive(Debug)]
pub enum SecretsError {
    /// The override file (`pair.secretsFile`) cannot be read.
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The table is not JSON of the expected shape.
    Parse {
        origin: String,
        source: serde_json::Error,
    },
    /// The table parses but a rule or the allowlist is unusable.
    Invalid { origin: String, reason: String },
}

impl fmt::Display for SecretsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SecretsError::Read { path, source } => {
                write!(
                    f,
                    "cannot read secret patterns file {}: {source}",
                    path.display()
                )
            }
            SecretsError::Parse { origin, source } => {
                write!(f, "invalid secret pattern table {origin}: {source}")
            }
            SecretsError::Invalid { origin, reason } => {
                write!(f, "invalid secret pattern table {origin}: {reason}")
            }
        }
    }
}

impl std::error::Error for SecretsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SecretsError::Read { source, .. } => Some(source),
            SecretsError::Parse { source, .. } => Some(source),
            SecretsError::Invalid { .. } => None,
        }
    }
}
