//! One file an installer puts in a user's place (a hook shim, a hook's backup, a skill file),
//! written whole or not at all: the hook and skill installers' one write.

use std::path::Path;

use crate::util::fs::{AtomicWrite, Failure, Mode};

/// A file an installer writes, with the mode it must end with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InstalledFile<'a> {
    /// Where the file goes.
    pub path: &'a Path,
    /// Its mode, exactly (a hook keeps its executable bits, a backup stays private).
    pub mode: u32,
}

impl<'a> InstalledFile<'a> {
    /// The file at `path`, ending with `mode`.
    pub fn new(path: &'a Path, mode: u32) -> Self {
        InstalledFile { path, mode }
    }

    /// Replaces the file with `bytes` through a temporary file in its own directory (created
    /// when missing) and a rename, so git never runs half a hook and an agent never reads
    /// half a skill.
    pub fn write(&self, bytes: &[u8]) -> Result<(), Failure> {
        AtomicWrite::new(Mode::Exactly(self.mode)).write(self.path, bytes)
    }
}
