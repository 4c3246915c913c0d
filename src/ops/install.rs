//! `hooks install` / `hooks uninstall`: the git hook shims in the directory git really uses
//! (`core.hooksPath` honoured), and `notes.rewriteRef=refs/notes/pair` in the repository's
//! config so that `git commit --amend` and `git rebase` carry the review notes (git's own
//! mechanism). Install remembers in `.git/pair/hooks-state.json` whether it added that value;
//! uninstall removes it only then, so a value the user set stays.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Context, Error};
use crate::install::hooks::{self, Hook};
use crate::store::ConfigKey;
use crate::util::fs::{AtomicWrite, Mode};

/// The config key that makes git copy notes when commits are rewritten.
pub const REWRITE_REF: ConfigKey = ConfigKey {
    section: "notes",
    name: "rewriteRef",
};
/// The notes ref git pair writes, as `notes.rewriteRef` names it.
pub const NOTES_REF: &str = crate::store::notes::NOTES_REF;

pub use crate::model::report::hooks::ConfigChange;
use crate::model::report::hooks::{HooksInstalled, HooksUninstalled};

/// What install changed outside the hooks directory, kept for uninstall.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    v: u32,
    /// Install added `notes.rewriteRef=refs/notes/pair` to the config file.
    #[serde(default)]
    rewrite_ref_set: bool,
    /// ... and created the `[notes]` section for it.
    #[serde(default)]
    rewrite_ref_section_created: bool,
}

const STATE_VERSION: u32 = 1;

fn state_path(ctx: &Context) -> PathBuf {
    ctx.repo.pair_dir().join("hooks-state.json")
}

fn read_state(ctx: &Context) -> Result<State, Error> {
    let path = state_path(ctx);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::BadFile {
            what: "hooks state",
            path: path.display().to_string(),
            expected: "JSON written by git pair hooks install",
            detail: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
        Err(source) => Err(Error::ReadFile {
            what: "hooks state",
            path: path.display().to_string(),
            source,
        }),
    }
}

fn write_state(ctx: &Context, state: &State) -> Result<(), Error> {
    let path = state_path(ctx);
    let io = |source| Error::WriteFile {
        what: "hooks state",
        path: path.display().to_string(),
        source,
    };
    if *state == State::default() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
            _ => Ok(()),
        };
    }
    let mut json = serde_json::to_vec_pretty(state).expect("a struct of plain fields serializes");
    json.push(b'\n');
    AtomicWrite::new(Mode::Umasked(0o666))
        .write(&path, &json)
        .map_err(|(_, _, source)| io(source))
}

fn contexts(ctx: &Context) -> Result<(PathBuf, PathBuf), Error> {
    Ok((
        ctx.repo.hooks_dir()?,
        ctx.repo.pair_dir().join("hooks-backup"),
    ))
}

/// Installs the shims (`pre-commit`, `pre-merge-commit` and `commit-msg` gating on review
/// when `gate`) and sets
/// `notes.rewriteRef`. Running it twice changes nothing.
pub fn install(ctx: &Context, gate: bool) -> Result<HooksInstalled, Error> {
    let (hooks_dir, backup_dir) = contexts(ctx)?;
    let hooks = hooks::install(
        &hooks::Context {
            hooks_dir: &hooks_dir,
            backup_dir: &backup_dir,
        },
        &Hook::ALL,
        hooks::Options { gate },
    )?;
    let mut state = read_state(ctx)?;
    let rewrite_ref = if ctx.repo.config_has_value(REWRITE_REF, NOTES_REF) {
        ConfigChange::AlreadySet
    } else {
        match ctx.repo.add_local_config_value(REWRITE_REF, NOTES_REF)? {
            Some(added) => {
                state.rewrite_ref_set = true;
                state.rewrite_ref_section_created = added.created_section;
                ConfigChange::Set
            }
            None => ConfigChange::AlreadySet,
        }
    };
    if rewrite_ref == ConfigChange::Set {
        state.v = STATE_VERSION;
        write_state(ctx, &state)?;
    }
    Ok(HooksInstalled {
        hooks_dir: hooks_dir.display().to_string(),
        gate,
        hooks: hooks.hooks,
        notes_rewrite_ref: rewrite_ref,
        tracked_hooks_dir: tracked_dir(ctx, &hooks_dir),
    })
}

/// `hooks_dir` relative to the work tree, when the project tracks files in it.
fn tracked_dir(ctx: &Context, hooks_dir: &std::path::Path) -> Option<String> {
    let work = std::fs::canonicalize(ctx.repo.work_dir().ok()?).ok()?;
    let dir = std::fs::canonicalize(hooks_dir).ok()?;
    let relative = dir.strip_prefix(&work).ok()?.to_str()?.to_owned();
    if relative.is_empty() || relative == ".git" || relative.starts_with(".git/") {
        return None;
    }
    let index = ctx.repo.gix().index_or_empty().ok()?;
    let prefix = format!("{relative}/");
    index
        .entries()
        .iter()
        .any(|e| e.path(&index).starts_with(prefix.as_bytes()))
        .then_some(relative)
}

/// Removes the shims, putting back what was there, and the `notes.rewriteRef` value install
/// added (never one the user set).
pub fn uninstall(ctx: &Context) -> Result<HooksUninstalled, Error> {
    let (hooks_dir, backup_dir) = contexts(ctx)?;
    let hooks = hooks::uninstall(
        &hooks::Context {
            hooks_dir: &hooks_dir,
            backup_dir: &backup_dir,
        },
        &Hook::ALL,
    )?;
    let state = read_state(ctx)?;
    let rewrite_ref = if state.rewrite_ref_set {
        ctx.repo.remove_local_config_value(
            REWRITE_REF,
            NOTES_REF,
            state.rewrite_ref_section_created,
        )?;
        write_state(ctx, &State::default())?;
        ConfigChange::Unset
    } else if ctx.repo.config_has_value(REWRITE_REF, NOTES_REF) {
        ConfigChange::LeftAlone
    } else {
        ConfigChange::NotSet
    };
    // Best effort: a `.git/pair` that install created and nothing else uses goes too.
    let _ = std::fs::remove_dir(ctx.repo.pair_dir());
    Ok(HooksUninstalled {
        hooks_dir: hooks_dir.display().to_string(),
        hooks: hooks.hooks,
        notes_rewrite_ref: rewrite_ref,
    })
}
