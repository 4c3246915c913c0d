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
    let (session, costs, mut notes) = measure(ctx, &run_id, args.session.as_deref())?;
    let appended = ctx.repo.append(&run_id, |state| {
        model::check_coder_done(&state.manifest, args.extra_round)?;
        let (round, opens) = state.manifest.coder_round_for_next();
        let body = Body::Coder(Coder {
            summary: summary.to_owned(),
            tool: state.manifest.coder.clone(),
            findings_addressed: args.findings_addressed,
            session_id: session.clone(),
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
        append.also = costs(&state.manifest, round);
        Ok(append)
    })?;
    ctx.refresh_handoff(&run_id)?;
    let round = appended.state.manifest.current_coder_round().unwrap_or(1);
    let mut report = Report::new(
        json!({ "round": round, "run_id": run_id.as_str() }),
        format!("Recorded coder round {round} of run {run_id}\nnext: git pair review\n"),
    );
    report.notes.append(&mut notes);
    Ok(report)
}

type CostBodies = Box<dyn Fn(&crate::model::Manifest, u32) -> Vec<Body>>;

/// Measures the run's sessions (with the coder's session, given or discovered) so their cost
/// is stored with the coder record. Measuring never blocks recording the coder's work: a
/// problem becomes a note.
fn measure(
    ctx: &Context,
    run_id: &crate::model::RunId,
    given: Option<&str>,
) -> Result<(Option<String>, CostBodies, Vec<String>), CommandError> {
    let none: CostBodies = Box::new(|_, _| Vec::new());
    let sources = match ctx.spend_sources() {
        Ok(sources) => sources,
        Err(e) => {
            return Ok((
                given.map(str::to_owned),
                none,
                vec![format!("warning: cost not measured: {}", e.message)],
            ));
        }
    };
    let mut manifest = ctx.load(run_id)?.manifest;
    let session = given
        .map(str::to_owned)
        .or_else(|| crate::spend::discover_coder_session(&manifest, &sources));
    if let Some(id) = &session {
        manifest
            .sessions
            .entry(id.clone())
            .or_insert_with(|| crate::model::SessionSpend {
                role: "coder".into(),
                agent: manifest.coder.clone(),
                usd: 0.0,
            });
    }
    let spend = crate::spend::measure(&manifest, &sources);
    Ok((
        session,
        Box::new(move |m, round| crate::spend::growth_records(m, &spend, round)),
        Vec::new(),
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
