//! A reviewer's one name, and the one order that picks the reviewer of a round (SPEC §6.1).
//! Every place that names a reviewer — `status`, `review --json`, the records and so the
//! manifest, the transcript and the PR body, the `Reviewed-by:` trailer and the review note —
//! shows [`name`]'s answer for the realization that runs (or would run). Pure.

use super::settings::Source;

/// The realization that runs the user's reviewer command.
pub const COMMAND: &str = "command";

/// The realization that drives an Agent Client Protocol agent (`pair.acpCommand`).
pub const ACP: &str = "acp";

/// The word of an ACP agent's command line (program first) that names the agent: its last
/// argument that is not an option, without a version after `@` (`npx -y
/// @zed-industries/claude-agent-acp@0.23.1` → `@zed-industries/claude-agent-acp`), else the
/// program. [`name`] takes its basename: `acp:claude-agent-acp`.
pub fn acp_agent(argv: &[String]) -> Option<&str> {
    let word = argv
        .iter()
        .skip(1)
        .rev()
        .find(|a| !a.starts_with('-') && !a.is_empty())
        .or_else(|| argv.first())?;
    // A version pin is not part of the name: `pkg@1.2`, `@scope/pkg@1.2`.
    Some(match word.rfind('@') {
        Some(at) if at > 0 => &word[..at],
        _ => word,
    })
}

/// The longest program name a reviewer's name carries (longer ones are clipped).
const MAX_PROGRAM_CHARS: usize = 64;

/// The name realization `realization` goes by everywhere: the realization's own name
/// (`codex`, `claude`, `builtin`), or, for a reviewer command (`program` is its argv[0] or
/// the path it resolved to), `<realization>:<basename>` — `command:approve.sh`. The name is one
/// token fit for a trailer and a logfmt note: characters other than ASCII letters, digits,
/// `.`, `_`, `+` and `-` in the basename become `_`; a command with no usable basename is
/// named by its realization alone.
pub fn name(realization: &str, program: Option<&str>) -> String {
    let base = program
        .and_then(|p| p.rsplit('/').next())
        .filter(|b| !b.is_empty() && *b != "." && *b != "..");
    match base {
        Some(base) => {
            let clean: String = base
                .chars()
                .take(MAX_PROGRAM_CHARS)
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "._+-".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            format!("{realization}:{clean}")
        }
        None => realization.to_owned(),
    }
}

/// Whether `name` (as [`name`] makes it: `codex`, `command:approve.sh`) names realization
/// `realization`.
pub fn names(name: &str, realization: &str) -> bool {
    name.strip_prefix(realization)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
}

/// Whether the round's reviewer is the reviewer command, by the one order: `--reviewer-cmd`
/// (`given`), then the run's own reviewer (a flag to `start`, `git pair set`), then
/// `pair.reviewer`, then a configured `pair.reviewerCommand` (`configured`), then the
/// default. `reviewer_from` is where the reviewer setting in force came from: a configured
/// command never overrides a reviewer the run or the configuration named.
pub fn command_reviews(given: bool, configured: bool, reviewer_from: &Source) -> bool {
    given || (configured && *reviewer_from == Source::Default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_names_its_realization_only() {
        assert!(names(&name("command", Some("/x/approve.sh")), "command"));
        assert!(names("codex", "codex"));
        assert!(!names("codex", "command"));
        assert!(!names("commandeer:x", "command"));
    }

    #[test]
    fn an_acp_agent_is_named_by_its_package_or_program() {
        let argv = |words: &str| words.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let cases = [
            (
                "npx @zed-industries/claude-agent-acp",
                "acp:claude-agent-acp",
            ),
            (
                "npx -y @zed-industries/claude-agent-acp@0.23.1",
                "acp:claude-agent-acp",
            ),
            ("/opt/bin/claude-agent-acp", "acp:claude-agent-acp"),
            ("gemini --experimental-acp", "acp:gemini"),
            (
                "python3 fixtures/reviewers/acp-agent.py approve",
                "acp:approve",
            ),
        ];
        for (words, want) in cases {
            assert_eq!(name(ACP, acp_agent(&argv(words))), want, "{words}");
        }
        assert_eq!(acp_agent(&[]), None);
    }

    #[test]
    fn a_command_is_named_by_its_program() {
        let cases = [
            ("codex", None, "codex"),
            ("builtin", None, "builtin"),
            ("command", Some("approve.sh"), "command:approve.sh"),
            ("command", Some("/abs/dir/approve.sh"), "command:approve.sh"),
            ("command", Some("./rev"), "command:rev"),
            ("command", Some("my reviewer\n=x"), "command:my_reviewer__x"),
            ("command", Some("révu"), "command:r_vu"),
            ("command", Some("dir/"), "command"),
            ("command", Some(".."), "command"),
            ("command", None, "command"),
        ];
        for (realization, program, want) in cases {
            assert_eq!(name(realization, program), want, "{program:?}");
        }
        let long = "x".repeat(200);
        assert_eq!(name("command", Some(&long)).len(), "command:".len() + 64);
    }

    #[test]
    fn the_order_puts_a_configured_command_below_any_named_reviewer() {
        let run = Source::Run;
        let config = Source::Config("pair.reviewer");
        let default = Source::Default;
        assert!(
            command_reviews(true, false, &run),
            "--reviewer-cmd beats all"
        );
        assert!(command_reviews(true, true, &config));
        assert!(
            !command_reviews(false, true, &run),
            "the run's reviewer beats it"
        );
        assert!(
            !command_reviews(false, true, &config),
            "pair.reviewer beats it"
        );
        assert!(
            command_reviews(false, true, &default),
            "it beats the default"
        );
        assert!(!command_reviews(false, false, &default));
    }
}
