//! Installs the `pair-loop` skill where Claude Code and Codex find skills without plugins
//! (`git pair skill install`): user-wide, or inside one repository. The skill's files are
//! embedded in the binary, so an installed `git-pair` carries them.
//!
//! Filesystem only: the caller passes the home directory (and `CLAUDE_CONFIG_DIR`) or the
//! repository root; nothing here runs git or prints. A file the user edited is never
//! overwritten without `force`; a file an earlier git pair wrote is updated.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::file::InstalledFile;
use crate::util::fs::Failure;

/// The skill's folder name, and its `name` in the front matter.
pub const SKILL_NAME: &str = "pair-loop";

/// One file of the skill, relative to its folder.
#[derive(Debug, Clone, Copy)]
pub struct SkillFile {
    pub path: &'static str,
    pub contents: &'static str,
}

/// Every file of `skills/pair-loop/`, as built into this binary.
pub const FILES: &[SkillFile] = &[SkillFile {
    path: "SKILL.md",
    contents: include_str!("../../skills/pair-loop/SKILL.md"),
}];

/// What git pair wrote (file → SHA-1), so that a later install can tell its own older files
/// from the user's edits: beside the skill's files in a user install; for `--project`, in the
/// repository's `.git/pair/skills/<agent>.json`, never in the work tree (an older git pair
/// left it beside the files there: read once, then removed).
const RECORD_FILE: &str = ".git-pair.json";
const RECORD_VERSION: u32 = 1;
/// The mode of every file the skill installer writes: ordinary, readable by the agents.
const SKILL_FILE_MODE: u32 = 0o644;

/// What went wrong installing the skill.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} changed since git pair installed it; not overwriting (pass --force to replace it)",
        paths.join(", ")
    )]
    Edited { paths: Vec<String> },
}

/// A failed atomic write names what it did and where.
impl From<Failure> for Error {
    fn from((action, path, source): Failure) -> Error {
        Error::io(action, &path)(source)
    }
}

impl Error {
    fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.display().to_string();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }
}

pub use crate::model::report::skill::{Agent, FileOutcome, FileReport, Installed};

/// Where to install.
#[derive(Debug, Clone, Copy)]
pub enum Location<'a> {
    /// For every repository of this user.
    User {
        home: &'a Path,
        /// `CLAUDE_CONFIG_DIR`, when set: Claude Code then reads skills from there instead
        /// of `~/.claude`.
        claude_config_dir: Option<&'a Path>,
    },
    /// For one repository (`--project`): under its root, to be committed or not; what git
    /// pair wrote is recorded in `records` (inside the git directory).
    Project { root: &'a Path, records: &'a Path },
}

/// How to install.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Replace files the user changed since git pair installed them.
    pub force: bool,
}

/// The folder `agent` reads the skill from at `location`: Claude Code
/// `${CLAUDE_CONFIG_DIR:-~/.claude}/skills/` or `<repo>/.claude/skills/`; Codex
/// `~/.agents/skills/` (read whatever `CODEX_HOME` is) or `<repo>/.agents/skills/`.
pub fn skill_dir(agent: Agent, location: &Location) -> PathBuf {
    let skills = match (agent, location) {
        (
            Agent::Claude,
            Location::User {
                home,
                claude_config_dir,
            },
        ) => claude_config_dir
            .map(Path::to_path_buf)
            .unwrap_or_else(|| home.join(".claude"))
            .join("skills"),
        (Agent::Claude, Location::Project { root, .. }) => root.join(".claude").join("skills"),
        (Agent::Codex, Location::User { home, .. }) => home.join(".agents").join("skills"),
        (Agent::Codex, Location::Project { root, .. }) => root.join(".agents").join("skills"),
    };
    skills.join(SKILL_NAME)
}

/// Where the record of what git pair wrote for `agent` at `location` lives.
fn record_path(agent: Agent, location: &Location) -> PathBuf {
    match location {
        Location::User { .. } => skill_dir(agent, location).join(RECORD_FILE),
        Location::Project { records, .. } => records.join(format!("{}.json", agent.as_str())),
    }
}

/// Where the agent's own configuration says the git-pair plugin is installed, if it does:
/// Claude Code's `plugins/installed_plugins.json` or `settings.json` (`enabledPlugins`) under
/// `${CLAUDE_CONFIG_DIR:-~/.claude}`, Codex's `config.toml` (`[plugins."git-pair@…"]`) under
/// `${CODEX_HOME:-~/.codex}`. The plugin carries the skill (as `git-pair:pair-loop`): a second
/// copy makes the agent list it twice.
pub fn plugin_installed(
    agent: Agent,
    home: &Path,
    claude_config_dir: Option<&Path>,
    codex_home: Option<&Path>,
) -> Option<PathBuf> {
    match agent {
        Agent::Claude => {
            let dir = claude_config_dir
                .map(Path::to_path_buf)
                .unwrap_or_else(|| home.join(".claude"));
            [
                dir.join("plugins").join("installed_plugins.json"),
                dir.join("settings.json"),
            ]
            .into_iter()
            .find(|path| {
                fs::read(path)
                    .ok()
                    .and_then(|json| serde_json::from_slice::<serde_json::Value>(&json).ok())
                    .is_some_and(|v| names_plugin(&v))
            })
        }
        Agent::Codex => {
            let path = codex_home
                .map(Path::to_path_buf)
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml");
            let text = fs::read_to_string(&path).ok()?;
            text.lines()
                .map(str::trim)
                .any(|line| {
                    line.strip_prefix("[plugins.\"")
                        .is_some_and(|rest| rest.starts_with(PLUGIN_ID_PREFIX))
                })
                .then_some(path)
        }
    }
}

/// The plugin's id before its marketplace: `git-pair@<marketplace>`.
const PLUGIN_ID_PREFIX: &str = "git-pair@";

/// Whether Claude Code's `installed_plugins.json` (`plugins`) or `settings.json`
/// (`enabledPlugins`, enabled) names the git-pair plugin.
fn names_plugin(v: &serde_json::Value) -> bool {
    let named = |map: Option<&serde_json::Value>, enabled_only: bool| {
        map.and_then(serde_json::Value::as_object).is_some_and(|m| {
            m.iter().any(|(id, value)| {
                id.starts_with(PLUGIN_ID_PREFIX) && (!enabled_only || value.as_bool() == Some(true))
            })
        })
    };
    named(v.get("plugins"), false) || named(v.get("enabledPlugins"), true)
}

/// Installs the skill for each of `agents` at `location`. Idempotent; refuses, before
/// writing anything, when a file the user changed would be replaced and `force` is off.
pub fn install(
    agents: &[Agent],
    location: &Location,
    options: Options,
) -> Result<Vec<Installed>, Error> {
    let mut plans = Vec::new();
    let mut edited = Vec::new();
    for &agent in agents {
        let dir = skill_dir(agent, location);
        let record_at = record_path(agent, location);
        let legacy = dir.join(RECORD_FILE);
        let record = match Record::read(&record_at) {
            Some(record) => record,
            None if legacy != record_at => Record::read(&legacy).unwrap_or_default(),
            None => Record::default(),
        };
        let mut files = Vec::new();
        for file in FILES {
            let path = dir.join(file.path);
            let outcome = match fs::read(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => FileOutcome::Created,
                Err(e) => return Err(Error::io("read", &path)(e)),
                Ok(existing) if existing == file.contents.as_bytes() => FileOutcome::Unchanged,
                Ok(existing) if record.wrote(file.path, &existing) => FileOutcome::Updated,
                Ok(_) if options.force => FileOutcome::Overwritten,
                Ok(_) => {
                    edited.push(path.display().to_string());
                    continue;
                }
            };
            files.push((file, FileReport { path, outcome }));
        }
        plans.push((agent, dir, record_at, record, files));
    }
    if !edited.is_empty() {
        return Err(Error::Edited { paths: edited });
    }

    let mut installed = Vec::new();
    for (agent, dir, record_at, _record, files) in plans {
        for (file, report) in &files {
            if report.outcome != FileOutcome::Unchanged {
                InstalledFile::new(&report.path, SKILL_FILE_MODE)
                    .write(file.contents.as_bytes())?;
            }
        }
        let wanted = Record::of_files();
        if Record::read(&record_at).as_ref() != Some(&wanted) {
            let mut json =
                serde_json::to_vec_pretty(&wanted).expect("a map of strings always serializes");
            json.push(b'\n');
            InstalledFile::new(&record_at, SKILL_FILE_MODE).write(&json)?;
        }
        // The record an older git pair left in the work tree, once its content is kept above.
        let legacy = dir.join(RECORD_FILE);
        if legacy != record_at && Record::read(&legacy).is_some() {
            fs::remove_file(&legacy).map_err(Error::io("remove", &legacy))?;
        }
        installed.push(Installed {
            agent,
            dir,
            files: files.into_iter().map(|(_, report)| report).collect(),
        });
    }
    Ok(installed)
}

/// The record file's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    v: u32,
    /// File (relative to the skill's folder) → SHA-1 of what git pair wrote.
    files: BTreeMap<String, String>,
}

impl Record {
    /// The record at `path`; `None` when absent or unreadable (it records nothing).
    fn read(path: &Path) -> Option<Record> {
        fs::read(path)
            .ok()
            .and_then(|json| serde_json::from_slice::<Record>(&json).ok())
            .filter(|record| record.v == RECORD_VERSION)
    }

    /// The record of this binary's files.
    fn of_files() -> Record {
        Record {
            v: RECORD_VERSION,
            files: FILES
                .iter()
                .map(|f| (f.path.to_owned(), sha1_hex(f.contents.as_bytes())))
                .collect(),
        }
    }

    /// Whether git pair wrote exactly `content` as `path`.
    fn wrote(&self, path: &str, content: &[u8]) -> bool {
        self.files
            .get(path)
            .is_some_and(|sha1| *sha1 == sha1_hex(content))
    }
}

fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Home {
        _tmp: tempfile::TempDir,
        home: PathBuf,
        repo: PathBuf,
        records: PathBuf,
    }

    impl Home {
        fn new() -> Home {
            let tmp = tempfile::tempdir().expect("temp dir");
            let home = tmp.path().join("home");
            let repo = tmp.path().join("repo");
            fs::create_dir_all(&home).expect("home");
            fs::create_dir_all(&repo).expect("repo");
            let records = tmp.path().join("repo/.git/pair/skills");
            Home {
                _tmp: tmp,
                home,
                repo,
                records,
            }
        }

        fn user(&self) -> Location<'_> {
            Location::User {
                home: &self.home,
                claude_config_dir: None,
            }
        }

        fn project(&self) -> Location<'_> {
            Location::Project {
                root: &self.repo,
                records: &self.records,
            }
        }
    }

    fn outcomes(installed: &[Installed]) -> Vec<FileOutcome> {
        installed
            .iter()
            .flat_map(|i| i.files.iter().map(|f| f.outcome))
            .collect()
    }

    fn skill_md(dir: &Path) -> String {
        fs::read_to_string(dir.join("SKILL.md")).expect("SKILL.md")
    }

    #[test]
    fn every_file_of_the_skill_folder_is_embedded() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("skills")
            .join(SKILL_NAME);
        let mut on_disk: Vec<String> = fs::read_dir(&folder)
            .expect("skill folder")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|f| f.path.to_owned()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
        let skill = FILES
            .iter()
            .find(|f| f.path == "SKILL.md")
            .expect("SKILL.md");
        assert!(
            skill
                .contents
                .starts_with(&format!("---\nname: {SKILL_NAME}\ndescription: "))
        );
    }

    #[test]
    fn each_agent_and_scope_has_its_folder() {
        let h = Home::new();
        let config = h.home.join("claude-config");
        let with_config = Location::User {
            home: &h.home,
            claude_config_dir: Some(&config),
        };
        let cases = [
            (
                Agent::Claude,
                h.user(),
                h.home.join(".claude/skills/pair-loop"),
            ),
            (Agent::Claude, with_config, config.join("skills/pair-loop")),
            (
                Agent::Claude,
                h.project(),
                h.repo.join(".claude/skills/pair-loop"),
            ),
            (
                Agent::Codex,
                h.user(),
                h.home.join(".agents/skills/pair-loop"),
            ),
            (
                Agent::Codex,
                with_config,
                h.home.join(".agents/skills/pair-loop"),
            ),
            (
                Agent::Codex,
                h.project(),
                h.repo.join(".agents/skills/pair-loop"),
            ),
        ];
        for (agent, location, want) in cases {
            assert_eq!(skill_dir(agent, &location), want, "{agent:?} {location:?}");
        }
    }

    #[test]
    fn installs_for_both_agents_and_returns_the_paths() {
        let h = Home::new();
        let installed = install(&Agent::ALL, &h.user(), Options::default()).expect("install");
        let dirs: Vec<&Path> = installed.iter().map(|i| i.dir.as_path()).collect();
        assert_eq!(
            dirs,
            [
                h.home.join(".claude/skills/pair-loop"),
                h.home.join(".agents/skills/pair-loop")
            ]
        );
        assert_eq!(outcomes(&installed), [FileOutcome::Created; 2]);
        for i in &installed {
            assert_eq!(i.files[0].path, i.dir.join("SKILL.md"));
            assert_eq!(skill_md(&i.dir), FILES[0].contents);
        }
        assert!(!h.repo.join(".claude").exists());
    }

    #[test]
    fn project_install_for_one_agent_touches_only_its_folder() {
        let h = Home::new();
        let installed =
            install(&[Agent::Codex], &h.project(), Options::default()).expect("install");
        assert_eq!(installed.len(), 1);
        assert_eq!(
            skill_md(&h.repo.join(".agents/skills/pair-loop")),
            FILES[0].contents
        );
        assert!(!h.repo.join(".claude").exists());
        assert!(!h.home.join(".agents").exists());
    }

    #[test]
    fn installing_twice_writes_nothing() {
        let h = Home::new();
        install(&Agent::ALL, &h.user(), Options::default()).expect("first");
        let dir = skill_dir(Agent::Claude, &h.user());
        let record = fs::read(dir.join(RECORD_FILE)).expect("record");
        let modified = fs::metadata(dir.join("SKILL.md"))
            .and_then(|m| m.modified())
            .expect("mtime");
        let again = install(&Agent::ALL, &h.user(), Options::default()).expect("second");
        assert_eq!(outcomes(&again), [FileOutcome::Unchanged; 2]);
        assert_eq!(fs::read(dir.join(RECORD_FILE)).expect("record"), record);
        assert_eq!(
            fs::metadata(dir.join("SKILL.md"))
                .and_then(|m| m.modified())
                .expect("mtime"),
            modified
        );
    }

    #[test]
    fn a_user_edit_is_refused_before_anything_is_written_unless_forced() {
        let h = Home::new();
        install(&[Agent::Claude], &h.user(), Options::default()).expect("first");
        let claude = skill_dir(Agent::Claude, &h.user());
        let edited = format!("{}\nMy own rule.\n", FILES[0].contents);
        fs::write(claude.join("SKILL.md"), &edited).expect("edit");

        let err = install(&Agent::ALL, &h.user(), Options::default()).expect_err("refused");
        match &err {
            Error::Edited { paths } => {
                assert_eq!(paths, &[claude.join("SKILL.md").display().to_string()])
            }
            other => panic!("{other}"),
        }
        assert!(err.to_string().contains("--force"), "{err}");
        assert_eq!(skill_md(&claude), edited);
        assert!(
            !skill_dir(Agent::Codex, &h.user()).exists(),
            "nothing is written when one file is refused"
        );

        let forced = install(&Agent::ALL, &h.user(), Options { force: true }).expect("forced");
        assert_eq!(
            outcomes(&forced),
            [FileOutcome::Overwritten, FileOutcome::Created]
        );
        assert_eq!(skill_md(&claude), FILES[0].contents);
    }

    #[test]
    fn a_file_without_a_record_counts_as_the_users() {
        let h = Home::new();
        let dir = skill_dir(Agent::Codex, &h.project());
        fs::create_dir_all(&dir).expect("dir");
        fs::write(dir.join("SKILL.md"), "---\nname: pair-loop\n---\nmine\n").expect("write");
        assert!(matches!(
            install(&[Agent::Codex], &h.project(), Options::default()),
            Err(Error::Edited { .. })
        ));
    }

    #[test]
    fn a_file_an_earlier_git_pair_wrote_is_updated_without_force() {
        let h = Home::new();
        let dir = skill_dir(Agent::Claude, &h.project());
        let older = "---\nname: pair-loop\ndescription: older\n---\nolder text\n";
        fs::create_dir_all(&dir).expect("dir");
        fs::write(dir.join("SKILL.md"), older).expect("write");
        let record = Record {
            v: RECORD_VERSION,
            files: [("SKILL.md".to_owned(), sha1_hex(older.as_bytes()))].into(),
        };
        fs::write(
            dir.join(RECORD_FILE),
            serde_json::to_vec(&record).expect("json"),
        )
        .expect("record");
        fs::write(dir.join("notes.md"), "the user's own file").expect("extra");

        let installed =
            install(&[Agent::Claude], &h.project(), Options::default()).expect("install");
        assert_eq!(outcomes(&installed), [FileOutcome::Updated]);
        assert_eq!(skill_md(&dir), FILES[0].contents);
        assert_eq!(
            Record::read(&h.records.join("claude.json")),
            Some(Record::of_files())
        );
        assert!(
            !dir.join(RECORD_FILE).exists(),
            "the record an older git pair left in the work tree is gone"
        );
        assert_eq!(
            fs::read_to_string(dir.join("notes.md")).expect("extra"),
            "the user's own file"
        );
    }

    #[test]
    fn reports_serialize_for_json_output() {
        let report = Installed {
            agent: Agent::Codex,
            dir: PathBuf::from("/h/.agents/skills/pair-loop"),
            files: vec![FileReport {
                path: PathBuf::from("/h/.agents/skills/pair-loop/SKILL.md"),
                outcome: FileOutcome::Created,
            }],
        };
        assert_eq!(
            serde_json::to_string(&report).expect("json"),
            r#"{"agent":"codex","dir":"/h/.agents/skills/pair-loop","files":[{"path":"/h/.agents/skills/pair-loop/SKILL.md","outcome":"created"}]}"#
        );
    }
}
