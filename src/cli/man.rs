//! `git pair install-man` and `git pair completions`: the manual pages and shell completions,
//! both generated from the clap definitions the parser itself uses.

use std::path::PathBuf;

use super::{CommandError, Report};
use crate::ops;

/// Install the manual pages, so that `git help pair`, `git pair --help` and `man git-pair`
/// work.
///
/// Writes git-pair.1 and one page per command (git-pair-start.1, git-pair-review.1, …) into
/// DIR/man1. The default DIR is beside the running git-pair: <prefix>/share/man for
/// <prefix>/bin/git-pair (~/.cargo/share/man after `cargo install`), where man finds pages
/// for every program on PATH without MANPATH. Run it again after upgrading git-pair.
#[derive(Debug, clap::Args)]
pub struct InstallManArgs {
    /// The manual directory to write into (its man1/ is created).
    #[arg(long, value_name = "dir")]
    pub dir: Option<PathBuf>,
}

/// Print a shell completion script for git-pair to stdout.
///
/// bash: git pair completions bash > ~/.local/share/bash-completion/completions/git-pair
/// zsh: git pair completions zsh > "${fpath[1]}/_git-pair"
/// fish: git pair completions fish > ~/.config/fish/completions/git-pair.fish
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The manual pages: `git-pair.1`, and `git-pair-<command>.1` for each command shown in help.
fn pages(root: clap::Command) -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    let root = root.name("git-pair").bin_name("git pair");
    let mut pages = Vec::new();
    let mut text = Vec::new();
    clap_mangen::Man::new(root.clone()).render(&mut text)?;
    pages.push(("git-pair.1".to_owned(), text));
    for sub in root.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("git-pair-{}", sub.get_name());
        let command = sub
            .clone()
            .name(name.clone())
            .bin_name(format!("git pair {}", sub.get_name()));
        let mut text = Vec::new();
        clap_mangen::Man::new(command).render(&mut text)?;
        pages.push((format!("{name}.1"), text));
    }
    Ok(pages)
}

/// Installs the pages of `root` (the whole command line's definition).
pub fn install(args: &InstallManArgs, root: clap::Command) -> Result<Report, CommandError> {
    let dir = match args.dir.clone().or_else(ops::man::default_dir) {
        Some(dir) => dir,
        None => {
            return Err(CommandError::failed(
                "cannot tell where git-pair is installed, so not where its manual goes",
            )
            .with_hint(
                "pass the manual directory: git pair install-man --dir ~/.local/share/man",
            ));
        }
    };
    let pages = pages(root).map_err(|e| CommandError::failed(format!("render the manual: {e}")))?;
    let installed = ops::man::install(&dir, &pages).map_err(|(action, path, e)| {
        CommandError::failed(format!("cannot {action} {}: {e}", path.display()))
            .with_hint("pass a directory you can write: git pair install-man --dir DIR")
    })?;
    Ok(Report::rendered(&installed, crate::render::man::human))
}

/// Prints the completion script of `command` (the whole command line's definition).
pub fn completions(
    args: &CompletionsArgs,
    mut command: clap::Command,
) -> Result<Report, CommandError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "git-pair", &mut script);
    let script = String::from_utf8(script)
        .map_err(|_| CommandError::failed("the completion script is not UTF-8"))?;
    let completions = crate::model::report::man::Completions {
        shell: args.shell.to_string(),
        script,
    };
    let mut report = Report::rendered(&completions, crate::render::man::completions);
    report.raw = true;
    Ok(report)
}
