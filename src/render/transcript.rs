//! The human views of reports that carry one text for people: the transcript (`handoff`) and
//! the PR body (`pr-body`).

use std::io::{Result, Write};

use crate::model::report::handoff::Handoff;
use crate::model::report::pr_body::PrBody;

/// The transcript as stored (HANDOFF.md's content).
pub fn handoff(h: &Handoff, out: &mut dyn Write) -> Result<()> {
    out.write_all(h.text.as_bytes())
}

/// The PR body, or the whole updated description.
pub fn pr_body(p: &PrBody, out: &mut dyn Write) -> Result<()> {
    out.write_all(p.body.as_bytes())
}
