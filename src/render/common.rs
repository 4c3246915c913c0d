//! Small pieces of human and JSON rendering every command shares: dollars (measured or not)
//! and the "next:" line for a `next_action`, so every command says the same thing.

use serde_json::Value;

use crate::model::NextAction;

/// Dollars for people: `$1.23` (`decimals` places), or `not measured`.
pub fn usd(spent: Option<f64>, decimals: usize) -> String {
    match spent {
        // A figure that rounds to zero is $0.00, never $-0.00.
        Some(usd) if usd.abs() * 10f64.powi(decimals as i32) < 0.5 => {
            format!("${:.*}", decimals, 0.0)
        }
        Some(usd) => format!("${:.*}", decimals, usd),
        None => "not measured".to_owned(),
    }
}

/// A spend for people: [`usd`] when every measured token has a price; else the priced part as
/// a lower bound naming the unpriced models (`≥ $0.12, unpriced: claude-opus-9`), never a
/// plain number.
pub fn spend(spent: Option<f64>, unpriced: &[String], decimals: usize) -> String {
    if unpriced.is_empty() {
        return usd(spent, decimals);
    }
    format!(
        "≥ {}, unpriced: {}",
        usd(Some(spent.unwrap_or(0.0)), decimals),
        unpriced.join(", ")
    )
}

/// Dollars for `--json`: rounded to 1/100 of a cent, or null when never measured.
pub fn usd_json(spent: Option<f64>) -> serde_json::Value {
    spent.map_or(Value::Null, |usd| crate::util::round_usd(usd).into())
}

/// The human "next:" line for `next`: every command that prints a next step says this.
pub fn next_step(next: NextAction) -> &'static str {
    match next {
        NextAction::Code => {
            "code — make the change (or fix the findings), then: git pair coder-done --summary \"…\""
        }
        NextAction::Review => "review — git pair review",
        NextAction::Finish => "finish — git pair finish",
        NextAction::StopRoundCap => {
            "stop:round-cap — the round cap is reached; ask the human (to go on: git pair coder-done --extra-round --summary \"…\")"
        }
        NextAction::StopBudget => "stop:budget — the budget is spent; ask the human",
        NextAction::StopStalled => {
            "stop:stalled — the same findings stayed open two rounds; ask the human"
        }
        NextAction::StopPartial => {
            "stop:partial — the approval left files no reviewer saw; ask the human (git pair finish --accept-partial, or split the change and review again)"
        }
        NextAction::ReviewPr => {
            "review:pr — the PR exists: its final review, as the remote has it, posted on the PR: git pair review --pr N (the run's PR; git pair status shows it)"
        }
        NextAction::ResumeReview => {
            "resume:review — a review was interrupted; git pair review resumes it"
        }
        NextAction::WaitReview => {
            "wait:review — a review is running right now; wait for it (git pair status)"
        }
        NextAction::Done => "done — the run is finished",
    }
}

/// `word` as a POSIX shell reads it back: bare when it is plain, else single-quoted.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@+".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
