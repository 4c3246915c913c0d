//! `git pair install-man`: writes the manual pages (rendered by the cli from its clap
//! definitions) into a manual directory, each atomically.

use std::path::{Path, PathBuf};

use crate::model::report::man::InstallMan;
use crate::util::fs::{AtomicWrite, Mode};

/// Where `man` finds pages for a program in `<prefix>/bin` with no `MANPATH`: man-db adds
/// `<prefix>/share/man` for every `PATH` entry ending in `bin`.
pub fn default_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    Some(exe.parent()?.parent()?.join("share").join("man"))
}

/// Writes `pages` (file name, roff text) into `dir/man1/`.
pub fn install(
    dir: &Path,
    pages: &[(String, Vec<u8>)],
) -> Result<InstallMan, crate::util::fs::Failure> {
    let section = dir.join("man1");
    for (name, text) in pages {
        AtomicWrite::new(Mode::Umasked(0o666)).write(&section.join(name), text)?;
    }
    let beside_binary = default_dir().is_some_and(|d| {
        std::fs::canonicalize(&d).unwrap_or(d)
            == std::fs::canonicalize(dir).unwrap_or(dir.to_owned())
    });
    Ok(InstallMan {
        dir: dir.to_owned(),
        pages: pages.iter().map(|(name, _)| name.clone()).collect(),
        beside_binary,
    })
}
