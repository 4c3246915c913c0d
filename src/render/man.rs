//! Human views of `install-man` and `completions`.

use std::io::Write;

use crate::model::report::man::{Completions, InstallMan};

pub fn human(report: &InstallMan, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "installed {} manual pages in {}",
        report.pages.len(),
        report.dir.join("man1").display()
    )?;
    if report.beside_binary {
        writeln!(
            out,
            "next: git help pair (or git pair --help, man git-pair, man git-pair-review)"
        )
    } else {
        writeln!(
            out,
            "man looks there only when it is on MANPATH: export MANPATH=\"{}:$MANPATH\"",
            report.dir.display()
        )
    }
}

/// The script itself, byte for byte.
pub fn completions(report: &Completions, out: &mut dyn Write) -> std::io::Result<()> {
    out.write_all(report.script.as_bytes())
}
