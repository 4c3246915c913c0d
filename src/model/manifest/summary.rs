//! The summary a run commit carries of the manifest it stores (its `Pair-Summary:` trailer):
//! what listing runs needs of a run, readable from the tip commit alone.

use serde::{Deserialize, Serialize};

use super::{Manifest, NextAction};
use crate::model::record::Verdict;

/// The trailer that carries, in every run commit this version writes, the summary of the
/// manifest written in that same commit, so a listing reads one object per run: the tip
/// commit. Trusted as a stamped manifest is: pull projects a fetched run again, and writes a
/// commit on top when the tip's summary is not its records' (SPEC §8).
pub const SUMMARY_TRAILER: &str = "Pair-Summary: ";

/// What [`SUMMARY_TRAILER`] holds: what listing a run needs of its manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CarriedSummary {
    pub v: u32,
    pub branch: String,
    pub task: String,
    pub cwd: String,
    pub created_at: String,
    /// The highest coder round.
    pub round: u32,
    pub max_rounds: u32,
    pub finished: bool,
    /// The outcome's verdict, once finished.
    pub verdict: Option<Verdict>,
    pub next_action: NextAction,
    pub claimed: bool,
    pub carrier: bool,
}

impl CarriedSummary {
    /// The summary of `manifest`.
    pub fn of(manifest: &Manifest) -> CarriedSummary {
        CarriedSummary {
            v: 1,
            branch: manifest.branch.clone(),
            task: manifest.task.clone(),
            cwd: manifest.cwd.clone(),
            created_at: manifest.created_at.clone(),
            round: manifest.current_coder_round().unwrap_or(0),
            max_rounds: manifest.max_rounds,
            finished: manifest.is_finished(),
            verdict: manifest.outcome.verdict,
            next_action: manifest.next_action,
            claimed: manifest.claimed,
            carrier: manifest.carrier,
        }
    }

    /// The summary a commit `message` carries: its one [`SUMMARY_TRAILER`] line among the
    /// lines after the subject, when it parses. None when there is none, or more than one
    /// (not a message this version wrote): the manifest is read instead.
    pub fn in_message(message: &[u8]) -> Option<CarriedSummary> {
        let carried: CarriedSummary =
            serde_json::from_slice(one_trailer(message, SUMMARY_TRAILER)?).ok()?;
        (carried.v == 1).then_some(carried)
    }
}

/// The longest trailer value read: git pair writes a few KiB at most (a run past
/// [`crate::model::MAX_CARRIED`] carries no facts); a longer one (a fetched commit's) is not
/// parsed, and what it stands for is read from the records.
pub const MAX_TRAILER_BYTES: usize = 64 << 10;

/// The value of the one line starting with `key` among the lines after the subject of a
/// commit `message`; `None` when there is none, more than one, or it is longer than
/// [`MAX_TRAILER_BYTES`].
pub(crate) fn one_trailer<'m>(message: &'m [u8], key: &str) -> Option<&'m [u8]> {
    let body = message.windows(2).position(|w| w == b"\n\n")?;
    let mut lines = message[body + 2..]
        .split(|b| *b == b'\n')
        .filter_map(|l| l.strip_prefix(key.as_bytes()));
    let value = lines.next()?;
    (lines.next().is_none() && value.len() <= MAX_TRAILER_BYTES).then_some(value)
}

/// Appends `json` to `line` with everything past printable ASCII as `\u` escapes (JSON reads
/// them back): serde_json escaped every control character below a space; what is left is
/// past ASCII (DEL, C1 controls, text).
pub(crate) fn push_ascii(line: &mut String, json: &str) {
    for c in json.chars() {
        if (' '..='~').contains(&c) {
            line.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                line.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
}

impl Manifest {
    /// The [`SUMMARY_TRAILER`] line (ending in a newline) of a commit storing this manifest:
    /// one line of JSON, ASCII only (anything else escaped), so `git log` of a run shows no
    /// control character whatever the task says.
    pub fn summary_trailer(&self) -> String {
        let json = serde_json::to_string(&CarriedSummary::of(self)).expect("a summary serializes");
        let mut line = String::with_capacity(SUMMARY_TRAILER.len() + json.len() + 1);
        line.push_str(SUMMARY_TRAILER);
        push_ascii(&mut line, &json);
        line.push('\n');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commits_summary_trailer_reads_back_as_its_manifests_summary_and_nothing_else_does() {
        let mut manifest: Manifest =
            serde_json::from_str(include_str!("../../../fixtures/manifests/stored.json"))
                .expect("manifest");
        // A task no terminal should be handed raw: a line break, DEL, a C1 control (CSI),
        // text past ASCII and past the basic plane.
        manifest.task = "fix \"it\"\nnow \u{7f}\u{9b}31m caf\u{e9} \u{1f600} \\ done".to_owned();
        let trailer = manifest.summary_trailer();
        let (line, end) = trailer.split_at(trailer.len() - 1);
        assert_eq!(end, "\n");
        assert!(line.bytes().all(|b| (b' '..=b'~').contains(&b)), "{line}");
        let message = format!("finish: APPROVED\n\nPair-Run: r\n{trailer}");
        let read = CarriedSummary::in_message(message.as_bytes());
        assert_eq!(read, Some(CarriedSummary::of(&manifest)));
        assert_eq!(read.expect("read").task, manifest.task);
        // Not a message this version wrote: left to the manifest.
        let twice = format!("s\n\n{trailer}{trailer}");
        let in_subject = trailer.trim_end().to_owned();
        let other_version = format!("s\n\n{}", trailer.replace(r#"{"v":1,"#, r#"{"v":2,"#));
        let cut = format!("s\n\n{}", &trailer[..trailer.len() / 2]);
        // Past the bound: not parsed, however well formed.
        let mut long = manifest.clone();
        long.task = "x".repeat(MAX_TRAILER_BYTES);
        let too_long = format!("s\n\n{}", long.summary_trailer());
        for message in [
            twice,
            in_subject,
            other_version,
            cut,
            too_long,
            "s\n\nPair-Run: r\n".into(),
        ] {
            assert_eq!(
                CarriedSummary::in_message(message.as_bytes()),
                None,
                "{message}"
            );
        }
    }
}
