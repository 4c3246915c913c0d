//! `git pair set`: a run's own setting changed (recorded) or handed back to `git config`,
//! and the checks every setting's value passes (at `start` too). What is in force is computed
//! by [`crate::settings`].

use serde_json::Value;

use super::{Context, Error};
use crate::model::report::set::SettingSet;
pub use crate::model::settings::{Effective, Source, apply, effective, review_settings};
use crate::model::{Body, SETTING_KEYS, SetSetting};
use crate::store::Append;

/// Parses `value` for the `set` key `key`, refusing what does not parse and reviewer names
/// no realization defines.
pub fn parse(ctx: &Context, key: &str, value: &str) -> Result<Value, Error> {
    let bad = |expected: &str| {
        Error::Usage(format!(
            "'{}' is not a valid {key}: expected {expected}",
            value.escape_debug()
        ))
    };
    let value = value.trim();
    match key {
        "reviewer" => {
            known_reviewer(ctx, value)?;
            Ok(value.into())
        }
        "reviewers" => {
            let names: Vec<String> = value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            if names.is_empty() {
                return Err(bad("a comma-separated list of reviewers"));
            }
            for name in &names {
                known_reviewer(ctx, name)?;
            }
            Ok(names.into())
        }
        "coder" => {
            if !is_tool_name(value) {
                return Err(bad("a tool name (letters, digits, '-', '_', '.')"));
            }
            Ok(value.into())
        }
        "max-rounds" => value
            .parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .map(Value::from)
            .ok_or_else(|| bad("a positive whole number")),
        "budget-usd" => value
            .parse::<f64>()
            .ok()
            .filter(|b| b.is_finite() && *b >= 0.0)
            .map(Value::from)
            .ok_or_else(|| bad("a non-negative number of US dollars")),
        "review-timeout" => value
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .map(Value::from)
            .ok_or_else(|| bad("a positive number of seconds")),
        _ => Err(Error::Usage(format!(
            "unknown setting '{}' (settings: {})",
            key.escape_debug(),
            SETTING_KEYS.join(", ")
        ))),
    }
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

/// A coder or reviewer name as runs record it.
pub fn is_tool_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// Records `git pair set key value` (or `--unset`: `None`) on the active run; returns the
/// setting as in force afterwards.
pub fn set(ctx: &Context, key: &str, value: Option<&str>) -> Result<SettingSet, Error> {
    let parsed = match value {
        Some(text) => Some(parse(ctx, key, text)?),
        None => {
            if !SETTING_KEYS.contains(&key) {
                parse(ctx, key, "")?;
            }
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
    let now = effective(&appended.state.manifest, &ctx.options)
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
