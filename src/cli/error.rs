//! Errors as users see them: one `error:` line, an optional hint, an exit code, and for
//! `--json` whatever partial result applies. Domain errors are classified here, once.

use serde_json::Value;

/// Exit code for refusals and failures.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for `budget-check` at alert.
pub const EXIT_BUDGET_ALERT: u8 = 2;
/// Exit code for usage errors, as git uses.
pub const EXIT_USAGE: u8 = 129;

/// A failed command.
#[derive(Debug)]
pub struct CommandError {
    pub message: String,
    pub hint: Option<String>,
    pub exit: u8,
    /// Keys merged into the `--json` error object (e.g. a failed review's outcome).
    pub partial: Option<Box<serde_json::Map<String, Value>>>,
}

impl CommandError {
    /// A refusal or failure (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        CommandError {
            message: message.into(),
            hint: None,
            exit: EXIT_FAILURE,
            partial: None,
        }
    }

    /// A usage error (exit 129).
    pub fn usage(message: impl Into<String>) -> Self {
        CommandError {
            exit: EXIT_USAGE,
            ..CommandError::failed(message)
        }
    }

    /// Adds the next command that would help.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds a key to the `--json` error object.
    pub fn with_partial(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.partial
            .get_or_insert_with(Default::default)
            .insert(key.to_owned(), value.into());
        self
    }
}

impl From<crate::store::Error> for CommandError {
    fn from(err: crate::store::Error) -> Self {
        use crate::store::Error as E;
        let message = single_line(&err.to_string());
        match err {
            E::NotARepository { .. } => CommandError::failed(message)
                .with_hint("run it inside a git repository, or pass -C <path>"),
            E::UnknownRun { .. } => {
                CommandError::failed(message).with_hint("list the runs with: git pair list")
            }
            E::Refused(refusal) => CommandError {
                message: single_line(&refusal.message),
                hint: refusal.hint,
                ..CommandError::failed("")
            },
            E::Contention { .. } => CommandError::failed(message)
                .with_hint("nothing was recorded; run the command again"),
            _ => CommandError::failed(message),
        }
    }
}

impl From<crate::config::Error> for CommandError {
    fn from(err: crate::config::Error) -> Self {
        let key = err.key.clone();
        CommandError::failed(single_line(&err.to_string()))
            .with_hint(format!("fix it with: git config {key} <value>"))
    }
}

impl From<crate::model::RunIdError> for CommandError {
    fn from(err: crate::model::RunIdError) -> Self {
        CommandError::failed(single_line(&err.to_string()))
            .with_hint("list the runs with: git pair list")
    }
}

impl From<crate::model::Refusal> for CommandError {
    fn from(refusal: crate::model::Refusal) -> Self {
        CommandError {
            message: single_line(&refusal.message),
            hint: refusal.hint,
            ..CommandError::failed("")
        }
    }
}

/// Folds a message onto one line so every error is exactly one `error:` line.
pub fn single_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
