//! `git pair list`: every run in this repository, newest first, printed as it is read.

use super::{CommandError, Context, Report, Ui};

/// List the runs stored in this repository, newest first.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only the newest N runs (reading stops there: fast however many runs there are)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Streams the listing: each run is printed as it is read (with `--json`, one object whose
/// `runs` array is written element by element, then `malformed_runs`), so memory stays flat
/// however many runs there are.
pub fn run(ctx: &Context, ui: &Ui, args: &Args) -> Result<Report, CommandError> {
    let json = ui.is_json();
    let mut out = ui.stream();
    let mut listed = 0usize;
    if json {
        out.data(b"{\"runs\":[");
    }
    let malformed = crate::ops::show::each_run(ctx, args.limit, &mut |line| {
        let mut bytes = Vec::with_capacity(256);
        if json {
            if listed > 0 {
                bytes.push(b',');
            }
            serde_json::to_writer(&mut bytes, &line).expect("a run line serializes");
        } else {
            crate::render::list::line(&line, &mut bytes).expect("writing to a Vec cannot fail");
        }
        listed += 1;
        let written = if json {
            out.data(&bytes)
        } else {
            out.text(&String::from_utf8_lossy(&bytes))
        };
        Ok(written)
    })?;
    let mut tail = Vec::new();
    if json {
        tail.extend_from_slice(b"],\"malformed_runs\":");
        serde_json::to_writer(&mut tail, &malformed).expect("malformed runs serialize");
        tail.extend_from_slice(b"}\n");
        out.data(&tail);
    } else {
        crate::render::list::tail(listed, &malformed, &mut tail)
            .expect("writing to a Vec cannot fail");
        out.text(&String::from_utf8_lossy(&tail));
    }
    out.finish()?;
    Ok(Report::streamed())
}
