//! `git pair coder-done`: record the coder's round.

use serde_json::json;

use super::{CommandError, Context, Report};
use crate::model::{self, Body, Coder, Response};
use crate::store::Append;

/// Record that the coder finished a round.
///
/// Before the round is reviewed, a second coder-done adds to the same round (summaries are
/// kept in order); after a review it opens the next round. Past the round cap it needs
/// --extra-round (the human chose to go on).
///
/// Next: `git pair review`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the coder did this round (the reviewer and the transcript read it).
    #[arg(long, value_name = "text")]
    pub summary: String,
    /// How many of the previous review's findings this round addresses.
    #[arg(long, value_name = "n")]
    pub findings_addressed: Option<u32>,
    /// The coder's agent session id (for cost), e.g. a Claude Code session UUID.
    #[arg(long, value_name = "id")]
    pub session: Option<String>,
    /// JSON file with responses to open findings:
    /// [{"finding": 1, "status": "addressed|deferred|disputed", "reason": "…"}].
    #[arg(long, value_name = "file")]
    pub responses: Option<std::path::PathBuf>,
    /// Go past the round cap (a human decided to continue).
    #[arg(long)]
    pub extra_round: bool,
}

pub fn run(ctx: &Context, args: &Args) -> Result<Report, CommandError> {
    let summary = args.summary.trim();
    if summary.is_empty() {
        return Err(CommandError::usage("--summary must not be empty"));
    }
    if let Some(session) = args.session.as_ref().filter(|s| !is_session_id(s)) {
        return Err(CommandError::usage(format!(
            "--session '{}' is not a session id (letters, digits, '-', '_')",
            session.escape_debug()
        )));
    }
    let responses = match &args.responses {
        Some(path) => read_responses(path)?,
        None => Vec::new(),
    };
    let run_id = ctx.run_id(None)?;
    let appended = ctx.repo.append(&run_id, |state| {
        model::check_coder_done(&state.manifest, args.extra_round)?;
        let (round, opens) = state.manifest.coder_round_for_next();
        let body = Body::Coder(Coder {
            summary: summary.to_owned(),
            tool: state.manifest.coder.clone(),
            findings_addressed: args.findings_addressed,
            session_id: args.session.clone(),
            responses: responses.clone(),
            extra_round: args.extra_round,
        });
        let verb = if opens { "" } else { " (more)" };
        let mut append = Append::record(
            body,
            format!(
                "coder {round}{verb}: {}",
                crate::util::first_line_clipped(summary, 60)
            ),
        );
        append.round = Some(round);
        Ok(append)
    })?;
    ctx.refresh_handoff(&run_id)?;
    let round = appended.state.manifest.current_coder_round().unwrap_or(1);
    Ok(Report::new(
        json!({ "round": round, "run_id": run_id.as_str() }),
        format!("Recorded coder round {round} of run {run_id}\nnext: git pair review\n"),
    ))
}

fn is_session_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn read_responses(path: &std::path::Path) -> Result<Vec<Response>, CommandError> {
    let bytes = std::fs::read(path).map_err(|e| {
        CommandError::failed(format!(
            "cannot read --responses file {}: {e}",
            path.display()
        ))
    })?;
    serde_json::from_slice::<Vec<Response>>(&bytes).map_err(|e| {
        CommandError::failed(format!(
            "--responses file {} is not a JSON array of {{finding, status, reason}}: {e}",
            path.display()
        ))
    })
}
