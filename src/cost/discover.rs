//! Where agent logs live and which files belong to a session: resolved from the environment
//! and found from directory listings and file names only (never by reading every file).
//! Reads directories, never log contents, except the first bytes of a candidate file to
//! confirm its working directory.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::util::time::Timestamp;

/// The directories searched for agent logs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct LogRoots {
    /// Claude Code config dirs (each holding `projects/`).
    pub claude: Vec<PathBuf>,
    /// Codex homes (each holding `sessions/` and `archived_sessions/`).
    pub codex: Vec<PathBuf>,
    /// Gemini CLI directories (`${GEMINI_CLI_HOME:-~}/.gemini`, each holding
    /// `tmp/<project>/chats/`).
    pub gemini: Vec<PathBuf>,
    /// Qwen Code homes (`${QWEN_HOME:-~/.qwen}`, each holding `projects/<cwd>/chats/`).
    pub qwen: Vec<PathBuf>,
    /// GitHub Copilot CLI homes (`${COPILOT_HOME:-~/.copilot}`, each holding
    /// `session-state/<id>/events.jsonl`).
    pub copilot: Vec<PathBuf>,
}

/// Which agent wrote a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    /// Claude Code (`claude`, `claude -p`).
    Claude,
    /// Codex CLI (`codex`, `codex exec`).
    Codex,
    /// Gemini CLI (`gemini -p`).
    Gemini,
    /// Qwen Code (`qwen`).
    Qwen,
    /// GitHub Copilot CLI (`copilot`).
    Copilot,
}

impl LogRoots {
    /// Resolves `CLAUDE_CONFIG_DIR` (comma-separated list allowed; default `~/.config/claude`
    /// and `~/.claude`) and `CODEX_HOME` (default `~/.codex`) through `get`, so callers and
    /// tests control the environment.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> LogRoots {
        let non_empty = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let home = non_empty("HOME").map(PathBuf::from);
        let claude = match non_empty("CLAUDE_CONFIG_DIR") {
            Some(list) => list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
                .collect(),
            None => home
                .iter()
                .flat_map(|h| [h.join(".config/claude"), h.join(".claude")])
                .collect(),
        };
        let codex = match non_empty("CODEX_HOME") {
            Some(dir) => vec![PathBuf::from(dir)],
            None => home.iter().map(|h| h.join(".codex")).collect(),
        };
        let gemini = non_empty("GEMINI_CLI_HOME")
            .map(PathBuf::from)
            .or(home.clone())
            .map(|h| h.join(".gemini"))
            .into_iter()
            .collect();
        let qwen = match non_empty("QWEN_HOME") {
            Some(dir) => vec![PathBuf::from(dir)],
            None => home.iter().map(|h| h.join(".qwen")).collect(),
        };
        let copilot = match non_empty("COPILOT_HOME") {
            Some(dir) => vec![PathBuf::from(dir)],
            None => home.iter().map(|h| h.join(".copilot")).collect(),
        };
        LogRoots {
            claude,
            codex,
            gemini,
            qwen,
            copilot,
        }
    }

    /// The directories a session lookup lists, for "not found" messages.
    pub fn searched(&self) -> Vec<PathBuf> {
        let claude = self.claude.iter().map(|r| r.join("projects"));
        let codex = self
            .codex
            .iter()
            .flat_map(|r| [r.join("sessions"), r.join("archived_sessions")]);
        let gemini = self.gemini.iter().map(|r| r.join("tmp"));
        let qwen = self.qwen.iter().map(|r| r.join("projects"));
        let copilot = self.copilot.iter().map(|r| r.join("session-state"));
        claude
            .chain(codex)
            .chain(gemini)
            .chain(qwen)
            .chain(copilot)
            .collect()
    }
}

/// Session ids are file-name components: only `[A-Za-z0-9_-]`, so an id can never name a
/// path outside the log roots.
pub(crate) fn is_valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn list_dir(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            e.file_name()
                .into_string()
                .ok()
                .map(|name| (name, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// A Claude session's files: each `projects/*/<id>.jsonl` (main first), then each
/// `projects/*/<id>/subagents/*.jsonl`. Empty when the id is not there.
pub(crate) fn claude_session_files(roots: &LogRoots, id: &str) -> Vec<PathBuf> {
    let file_name = format!("{id}.jsonl");
    let mut mains = Vec::new();
    let mut subagents = Vec::new();
    for root in &roots.claude {
        for (_, project) in list_dir(&root.join("projects")) {
            let main = project.join(&file_name);
            if main.is_file() {
                mains.push(main);
            }
            for (name, path) in list_dir(&project.join(id).join("subagents")) {
                if name.ends_with(".jsonl") && path.is_file() {
                    subagents.push(path);
                }
            }
        }
    }
    mains.extend(subagents);
    mains
}

/// The id part of a rollout file name: `rollout-2026-09-01T11-00-00-<id>.jsonl` → `<id>`.
fn rollout_id(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    // `YYYY-MM-DDTHH-MM-SS-` is 20 bytes.
    let (stamp, id) = (rest.get(..20)?, rest.get(20..)?);
    (stamp.as_bytes()[10] == b'T' && stamp.ends_with('-')).then_some(id)
}

/// Whether a rollout's id part names `id`: the whole part, or one side of a resumed
/// `<thread>_<session>` name.
fn rollout_matches(id_part: &str, id: &str) -> bool {
    id_part == id || id_part.split('_').any(|p| p == id)
}

/// A Codex session's rollouts, oldest first (by the timestamp in the file name), from
/// `sessions/YYYY/MM/DD/` and `archived_sessions/`.
pub(crate) fn codex_session_files(roots: &LogRoots, id: &str) -> Vec<PathBuf> {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let mut consider = |name: String, path: PathBuf| {
        if rollout_id(&name).is_some_and(|part| rollout_matches(part, id)) && path.is_file() {
            found.push((name, path));
        }
    };
    for root in &roots.codex {
        for (_, year) in list_dir(&root.join("sessions")) {
            for (_, month) in list_dir(&year) {
                for (_, day) in list_dir(&month) {
                    for (name, path) in list_dir(&day) {
                        consider(name, path);
                    }
                }
            }
        }
        for (name, path) in list_dir(&root.join("archived_sessions")) {
            consider(name, path);
        }
    }
    found.sort();
    found.dedup_by(|a, b| a.1 == b.1);
    found.into_iter().map(|(_, p)| p).collect()
}

/// A Gemini CLI session's files, oldest first: each `tmp/*/chats/session-<time>-<id8>.jsonl`
/// whose first line names the session (a resume may start a file of its own). Reads only
/// the first line of a file whose name fits.
pub(crate) fn gemini_session_files(roots: &LogRoots, id: &str) -> Vec<PathBuf> {
    let Some(short) = id.get(..8) else {
        return Vec::new();
    };
    let suffix = format!("-{short}.jsonl");
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for root in &roots.gemini {
        for (_, project) in list_dir(&root.join("tmp")) {
            for (name, path) in list_dir(&project.join("chats")) {
                if name.starts_with("session-")
                    && name.ends_with(&suffix)
                    && first_line(&path)
                        .and_then(|l| super::gemini::session_of_first_line(&l))
                        .is_some_and(|s| s == id)
                {
                    found.push((name, path));
                }
            }
        }
    }
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// A Copilot CLI session's files: its `session-state/<id>/events.jsonl`.
pub(crate) fn copilot_session_files(roots: &LogRoots, id: &str) -> Vec<PathBuf> {
    roots
        .copilot
        .iter()
        .map(|root| root.join("session-state").join(id).join("events.jsonl"))
        .filter(|path| path.is_file())
        .collect()
}

/// A Qwen Code session's files: each `projects/*/chats/<id>.jsonl`.
pub(crate) fn qwen_session_files(roots: &LogRoots, id: &str) -> Vec<PathBuf> {
    let file_name = format!("{id}.jsonl");
    let mut found = Vec::new();
    for root in &roots.qwen {
        for (_, project) in list_dir(&root.join("projects")) {
            let path = project.join("chats").join(&file_name);
            if path.is_file() {
                found.push(path);
            }
        }
    }
    found
}

/// The first line of a file (at most 64 KiB of it).
fn first_line(path: &Path) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut buf)
        .ok()?;
    let end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    buf.truncate(end);
    Some(buf)
}

/// One agent session log file, found from directory listings and its metadata only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentSessionFile {
    /// The session id its file name gives (checked by [`is_valid_session_id`]).
    pub session_id: String,
    pub path: PathBuf,
    /// Last modification.
    pub modified: std::time::SystemTime,
}

/// `agent`'s main session files (Claude: `projects/*/<id>.jsonl`, not subagents; Codex:
/// `sessions/YYYY/MM/DD/rollout-*-<id>.jsonl`) created and modified at or after `since`
/// (creation is judged only where the file system records it), newest first, at most `max`.
/// Reads directories and metadata, never contents.
pub fn recent_session_files(
    roots: &LogRoots,
    agent: Agent,
    since: std::time::SystemTime,
    max: usize,
) -> Vec<RecentSessionFile> {
    let mut named: Vec<(String, PathBuf)> = Vec::new();
    match agent {
        Agent::Claude => {
            for root in &roots.claude {
                for (_, project) in list_dir(&root.join("projects")) {
                    for (name, path) in list_dir(&project) {
                        if let Some(stem) = name.strip_suffix(".jsonl")
                            && !stem.starts_with("agent-")
                        {
                            named.push((stem.to_owned(), path));
                        }
                    }
                }
            }
        }
        // Gemini logs name a session by its first eight characters only: no second tier.
        Agent::Gemini => {}
        Agent::Copilot => {
            for root in &roots.copilot {
                for (name, dir) in list_dir(&root.join("session-state")) {
                    let events = dir.join("events.jsonl");
                    if events.is_file() {
                        named.push((name, events));
                    }
                }
            }
        }
        Agent::Qwen => {
            for root in &roots.qwen {
                for (_, project) in list_dir(&root.join("projects")) {
                    for (name, path) in list_dir(&project.join("chats")) {
                        if let Some(stem) = name.strip_suffix(".jsonl") {
                            named.push((stem.to_owned(), path));
                        }
                    }
                }
            }
        }
        Agent::Codex => {
            for root in &roots.codex {
                for (_, year) in list_dir(&root.join("sessions")) {
                    for (_, month) in list_dir(&year) {
                        for (_, day) in list_dir(&month) {
                            for (name, path) in list_dir(&day) {
                                if let Some(id) = rollout_id(&name) {
                                    named.push((id.to_owned(), path));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    let mut found: Vec<RecentSessionFile> = named
        .into_iter()
        .filter(|(id, _)| is_valid_session_id(id))
        .filter_map(|(session_id, path)| {
            let meta = std::fs::metadata(&path).ok().filter(|m| m.is_file())?;
            let modified = meta.modified().ok()?;
            let created_after = meta.created().map_or(true, |c| c >= since);
            (modified >= since && created_after).then_some(RecentSessionFile {
                session_id,
                path,
                modified,
            })
        })
        .collect();
    found.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.path.cmp(&b.path)));
    found.truncate(max);
    found
}

/// Claude Code names a project directory after its working directory with every character
/// other than an ASCII letter or digit replaced by `-` (`/home/dev/my_repo` → `-home-dev-my-repo`).
pub(crate) fn claude_project_dir_name(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// How much of a log is read to confirm its working directory.
const CWD_PROBE_BYTES: u64 = 64 * 1024;

/// Sessions that are not the coder's although they ran in its directory: the reviewer
/// sessions git pair started (`claude -p` runs in the work tree, so its logs sit beside the
/// coder's).
#[derive(Debug, Clone, Copy, Default)]
pub struct NotCoder<'a> {
    /// Session ids a run recorded as its reviewers'.
    pub ids: &'a [&'a str],
    /// Text that opens git pair's reviewer prompts (the attempt marker's start): a session
    /// whose first prompt holds it is a reviewer's. Empty: not checked.
    pub prompt_marker: &'a str,
}

/// The newest Claude Code session (by file modification time, not older than `since`) whose
/// logged `cwd` is `cwd` and that is not one of `not`'s. The project directory name is lossy
/// (`my_repo` and `my-repo` collide), so the first bytes of each candidate are checked for
/// `"cwd":"<cwd>"`, and its first prompt for git pair's reviewer marker.
pub fn newest_claude_session_for_cwd(
    roots: &LogRoots,
    cwd: &Path,
    since: Option<Timestamp>,
    not: NotCoder<'_>,
) -> Option<String> {
    let cwd = cwd.to_str()?;
    let needle = format!("\"cwd\":{}", serde_json::to_string(cwd).ok()?);
    let dir_name = claude_project_dir_name(cwd);
    let mut candidates: Vec<(Timestamp, String, PathBuf)> = Vec::new();
    for root in &roots.claude {
        for (name, path) in list_dir(&root.join("projects").join(&dir_name)) {
            let Some(stem) = name.strip_suffix(".jsonl") else {
                continue;
            };
            if !is_valid_session_id(stem) || stem.starts_with("agent-") || not.ids.contains(&stem) {
                continue;
            }
            let Some(modified) = std::fs::metadata(&path).and_then(|m| m.modified()).ok() else {
                continue;
            };
            let modified = Timestamp::from_system_time(modified);
            if since.is_none_or(|s| modified >= s) {
                candidates.push((modified, stem.to_owned(), path));
            }
        }
    }
    candidates.sort_by(|a, b| b.cmp(a));
    candidates
        .into_iter()
        .find(|(_, _, path)| {
            let head = read_head(path);
            head.windows(needle.len()).any(|w| w == needle.as_bytes())
                && (not.prompt_marker.is_empty()
                    || !first_prompt(&head).is_some_and(|p| p.contains(not.prompt_marker)))
        })
        .map(|(_, id, _)| id)
}

fn read_head(path: &Path) -> Vec<u8> {
    let mut head = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(CWD_PROBE_BYTES).read_to_end(&mut head);
    }
    head
}

/// The text of a Claude Code session's first prompt: the first `user` entry's content (a
/// string, or its text blocks), or the prompt queued before it (`queue-operation` enqueue).
fn first_prompt(head: &[u8]) -> Option<String> {
    for line in head.split(|&b| b == b'\n') {
        let Ok(entry) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let content = match entry.get("type").and_then(|t| t.as_str()) {
            Some("user") => entry.pointer("/message/content"),
            Some("queue-operation")
                if entry.get("operation").and_then(|o| o.as_str()) == Some("enqueue") =>
            {
                entry.get("content")
            }
            _ => continue,
        };
        return match content {
            Some(serde_json::Value::String(text)) => Some(text.clone()),
            Some(serde_json::Value::Array(blocks)) => Some(
                blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_from_env() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let r = LogRoots::from_env(env(&[("HOME", "/h")]));
        assert_eq!(
            r.claude,
            vec![
                PathBuf::from("/h/.config/claude"),
                PathBuf::from("/h/.claude")
            ]
        );
        assert_eq!(r.codex, vec![PathBuf::from("/h/.codex")]);
        let r = LogRoots::from_env(env(&[
            ("HOME", "/h"),
            ("CLAUDE_CONFIG_DIR", "/a, /b,"),
            ("CODEX_HOME", "/c"),
        ]));
        assert_eq!(r.claude, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        assert_eq!(r.codex, vec![PathBuf::from("/c")]);
        let r = LogRoots::from_env(env(&[("CLAUDE_CONFIG_DIR", "")]));
        assert_eq!(r, LogRoots::default());
    }

    #[test]
    fn session_ids_are_plain_names() {
        for (id, ok) in [
            ("11111111-2222-4333-8444-555555555555", true),
            ("abc_DEF-1", true),
            ("", false),
            ("../etc", false),
            ("a/b", false),
            ("a.b", false),
            ("a b", false),
        ] {
            assert_eq!(is_valid_session_id(id), ok, "{id}");
        }
    }

    #[test]
    fn rollout_names() {
        let cases: &[(&str, &str, bool)] = &[
            (
                "rollout-2026-09-01T11-00-00-0199f0aa-1111-7222-8333-444455556666.jsonl",
                "0199f0aa-1111-7222-8333-444455556666",
                true,
            ),
            (
                "rollout-2026-09-01T11-00-00-aaaa_0199f0aa-1111.jsonl",
                "0199f0aa-1111",
                true,
            ),
            (
                "rollout-2026-09-01T11-00-00-aaaa_0199f0aa-1111.jsonl",
                "aaaa",
                true,
            ),
            (
                "rollout-2026-09-01T11-00-00-0199f0aa-1111.jsonl",
                "1111",
                false,
            ),
            (
                "rollout-2026-09-01T11-00-00-0199f0aa-1111.jsonl.bak",
                "0199f0aa-1111",
                false,
            ),
            ("other-2026-09-01T11-00-00-x.jsonl", "x", false),
        ];
        for (name, id, want) in cases {
            assert_eq!(
                rollout_id(name).is_some_and(|p| rollout_matches(p, id)),
                *want,
                "{name} {id}"
            );
        }
    }

    #[test]
    fn recent_session_files_are_listed_newest_first_within_the_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let roots = LogRoots {
            gemini: Vec::new(),
            qwen: Vec::new(),
            copilot: Vec::new(),
            claude: vec![dir.path().join("claude")],
            codex: vec![dir.path().join("codex")],
        };
        let now = std::time::SystemTime::now();
        let put = |rel: &str, age_secs: u64| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "{}\n").unwrap();
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(now - std::time::Duration::from_secs(age_secs))
                .unwrap();
        };
        put("claude/projects/-w-a/old.jsonl", 600);
        put("claude/projects/-w-a/newer.jsonl", 20);
        put("claude/projects/-w-b/newest.jsonl", 10);
        put("claude/projects/-w-b/agent-x.jsonl", 1);
        put("claude/projects/-w-b/bad.id.jsonl", 1);
        put("claude/projects/-w-b/newest/subagents/s.jsonl", 1);
        put(
            "codex/sessions/2026/11/29/rollout-2026-11-29T23-15-00-0199f0aa-1111.jsonl",
            5,
        );
        put("codex/sessions/2026/11/29/notes.jsonl", 5);
        let since = now - std::time::Duration::from_secs(60);
        let ids = |agent, max| -> Vec<String> {
            recent_session_files(&roots, agent, since, max)
                .into_iter()
                .map(|f| f.session_id)
                .collect()
        };
        assert_eq!(ids(Agent::Claude, 10), ["newest", "newer"]);
        assert_eq!(ids(Agent::Claude, 1), ["newest"]);
        assert_eq!(ids(Agent::Codex, 10), ["0199f0aa-1111"]);
    }

    #[test]
    fn project_dir_names() {
        assert_eq!(
            claude_project_dir_name("/home/dev/my_repo"),
            "-home-dev-my-repo"
        );
        assert_eq!(claude_project_dir_name("/w/wt.cost/é"), "-w-wt-cost--");
    }

    #[test]
    fn newest_session_for_cwd_confirms_by_cwd_field() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("projects/-w-my-repo");
        std::fs::create_dir_all(&project).unwrap();
        let write = |name: &str, cwd: &str, age_secs: u64| {
            let path = project.join(name);
            std::fs::write(&path, format!("{{\"type\":\"user\",\"cwd\":\"{cwd}\"}}\n")).unwrap();
            let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age_secs);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        };
        write("old.jsonl", "/w/my_repo", 300);
        write("newer.jsonl", "/w/my_repo", 100);
        write("newest-other.jsonl", "/w/my-repo", 10);
        write("agent-x.jsonl", "/w/my_repo", 1);
        let roots = LogRoots {
            gemini: Vec::new(),
            qwen: Vec::new(),
            copilot: Vec::new(),
            claude: vec![dir.path().to_owned()],
            codex: vec![],
        };
        let cwd = Path::new("/w/my_repo");
        assert_eq!(
            newest_claude_session_for_cwd(&roots, cwd, None, NotCoder::default()).as_deref(),
            Some("newer")
        );
        let since = Timestamp::from_system_time(
            std::time::SystemTime::now() - std::time::Duration::from_secs(50),
        );
        assert_eq!(
            newest_claude_session_for_cwd(&roots, cwd, Some(since), NotCoder::default()),
            None
        );
        assert_eq!(
            newest_claude_session_for_cwd(
                &roots,
                Path::new("/w/my-repo"),
                None,
                NotCoder::default()
            )
            .as_deref(),
            Some("newest-other")
        );
        assert_eq!(
            newest_claude_session_for_cwd(&roots, Path::new("/nowhere"), None, NotCoder::default()),
            None
        );
    }

    /// Two sessions in one project directory, in the shapes Claude Code 2.1.197 writes: the
    /// coder's (interactive, older) and git pair's reviewer (`claude -p`, newer).
    #[test]
    fn reviewer_sessions_are_never_taken_for_the_coder() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("projects/-w-my-repo");
        std::fs::create_dir_all(&project).unwrap();
        let write = |id: &str, lines: &[serde_json::Value], age_secs: u64| {
            let path = project.join(format!("{id}.jsonl"));
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(&path, text).unwrap();
            let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age_secs);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        };
        let user = |id: &str, content: serde_json::Value, entrypoint: &str| {
            serde_json::json!({"parentUuid": null, "isSidechain": false, "type": "user",
                "message": {"role": "user", "content": content},
                "uuid": "6383e190-10ee-40bc-85dd-0aac731271e2",
                "timestamp": "2026-12-02T03:38:08.341Z", "permissionMode": "plan",
                "userType": "external", "entrypoint": entrypoint, "cwd": "/w/my_repo",
                "sessionId": id, "version": "2.1.197", "gitBranch": "main"})
        };
        let coder = "c0de0000-0000-4000-8000-000000000001";
        let reviewer = "5e5e0000-0000-4000-8000-000000000002";
        let recorded = "5e5e0000-0000-4000-8000-000000000003";
        let prompt = "<!-- git-pair: 20261129-231500-a1b2c3/1/1 -->\nYou are reviewing a change.\n";
        write(
            coder,
            &[user(
                coder,
                serde_json::json!("Teach the fetcher to retry"),
                "cli",
            )],
            300,
        );
        write(
            reviewer,
            &[
                serde_json::json!({"type": "queue-operation", "operation": "enqueue",
                    "timestamp": "2026-12-02T03:38:08.270Z", "sessionId": reviewer,
                    "content": prompt}),
                serde_json::json!({"type": "queue-operation", "operation": "dequeue",
                    "timestamp": "2026-12-02T03:38:08.271Z", "sessionId": reviewer}),
                user(reviewer, serde_json::json!(prompt), "sdk-cli"),
            ],
            20,
        );
        // A reviewer whose prompt is in text blocks, recorded by the run: excluded by its id
        // even without the marker check.
        write(
            recorded,
            &[user(
                recorded,
                serde_json::json!([{"type": "text", "text": "Review it.\n<!-- git-pair: r/2/4 -->"}]),
                "sdk-cli",
            )],
            10,
        );
        let roots = LogRoots {
            gemini: Vec::new(),
            qwen: Vec::new(),
            copilot: Vec::new(),
            claude: vec![dir.path().to_owned()],
            codex: vec![],
        };
        let cwd = Path::new("/w/my_repo");
        // Without exclusions the newest is taken: the reviewer's.
        assert_eq!(
            newest_claude_session_for_cwd(&roots, cwd, None, NotCoder::default()).as_deref(),
            Some(recorded)
        );
        let marker_only = NotCoder {
            ids: &[],
            prompt_marker: "<!-- git-pair: ",
        };
        assert_eq!(
            newest_claude_session_for_cwd(&roots, cwd, None, marker_only).as_deref(),
            Some(coder)
        );
        let ids_only = NotCoder {
            ids: &[recorded],
            prompt_marker: "",
        };
        assert_eq!(
            newest_claude_session_for_cwd(&roots, cwd, None, ids_only).as_deref(),
            Some(reviewer)
        );
        // A coder whose later messages quote a review prompt is still the coder.
        write(
            coder,
            &[
                user(coder, serde_json::json!("Fix the review findings"), "cli"),
                user(coder, serde_json::json!(prompt), "cli"),
            ],
            5,
        );
        assert_eq!(
            newest_claude_session_for_cwd(&roots, cwd, None, marker_only).as_deref(),
            Some(coder)
        );
    }
}
