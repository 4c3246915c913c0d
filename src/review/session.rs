//! Which vendor session an attempt ran in (SPEC §6.1, §7): the id the reviewer's output names
//! (first tier), else the id of the one vendor session file that holds the attempt's marker
//! (second tier: the files the cost module's locator lists, created since the attempt started,
//! newest first, a bounded number of files and bytes read). Every id must fit the
//! realization's declared shape before it is kept; nothing here spawns or stores.

use std::io::Read;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::cost::{self, LogRoots};
use crate::review::surface::{Realization, SessionFilesSpec};

/// Which tier found an attempt's session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionIdSource {
    /// The reviewer's own output, through the realization's `session_id` selectors.
    Output,
    /// The vendor's session file holding the attempt marker.
    SessionFile,
}

/// The session id an attempt ends with, where it came from, and why one was refused.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    pub id: Option<String>,
    pub from: Option<SessionIdSource>,
    /// Why an id that was found is not kept (never the id itself: it is untrusted text).
    pub refused: Option<String>,
}

/// What a marker search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marked {
    /// No file within the bounds holds the marker.
    Nothing,
    /// Exactly one file does; its session id (as its name gives it, not yet shape-checked).
    One(String),
    /// More than one does: which is ours cannot be told, so none is taken.
    Several,
}

/// File times are coarse on some file systems: a file written just after the attempt started
/// may carry a time just before it.
const CLOCK_SLACK: Duration = Duration::from_secs(2);

/// The attempt's session: the output's id when it fits the realization's shape, else (when
/// the realization names its session files and the attempt's marker is known) the id of the
/// one session file holding the marker, when that fits.
pub fn resolve(
    realization: &Realization,
    output_id: Option<String>,
    marker: Option<&str>,
    roots: Option<&LogRoots>,
    started: SystemTime,
) -> Resolved {
    let mut resolved = Resolved::default();
    if let Some(id) = output_id {
        if realization.session_id_fits(&id) {
            resolved.id = Some(id);
            resolved.from = Some(SessionIdSource::Output);
            return resolved;
        }
        resolved.refused =
            Some("the session id in the reviewer's output does not fit the declared shape".into());
    }
    let (Some(spec), Some(marker), Some(roots)) = (&realization.session_files, marker, roots)
    else {
        return resolved;
    };
    let since = started.checked_sub(CLOCK_SLACK).unwrap_or(started);
    match find_marked(spec, roots, marker, since) {
        Marked::Nothing => {}
        Marked::Several => {
            resolved.refused =
                Some("several vendor session files hold the attempt marker; none is taken".into());
        }
        Marked::One(id) if realization.session_id_fits(&id) => {
            resolved.id = Some(id);
            resolved.from = Some(SessionIdSource::SessionFile);
        }
        Marked::One(_) => {
            resolved.refused = Some(
                "the vendor session file holding the attempt marker is named by an id that does not fit the declared shape"
                    .into(),
            );
        }
    }
    resolved
}

/// Searches `spec.logs`' session files created and modified since `since`, newest first, for
/// `marker` near their start, reading at most `spec.max_files` files and `spec.max_bytes`
/// bytes. The marker is matched as written and as a JSON encoder that escapes `<` and `>`
/// writes it.
pub fn find_marked(
    spec: &SessionFilesSpec,
    roots: &LogRoots,
    marker: &str,
    since: SystemTime,
) -> Marked {
    let escaped = marker.replace('<', "\\u003c").replace('>', "\\u003e");
    let needles = [marker.as_bytes(), escaped.as_bytes()];
    let mut budget = spec.max_bytes;
    let mut found: Option<String> = None;
    for file in cost::recent_session_files(roots, spec.logs, since, spec.max_files) {
        if budget == 0 {
            break;
        }
        let take = spec.marker_within_bytes.min(budget);
        let Ok(handle) = std::fs::File::open(&file.path) else {
            continue;
        };
        let mut head = Vec::new();
        if handle.take(take).read_to_end(&mut head).is_err() {
            continue;
        }
        budget = budget.saturating_sub(head.len() as u64);
        let holds = needles
            .iter()
            .any(|n| head.windows(n.len()).any(|w| w == *n));
        if !holds {
            continue;
        }
        match &found {
            Some(id) if *id == file.session_id => {}
            Some(_) => return Marked::Several,
            None => found = Some(file.session_id),
        }
    }
    found.map_or(Marked::Nothing, Marked::One)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::surface::Surfaces;
    use std::path::Path;

    const MARKER: &str = "<!-- git-pair: 20261129-231500-a1b2c3/1/1 -->";
    const ID: &str = "11111111-2222-4333-8444-555555555555";

    fn claude() -> Realization {
        Surfaces::shipped()
            .expect("shipped")
            .get("claude")
            .expect("claude")
            .clone()
    }

    fn roots(home: &Path) -> LogRoots {
        LogRoots {
            gemini: Vec::new(),
            qwen: Vec::new(),
            copilot: Vec::new(),
            claude: vec![home.join(".claude")],
            codex: vec![home.join(".codex")],
        }
    }

    fn session_file(home: &Path, id: &str, marker: &str) {
        let dir = home.join(".claude/projects/-w-repo");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let line = serde_json::json!({"type": "user", "message": {"content": format!("{marker}\nReview this.")}});
        std::fs::write(dir.join(format!("{id}.jsonl")), format!("{line}\n")).expect("write");
    }

    fn before() -> SystemTime {
        SystemTime::now() - Duration::from_secs(5)
    }

    #[test]
    fn the_output_tier_wins_and_must_fit_the_shape() {
        let r = claude();
        let got = resolve(&r, Some(ID.into()), Some(MARKER), None, before());
        assert_eq!(got.id.as_deref(), Some(ID));
        assert_eq!(got.from, Some(SessionIdSource::Output));
        for bad in ["--resume", "not-a-uuid", "../../x", ""] {
            let got = resolve(&r, Some(bad.into()), Some(MARKER), None, before());
            assert_eq!(got.id, None, "{bad}");
            assert!(got.refused.is_some(), "{bad}");
        }
    }

    #[test]
    fn the_session_file_holding_the_marker_gives_the_id() {
        let home = tempfile::tempdir().expect("tmp");
        let since = before();
        session_file(home.path(), ID, MARKER);
        session_file(
            home.path(),
            "22222222-2222-4333-8444-555555555555",
            "<!-- git-pair: 20261129-231500-a1b2c3/1/2 -->",
        );
        let r = claude();
        let got = resolve(&r, None, Some(MARKER), Some(&roots(home.path())), since);
        assert_eq!(got.id.as_deref(), Some(ID));
        assert_eq!(got.from, Some(SessionIdSource::SessionFile));
        // Attempt 1's marker is not a prefix match for attempt 10's.
        let got = resolve(
            &r,
            None,
            Some("<!-- git-pair: 20261129-231500-a1b2c3/1/10 -->"),
            Some(&roots(home.path())),
            since,
        );
        assert_eq!(got, Resolved::default());
        // Files older than the attempt are not looked at.
        let later = SystemTime::now() + Duration::from_secs(60);
        let got = resolve(&r, None, Some(MARKER), Some(&roots(home.path())), later);
        assert_eq!(got.id, None);
    }

    #[test]
    fn ambiguity_and_bad_names_are_refused() {
        let home = tempfile::tempdir().expect("tmp");
        let since = before();
        session_file(home.path(), "not_a_uuid", MARKER);
        let r = claude();
        let got = resolve(&r, None, Some(MARKER), Some(&roots(home.path())), since);
        assert_eq!(got.id, None);
        assert!(got.refused.expect("refused").contains("does not fit"));
        session_file(home.path(), ID, MARKER);
        let got = resolve(&r, None, Some(MARKER), Some(&roots(home.path())), since);
        assert_eq!(got.id, None);
        assert!(got.refused.expect("refused").contains("several"));
    }

    #[test]
    fn the_search_is_bounded() {
        let home = tempfile::tempdir().expect("tmp");
        let since = before();
        let dir = home.path().join(".claude/projects/-w-repo");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let padded = format!("{}\n{MARKER}\n", "x".repeat(4096));
        std::fs::write(dir.join(format!("{ID}.jsonl")), padded).expect("write");
        let mut spec = claude()
            .session_files
            .expect("claude names its session files");
        assert_eq!(
            find_marked(&spec, &roots(home.path()), MARKER, since),
            Marked::One(ID.into())
        );
        spec.marker_within_bytes = 1024;
        assert_eq!(
            find_marked(&spec, &roots(home.path()), MARKER, since),
            Marked::Nothing
        );
        spec.marker_within_bytes = 1 << 20;
        spec.max_bytes = 100;
        assert_eq!(
            find_marked(&spec, &roots(home.path()), MARKER, since),
            Marked::Nothing
        );
        // The JSON-escaped spelling counts too.
        let escaped = MARKER.replace('<', "\\u003c").replace('>', "\\u003e");
        std::fs::write(dir.join(format!("{ID}.jsonl")), escaped).expect("write");
        let spec = claude().session_files.expect("spec");
        assert_eq!(
            find_marked(&spec, &roots(home.path()), MARKER, since),
            Marked::One(ID.into())
        );
    }
}
