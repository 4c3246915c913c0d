//! Human view of `install-man`.

use std::io::Write;

use crate::model::report::man::InstallMan;

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
