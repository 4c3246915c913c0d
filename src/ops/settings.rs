//! `git pair set`: a run's own setting changed (recorded) or handed back to `git config`,
//! and the checks every setting's value passes (at `start` too). What is in force is computed
//! by [`crate::model::settings`], whose table lists the settings and how each parses.

use serde_json::Value;

use super::{Context, Error};
use crate::model::report::set::SettingSet;
pub use crate::model::settings::{
    Effective, Source, apply, effective, is_tool_name, review_settings,
};
use crate::model::settings::{Setting, Shape};
use crate::model::{Body, SetSetting};
use crate::store::Append;

/// The reviewer a round of a run gets now, by the one order
/// ([`crate::model::reviewer::command_reviews`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Reviewer {
    /// The realization to bind: `command`, or the reviewer the run or configuration names.
    pub realization: String,
    /// The reviewer command (argv), when it is the reviewer.
    pub command: Option<Vec<String>>,
    /// Its one name ([`crate::model::reviewer::name`]): `command:approve.sh`, `codex`.
    pub name: String,
    /// Where it came from: the run, a config key (`pair.reviewerCommand` for a configured
    /// command), `--reviewer-cmd`, or the default.
    pub source: Source,
}

/// The reviewer of the next round of run `manifest` (of a new run, for `None`): `given`
/// (`--reviewer-cmd`, validated), else the run's reviewer, `pair.reviewer`, a configured
/// `pair.reviewerCommand`, the default.
pub fn reviewer(
    manifest: Option<&crate::model::Manifest>,
    options: &crate::config::Options,
    given: Option<&[String]>,
) -> Reviewer {
    let mut new_run = crate::model::Manifest::empty();
    new_run.run_settings = Some(Default::default());
    let setting = effective(manifest.unwrap_or(&new_run), options)
        .into_iter()
        .find(|e| e.key == Setting::Reviewer.name())
        .expect("the settings table has a reviewer");
    let configured = options.reviewer_command.as_deref();
    if crate::model::reviewer::command_reviews(
        given.is_some(),
        configured.is_some(),
        &setting.source,
    ) && let Some(argv) = given.or(configured)
    {
        let realization = crate::model::reviewer::COMMAND.to_owned();
        return Reviewer {
            name: crate::model::reviewer::name(&realization, argv.first().map(String::as_str)),
            realization,
            command: Some(argv.to_vec()),
            source: Source::Config(if given.is_some() {
                "--reviewer-cmd"
            } else {
                "pair.reviewerCommand"
            }),
        };
    }
    let realization = setting.value.as_str().unwrap_or_default().to_owned();
    // An ACP reviewer goes by its agent (`acp:claude-agent-acp`), as it will when it binds.
    let agent = (realization == crate::model::reviewer::ACP)
        .then_some(options.acp_command.as_deref())
        .flatten()
        .and_then(crate::model::reviewer::acp_agent);
    Reviewer {
        name: crate::model::reviewer::name(&realization, agent),
        realization,
        command: None,
        source: setting.source,
    }
}

/// Every run setting in force for `manifest` ([`effective`]), with the reviewer as it would
/// bind: a configured reviewer command that reviews shows as its name, from
/// `pair.reviewerCommand`.
pub fn in_force(
    manifest: &crate::model::Manifest,
    options: &crate::config::Options,
) -> Vec<Effective> {
    let now = reviewer(Some(manifest), options, None);
    effective(manifest, options)
        .into_iter()
        .map(|e| {
            if e.key != Setting::Reviewer.name() {
                return e;
            }
            Effective {
                value: now.name.clone().into(),
                source: now.source.clone(),
                ..e
            }
        })
        .collect()
}

/// Parses `value` for the `set` key `key` by the settings table, refusing what does not parse
/// and reviewer names no realization defines.
pub fn parse(ctx: &Context, key: &str, value: &str) -> Result<Value, Error> {
    let setting = known(key)?;
    let parsed = setting.parse(value.trim()).map_err(|expected| {
        Error::Usage(format!(
            "'{}' is not a valid {key}: expected {expected}",
            value.escape_debug()
        ))
    })?;
    if matches!(setting.spec().shape, Shape::Reviewer | Shape::Reviewers) {
        let names = match &parsed {
            Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
            other => other.as_str().into_iter().collect::<Vec<_>>(),
        };
        for name in names {
            known_reviewer(ctx, name)?;
        }
    }
    Ok(parsed)
}

/// The setting whose `set` key is `key`, or the refusal that lists them.
fn known(key: &str) -> Result<Setting, Error> {
    Setting::from_name(key).ok_or_else(|| {
        Error::Usage(format!(
            "unknown setting '{}' (settings: {})",
            key.escape_debug(),
            Setting::names()
        ))
    })
}

/// Refuses a reviewer name that no realization (shipped or from `pair.surfaceFile`) defines.
pub fn known_reviewer(ctx: &Context, name: &str) -> Result<(), Error> {
    // The common case without loading (and validating) every realization; any other answer
    // comes from the full load below, with its error.
    if ctx.options.surface_file.is_none() && crate::review::Surfaces::shipped_defines(name) {
        return Ok(());
    }
    let surfaces = crate::review::Surfaces::load(ctx.options.surface_file.as_deref())
        .map_err(crate::review::Error::from)?;
    surfaces.get(name).map_err(crate::review::Error::from)?;
    Ok(())
}

/// The program a named reviewer runs when it is not on `PATH` (`None` when it is, or when the
/// reviewer runs no program of its own: builtin, a reviewer command): what `start` warns about
/// before the first review would fail or fall back.
pub fn missing_reviewer_program(ctx: &Context, name: &str) -> Option<String> {
    let surfaces = crate::review::Surfaces::load(ctx.options.surface_file.as_deref()).ok()?;
    let binary = surfaces.get(name).ok()?.binary.clone()?;
    let path = std::env::var_os("PATH");
    crate::process::find_executable(&binary, path.as_deref())
        .is_none()
        .then_some(binary)
}

/// Records `git pair set key value` (or `--unset`: `None`) on the active run; returns the
/// setting as in force afterwards.
pub fn set(ctx: &Context, key: &str, value: Option<&str>) -> Result<SettingSet, Error> {
    let parsed = match value {
        Some(text) => Some(parse(ctx, key, text)?),
        None => {
            known(key)?;
            None
        }
    };
    let run_id = super::common::select::active(ctx, None)?;
    let appended = ctx.repo.append(&run_id, |state| {
        if state.manifest.is_finished() {
            return Err(crate::model::Refusal::Finished {
                run_id: run_id.to_string(),
            });
        }
        let subject = match &parsed {
            Some(v) => format!("set: {key} = {v}"),
            None => format!("set: {key} follows git config"),
        };
        Ok(Append::record(
            Body::Set(SetSetting {
                key: key.to_owned(),
                value: parsed.clone(),
            }),
            subject,
        ))
    })?;
    ctx.refresh_handoff(&run_id)?;
    let now = in_force(&appended.state.manifest, &ctx.options)
        .into_iter()
        .find(|e| e.key == key)
        .expect("a known key");
    Ok(SettingSet {
        run_id,
        key: now.key,
        from: now.source.as_str().to_owned(),
        value: now.value,
    })
}
