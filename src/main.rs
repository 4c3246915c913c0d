//! The `git-pair` binary: everything lives in the library; this only hands over the exit code.
//!
//! Placeholder on the `helper-diff` branch, where the `cli` module does not exist yet: the lead
//! keeps main's version (`git_pair::cli::main()`).

fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
