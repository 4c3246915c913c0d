//! The repository's own configuration as the hooks need it: where git runs hooks from
//! (`core.hooksPath`, resolved as git resolves it), and adding or removing one value of a
//! multi-valued key in the repository's config file (`<common dir>/config`). Edits go through
//! gix's lossless config parser, are written under `config.lock` and renamed into place, so the
//! rest of the file is kept byte for byte and a concurrent `git config` never loses a write.

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use gix::bstr::ByteSlice;

use super::{Error, Repo};

/// A `section.name` key without subsection, e.g. `notes.rewriteRef`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigKey {
    pub section: &'static str,
    pub name: &'static str,
}

impl std::fmt::Display for ConfigKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.section, self.name)
    }
}

/// What adding a value did to the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    /// The file had no `[section]` and got one for the value.
    pub created_section: bool,
}

impl Repo {
    /// The directory git runs hooks from: `core.hooksPath` (`~` expanded; a relative path is
    /// relative to the work tree root, where git runs hooks, or to the git directory of a bare
    /// repository), else `<common git dir>/hooks`.
    pub fn hooks_dir(&self) -> Result<PathBuf, Error> {
        let configured = self
            .repo
            .config_snapshot()
            .trusted_path("core.hooksPath")
            .map_err(Error::git("read core.hooksPath"))?
            .filter(|path| !path.as_os_str().is_empty());
        Ok(match configured {
            Some(path) if path.is_absolute() => path,
            Some(path) => match self.work_dir().ok() {
                Some(root) => root.join(path),
                None => self.common_dir().join(path),
            },
            None => self.common_dir().join("hooks"),
        })
    }

    /// The repository's own config file (shared by its linked worktrees).
    pub fn local_config_path(&self) -> PathBuf {
        self.common_dir().join("config")
    }

    /// Every value of `key` in force (all configuration files, as read at open).
    pub fn config_has_value(&self, key: ConfigKey, value: &str) -> bool {
        self.config_values(&key.to_string())
            .iter()
            .any(|v| v == value)
    }

    /// Adds `value` to `key` in the repository's config file, at the end of its last
    /// `[section]` (created when there is none). Returns `None` when the file already holds
    /// that value for the key.
    pub fn add_local_config_value(
        &self,
        key: ConfigKey,
        value: &str,
    ) -> Result<Option<Added>, Error> {
        self.edit_local_config(|file| {
            if values_of(file, key).iter().any(|v| v == value) {
                return Ok(None);
            }
            let created_section = file
                .sections_by_name(key.section)
                .is_none_or(|mut s| !s.any(|section| section.header().subsection_name().is_none()));
            file.section_mut_or_create_new(key.section, None)
                .map_err(Error::git("add a config section"))?
                .push(key.name, Some(value.as_bytes().as_bstr()))
                .map_err(Error::git("add a config value"))?;
            Ok(Some(Added { created_section }))
        })
    }

    /// Removes `value` from `key` in the repository's config file (every occurrence), and then
    /// the section itself when `remove_empty_section` and no value is left in it. Returns
    /// whether a value was removed.
    pub fn remove_local_config_value(
        &self,
        key: ConfigKey,
        value: &str,
        remove_empty_section: bool,
    ) -> Result<bool, Error> {
        self.edit_local_config(|file| {
            let mut removed = false;
            // Where the value is its section's last entry (where `add` put it), the whole
            // line goes, leaving the file as it was before the value was added.
            let ids: Vec<_> = file
                .sections_and_ids_by_name(key.section)
                .map(|sections| {
                    sections
                        .filter(|(s, _)| s.header().subsection_name().is_none())
                        .map(|(_, id)| id)
                        .collect()
                })
                .unwrap_or_default();
            for id in ids {
                let Some(mut section) = file.section_mut_by_id(id) else {
                    continue;
                };
                while section
                    .value_names()
                    .last()
                    .is_some_and(|name| name.eq_ignore_ascii_case(key.name))
                    && section
                        .values(key.name)
                        .last()
                        .is_some_and(|v| v.as_bytes() == value.as_bytes())
                {
                    section.pop();
                    removed = true;
                }
            }
            // Anywhere else (the user added values after it), only the value goes.
            loop {
                let Ok(mut values) = file.raw_values_mut(format!("{key}").as_str()) else {
                    break;
                };
                let current = values.get().map_err(Error::git("read a config value"))?;
                let Some(index) = current
                    .iter()
                    .position(|v| v.as_bytes() == value.as_bytes())
                else {
                    break;
                };
                values.delete(index);
                removed = true;
            }
            if removed && remove_empty_section {
                let empty: Vec<_> = file
                    .sections_and_ids_by_name(key.section)
                    .map(|sections| {
                        sections
                            .filter(|(s, _)| {
                                s.header().subsection_name().is_none() && s.body().num_values() == 0
                            })
                            .map(|(_, id)| id)
                            .collect()
                    })
                    .unwrap_or_default();
                for id in empty {
                    file.remove_section_by_id(id);
                }
            }
            Ok(removed.then_some(removed))
        })
        .map(|r| r.is_some())
    }

    /// Reads the config file under `config.lock`, lets `edit` change it, and writes it back
    /// (same permissions) when `edit` returns `Some`; the lock is released either way.
    fn edit_local_config<T>(
        &self,
        edit: impl FnOnce(&mut gix::config::File) -> Result<Option<T>, Error>,
    ) -> Result<Option<T>, Error> {
        let path = self.local_config_path();
        let lock = super::lock::acquire(&path, std::time::Duration::from_secs(1))
            .map_err(super::lock::NotLocked::into_error)?;
        let (mut bytes, mode) = match std::fs::read(&path) {
            Ok(bytes) => {
                let mode = std::fs::metadata(&path)
                    .map_err(Error::io("read", &path))?
                    .permissions()
                    .mode();
                (bytes, Some(mode))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), None),
            Err(e) => return Err(Error::io("read", &path)(e)),
        };
        let meta = gix::config::file::Metadata::from(gix::config::Source::Local).at(&path);
        let mut file = gix::config::File::from_bytes_owned(&mut bytes, meta, Default::default())
            .map_err(Error::git("parse the repository's config file"))?;
        let Some(result) = edit(&mut file)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(bytes.len() + 64);
        file.write_to(&mut out)
            .map_err(Error::io("write", lock.lock_path()))?;
        super::lock::commit(lock, &out, mode)?;
        Ok(Some(result))
    }
}

/// The values of `key` in `file`, in file order.
fn values_of(file: &gix::config::File, key: ConfigKey) -> Vec<String> {
    file.raw_values(format!("{key}").as_str())
        .map(|values| {
            values
                .iter()
                .map(|v| v.to_str_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}
