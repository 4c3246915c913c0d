//! The `install-man` report (where the manual pages went and whether `man` finds them there)
//! and the `completions` one (the script).

use std::path::PathBuf;

use serde::Serialize;

/// Manual pages written.
#[derive(Debug, Clone, Serialize)]
pub struct InstallMan {
    /// The manual directory (the one holding `man1/`).
    pub dir: PathBuf,
    /// The pages written, by file name (`git-pair.1`, `git-pair-start.1`, …).
    pub pages: Vec<String>,
    /// Whether `dir` sits beside the running `git-pair` (`<prefix>/bin` → `<prefix>/share/man`),
    /// where `man` looks without any `MANPATH`.
    pub beside_binary: bool,
}

/// A shell completion script.
#[derive(Debug, Clone, Serialize)]
pub struct Completions {
    pub shell: String,
    pub script: String,
}
