//! Tests of installing and uninstalling hooks: fresh directories, chained shell and other
//! hooks, gating, edits since the install, missing backups, Husky layouts, and git really
//! running the shims.

use super::*;
use std::ffi::OsString;
use std::process::{Command, Output, Stdio};

/// A repository-like layout: a hooks directory and a backup directory.
struct Dirs {
    _root: tempfile::TempDir,
    hooks: PathBuf,
    backup: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        Dirs::with_hooks_dir(".git/hooks")
    }

    fn with_hooks_dir(rel: &str) -> Dirs {
        let root = tempfile::tempdir().expect("temp dir");
        let hooks = root.path().join(rel);
        let backup = root.path().join(".git/pair/hooks-backup");
        fs::create_dir_all(&hooks).expect("hooks dir");
        Dirs {
            _root: root,
            hooks,
            backup,
        }
    }

    fn ctx(&self) -> Context<'_> {
        Context {
            hooks_dir: &self.hooks,
            backup_dir: &self.backup,
        }
    }

    fn path(&self, hook: Hook) -> PathBuf {
        self.hooks.join(hook.name())
    }

    fn backup_file(&self, name: impl AsRef<Path>) -> PathBuf {
        backup_subdir(&self.ctx()).join(name)
    }

    fn write(&self, hook: Hook, content: &str, mode: u32) {
        let path = self.path(hook);
        fs::write(&path, content).expect("write hook");
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod");
    }

    fn read(&self, hook: Hook) -> String {
        fs::read_to_string(self.path(hook)).expect("read hook")
    }

    fn mode(&self, hook: Hook) -> u32 {
        mode_of(&self.path(hook))
    }

    fn install(&self, hooks: &[Hook], gate: bool) -> Vec<Installed> {
        install(&self.ctx(), hooks, Options { gate })
            .expect("install")
            .hooks
            .into_iter()
            .map(|r| r.outcome)
            .collect()
    }

    fn uninstall(&self, hooks: &[Hook]) -> Vec<Uninstalled> {
        uninstall(&self.ctx(), hooks)
            .expect("uninstall")
            .hooks
            .into_iter()
            .map(|r| r.outcome)
            .collect()
    }

    /// Every file in the hooks directory with its bytes and mode, for before/after
    /// comparisons.
    fn snapshot(&self) -> Vec<(String, Vec<u8>, u32, Option<PathBuf>)> {
        let mut entries: Vec<_> = fs::read_dir(&self.hooks)
            .expect("list hooks")
            .map(|e| {
                let path = e.expect("entry").path();
                let name = path
                    .file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned();
                let link = fs::read_link(&path).ok();
                let bytes = if link.is_some() {
                    Vec::new()
                } else {
                    fs::read(&path).expect("read")
                };
                let mode = if link.is_some() { 0 } else { mode_of(&path) };
                (name, bytes, mode, link)
            })
            .collect();
        entries.sort();
        entries
    }
}

fn mode_of(path: &Path) -> u32 {
    fs::symlink_metadata(path)
        .expect("stat")
        .permissions()
        .mode()
        & 0o7777
}

/// A PATH holding a stub `git-pair` (logs its arguments to `log`, exits with
/// `$PAIR_EXIT`) or none at all, then the test's own PATH without any real `git-pair`.
struct Tools {
    dir: tempfile::TempDir,
    log: PathBuf,
}

impl Tools {
    fn new(with_git_pair: bool) -> Tools {
        let dir = tempfile::tempdir().expect("tools dir");
        let log = dir.path().join("calls.log");
        if with_git_pair {
            let stub = dir.path().join("git-pair");
            fs::write(
                &stub,
                "#!/bin/sh\necho \"git-pair $*\" >> \"$PAIR_LOG\"\nexit \"${PAIR_EXIT:-0}\"\n",
            )
            .expect("stub");
            fs::set_permissions(&stub, fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        Tools { dir, log }
    }

    fn path_env(&self) -> OsString {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let dirs = std::iter::once(self.dir.path().to_path_buf())
            .chain(std::env::split_paths(&inherited).filter(|dir| !dir.join("git-pair").exists()));
        std::env::join_paths(dirs).expect("PATH")
    }

    /// `git` in `dir` with this PATH, no user or system config, and a fixed identity.
    fn git_in(&self, dir: &Path) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(dir)
            .env("PATH", self.path_env())
            .env("PAIR_LOG", &self.log)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com");
        cmd
    }

    fn calls(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Runs a hook file as git would: its path as argv[0], the arguments, `stdin`.
    fn run(&self, hook: &Path, args: &[&str], stdin: &str, pair_exit: i32) -> Output {
        use std::io::Write as _;
        let mut command = Command::new(hook);
        command
            .args(args)
            .env("PATH", self.path_env())
            .env("PAIR_LOG", &self.log)
            .env("PAIR_EXIT", pair_exit.to_string())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = crate::process::spawn_settled(&mut command).expect("spawn hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("feed stdin");
        child.wait_with_output().expect("wait hook")
    }
}

fn find_on_path(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
}

const FAILING_SH: &str = "#!/bin/sh\necho user-hook-ran \"$@\"\nexit 1\n";
const PYTHON_HOOK: &str = "#!/usr/bin/env python3\nimport sys\nprint('py-hook', sys.argv[1:], sys.stdin.read().strip())\nsys.exit(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0)\n";

#[test]
fn vendored_hook_files_are_exactly_what_install_writes() {
    let vendored = [
        (Hook::PreCommit, include_str!("../../../hooks/pre-commit")),
        (Hook::CommitMsg, include_str!("../../../hooks/commit-msg")),
        (Hook::PostCommit, include_str!("../../../hooks/post-commit")),
        (
            Hook::PreMergeCommit,
            include_str!("../../../hooks/pre-merge-commit"),
        ),
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks");
    for (hook, text) in vendored {
        assert_eq!(
            text,
            shim(hook, Options::default()),
            "hooks/{}",
            hook.name()
        );
        assert!(
            is_executable(mode_of(&root.join(hook.name()))),
            "hooks/{} must be executable",
            hook.name()
        );
    }
}

#[test]
fn the_block_is_one_guarded_line_between_markers() {
    for hook in Hook::ALL {
        for gate in [false, true] {
            let block = block(hook, Options { gate });
            let lines: Vec<&str> = block.lines().collect();
            assert_eq!(lines.len(), 3, "{block}");
            assert_eq!(lines[0], BEGIN_MARKER);
            assert_eq!(lines[2], END_MARKER);
            assert!(
                lines[1].starts_with("if command -v git-pair >/dev/null 2>&1; then git-pair hook ")
            );
            let gated = gate && hook.gates();
            let call = if gated {
                format!("git-pair hook {} --gate \"$@\"", hook.name())
            } else {
                format!("git-pair hook {} \"$@\"", hook.name())
            };
            assert!(lines[1].contains(&call), "{}", lines[1]);
            assert_eq!(lines[1].ends_with("exit 1; fi"), gated, "{}", lines[1]);
        }
    }
}

#[test]
fn fresh_directory_gets_new_shims_and_uninstall_leaves_no_file() {
    let dirs = Dirs::new();
    assert_eq!(dirs.install(&Hook::ALL, false), vec![Installed::Created; 4]);
    for hook in Hook::ALL {
        assert_eq!(dirs.read(hook), shim(hook, Options::default()));
        assert_eq!(dirs.mode(hook), 0o755);
    }
    assert_eq!(dirs.uninstall(&Hook::ALL), vec![Uninstalled::Removed; 4]);
    assert!(dirs.snapshot().is_empty(), "{:?}", dirs.snapshot());
    assert!(
        !dirs.backup.exists(),
        "the emptied backup directory is removed"
    );
}

#[test]
fn missing_hooks_directory_is_created() {
    let dirs = Dirs::new();
    fs::remove_dir_all(&dirs.hooks).expect("remove");
    assert_eq!(
        dirs.install(&[Hook::PreCommit], false),
        vec![Installed::Created]
    );
    assert!(dirs.path(Hook::PreCommit).is_file());
}

#[test]
fn installing_twice_changes_nothing() {
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
    dirs.write(Hook::CommitMsg, PYTHON_HOOK, 0o750);
    dirs.install(&Hook::ALL, false);
    let after_first = dirs.snapshot();
    let backup_first = fs::read(dirs.backup_file("pre-commit.json")).expect("backup");
    assert_eq!(
        dirs.install(&Hook::ALL, false),
        vec![Installed::AlreadyInstalled; 4]
    );
    assert_eq!(dirs.snapshot(), after_first);
    assert_eq!(
        fs::read(dirs.backup_file("pre-commit.json")).expect("backup"),
        backup_first
    );
}

#[test]
fn existing_shell_hook_gets_the_block_after_its_shebang_and_still_fails_the_commit() {
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
    assert_eq!(
        dirs.install(&[Hook::PreCommit], false),
        vec![Installed::Chained {
            how: Chain::InPlace
        }]
    );
    let content = dirs.read(Hook::PreCommit);
    assert_eq!(
        content,
        format!(
            "#!/bin/sh\n{}echo user-hook-ran \"$@\"\nexit 1\n",
            block(Hook::PreCommit, Options::default())
        )
    );

    let tools = Tools::new(true);
    // Ours passes: the user's hook runs and its failure fails the commit.
    let out = tools.run(&dirs.path(Hook::PreCommit), &["a b"], "", 0);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "user-hook-ran a b\n");
    assert_eq!(tools.calls(), "git-pair hook pre-commit a b\n");
    // Ours fails: its status is the hook's, and the user's script does not run.
    let out = tools.run(&dirs.path(Hook::PreCommit), &[], "", 3);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");

    assert_eq!(
        dirs.uninstall(&[Hook::PreCommit]),
        vec![Uninstalled::Restored]
    );
    assert_eq!(dirs.read(Hook::PreCommit), FAILING_SH);
    assert_eq!(dirs.mode(Hook::PreCommit), 0o755);
}

#[test]
fn post_commit_failure_of_ours_never_stops_the_users_post_commit() {
    let dirs = Dirs::new();
    dirs.write(
        Hook::PostCommit,
        "#!/bin/bash\necho user-post-commit\n",
        0o700,
    );
    dirs.install(&[Hook::PostCommit], false);
    let tools = Tools::new(true);
    let out = tools.run(&dirs.path(Hook::PostCommit), &[], "", 5);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "user-post-commit\n");
    assert_eq!(
        dirs.uninstall(&[Hook::PostCommit]),
        vec![Uninstalled::Restored]
    );
    assert_eq!(
        dirs.read(Hook::PostCommit),
        "#!/bin/bash\necho user-post-commit\n"
    );
    assert_eq!(dirs.mode(Hook::PostCommit), 0o700);
}

#[test]
fn existing_python_hook_is_moved_aside_and_run_after_ours_with_args_and_stdin() {
    let dirs = Dirs::new();
    dirs.write(Hook::CommitMsg, PYTHON_HOOK, 0o750);
    let before = dirs.snapshot();
    let chained = dirs.hooks.join("commit-msg.git-pair-chained");
    assert_eq!(
        dirs.install(&[Hook::CommitMsg], false),
        vec![Installed::Chained {
            how: Chain::MovedAside {
                chained: chained.clone()
            }
        }]
    );
    assert_eq!(fs::read_to_string(&chained).expect("chained"), PYTHON_HOOK);
    assert_eq!(mode_of(&chained), 0o750, "the moved hook keeps its mode");
    assert_eq!(dirs.mode(Hook::CommitMsg), 0o755);
    assert!(
        dirs.read(Hook::CommitMsg)
            .starts_with(&shim(Hook::CommitMsg, Options::default()))
    );

    let tools = Tools::new(true);
    if find_on_path("python3").is_some() {
        let out = tools.run(&dirs.path(Hook::CommitMsg), &["7"], "from stdin\n", 0);
        assert_eq!(
            out.status.code(),
            Some(7),
            "the chained hook's failure fails: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "py-hook ['7'] from stdin\n"
        );
        assert_eq!(tools.calls(), "git-pair hook commit-msg 7\n");
        let out = tools.run(&dirs.path(Hook::CommitMsg), &["x"], "", 4);
        assert_eq!(
            out.status.code(),
            Some(4),
            "ours failing stops before theirs"
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    } else {
        eprintln!("python3 is not on PATH: not running the chained python hook");
    }

    assert_eq!(
        dirs.uninstall(&[Hook::CommitMsg]),
        vec![Uninstalled::Restored]
    );
    assert_eq!(dirs.snapshot(), before);
}

#[test]
fn binary_and_non_executable_hooks_are_moved_aside_and_a_disabled_hook_stays_disabled() {
    let dirs = Dirs::new();
    let binary = "\u{7f}ELF\0\0\0binary";
    dirs.write(Hook::PreCommit, binary, 0o755);
    dirs.write(
        Hook::PostCommit,
        "#!/bin/sh\necho disabled-hook-ran\n",
        0o644,
    );
    let before = dirs.snapshot();
    let outcomes = dirs.install(&[Hook::PreCommit, Hook::PostCommit], false);
    assert!(
        outcomes.iter().all(|o| matches!(
            o,
            Installed::Chained {
                how: Chain::MovedAside { .. }
            }
        )),
        "{outcomes:?}"
    );
    let tools = Tools::new(true);
    let out = tools.run(&dirs.path(Hook::PostCommit), &[], "", 0);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "",
        "git skipped the non-executable hook before; it still does not run"
    );
    assert_eq!(
        dirs.uninstall(&[Hook::PreCommit, Hook::PostCommit]),
        vec![Uninstalled::Restored; 2]
    );
    assert_eq!(dirs.snapshot(), before);
}

#[test]
fn a_hook_without_shebang_is_a_shell_script_and_takes_the_block_first() {
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, "echo no-shebang\nexit 2\n", 0o755);
    dirs.install(&[Hook::PreCommit], false);
    assert_eq!(
        dirs.read(Hook::PreCommit),
        format!(
            "{}echo no-shebang\nexit 2\n",
            block(Hook::PreCommit, Options::default())
        )
    );
    let tools = Tools::new(true);
    // git runs a hook without a shebang with sh.
    let out = Command::new("/bin/sh")
        .arg(dirs.path(Hook::PreCommit))
        .env("PATH", tools.path_env())
        .env("PAIR_LOG", &tools.log)
        .output()
        .expect("sh");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no-shebang\n");
    assert_eq!(
        dirs.uninstall(&[Hook::PreCommit]),
        vec![Uninstalled::Restored]
    );
    assert_eq!(dirs.read(Hook::PreCommit), "echo no-shebang\nexit 2\n");
}

#[test]
fn a_symlinked_hook_is_moved_aside_as_a_link_and_comes_back_as_one() {
    let dirs = Dirs::new();
    let script = dirs
        .hooks
        .parent()
        .expect("parent")
        .join("shared-pre-commit");
    fs::write(&script, FAILING_SH).expect("script");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).expect("chmod");
    std::os::unix::fs::symlink("../shared-pre-commit", dirs.path(Hook::PreCommit)).expect("link");
    let before = dirs.snapshot();
    let outcome = dirs.install(&[Hook::PreCommit], false);
    assert!(
        matches!(
            outcome[0],
            Installed::Chained {
                how: Chain::MovedAside { .. }
            }
        ),
        "{outcome:?}"
    );
    let tools = Tools::new(true);
    let out = tools.run(&dirs.path(Hook::PreCommit), &["arg"], "", 0);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "user-hook-ran arg\n");
    assert_eq!(
        dirs.uninstall(&[Hook::PreCommit]),
        vec![Uninstalled::Restored]
    );
    assert_eq!(dirs.snapshot(), before);
    assert_eq!(fs::read_to_string(&script).expect("script"), FAILING_SH);
}

#[test]
fn gate_on_then_off_replaces_only_the_gating_blocks() {
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
    let before = dirs.snapshot();
    dirs.install(&Hook::ALL, true);
    assert!(
        dirs.read(Hook::PreCommit)
            .contains("git-pair hook pre-commit --gate \"$@\"")
    );
    assert!(
        dirs.read(Hook::PreCommit)
            .ends_with("echo user-hook-ran \"$@\"\nexit 1\n")
    );
    // commit-msg checks again on the tree really committed; pre-merge-commit gates merges.
    assert_eq!(
        dirs.read(Hook::CommitMsg),
        shim(Hook::CommitMsg, Options { gate: true })
    );
    assert!(
        dirs.read(Hook::PreMergeCommit)
            .contains("git-pair hook pre-merge-commit --gate \"$@\"")
    );
    assert_eq!(
        dirs.read(Hook::PostCommit),
        shim(Hook::PostCommit, Options::default())
    );

    assert_eq!(
        dirs.install(&Hook::ALL, false),
        vec![
            Installed::Updated,
            Installed::Updated,
            Installed::AlreadyInstalled,
            Installed::Updated
        ]
    );
    for hook in Hook::ALL {
        assert!(!dirs.read(hook).contains("--gate"), "{}", hook.name());
    }
    assert_eq!(
        dirs.install(&Hook::ALL, true)[0],
        Installed::Updated,
        "and back on"
    );
    assert_eq!(
        dirs.uninstall(&Hook::ALL),
        vec![
            Uninstalled::Restored,
            Uninstalled::Removed,
            Uninstalled::Removed,
            Uninstalled::Removed
        ]
    );
    assert_eq!(dirs.snapshot(), before);
}

#[test]
fn a_missing_git_pair_lets_the_commit_through_unless_gating_was_asked() {
    let dirs = Dirs::new();
    dirs.install(&Hook::ALL, false);
    let tools = Tools::new(false);
    for hook in Hook::ALL {
        let out = tools.run(&dirs.path(hook), &["msg-file"], "", 0);
        assert_eq!(out.status.code(), Some(0), "{}", hook.name());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("git-pair is not on PATH"), "{stderr}");
        assert!(stderr.contains("cargo install --locked"), "{stderr}");
    }
    dirs.install(&[Hook::PreCommit], true);
    let out = tools.run(&dirs.path(Hook::PreCommit), &[], "", 0);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("gated on review"), "{stderr}");
    assert!(stderr.contains("--no-verify"), "{stderr}");
}

#[test]
fn uninstall_keeps_changes_made_outside_the_block_and_says_so() {
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
    dirs.install(&Hook::ALL, false);
    let edited = format!("{}echo added-later\n", dirs.read(Hook::PreCommit));
    fs::write(dirs.path(Hook::PreCommit), &edited).expect("edit");
    let fresh_edit = format!("{}echo mine-now\n", dirs.read(Hook::CommitMsg));
    fs::write(dirs.path(Hook::CommitMsg), &fresh_edit).expect("edit");

    let outcomes = dirs.uninstall(&Hook::ALL);
    let backup = |hook: Hook| Some(dirs.backup_file(format!("{}.json", hook.name())));
    assert_eq!(
        outcomes,
        vec![
            Uninstalled::BlockRemoved {
                why: Kept::EditedSinceInstall,
                backup: backup(Hook::PreCommit)
            },
            Uninstalled::BlockRemoved {
                why: Kept::EditedSinceInstall,
                backup: backup(Hook::CommitMsg)
            },
            Uninstalled::Removed,
            Uninstalled::Removed,
        ]
    );
    assert_eq!(
        dirs.read(Hook::PreCommit),
        format!("{FAILING_SH}echo added-later\n")
    );
    assert_eq!(dirs.read(Hook::CommitMsg), "#!/bin/sh\necho mine-now\n");
    assert!(!dirs.path(Hook::PostCommit).exists());
    // The original stays available.
    assert_eq!(
        fs::read_to_string(dirs.backup_file("pre-commit.orig")).expect("orig"),
        FAILING_SH
    );
}

#[test]
fn a_newer_block_is_not_an_edit() {
    // An older git pair wrote a different line inside the markers: uninstall still
    // restores exactly, because only what is outside the block counts.
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
    dirs.install(&[Hook::PreCommit], false);
    let old_style = dirs.read(Hook::PreCommit).replace(
        &block(Hook::PreCommit, Options::default()),
        &format!("{BEGIN_MARKER}\ngit pair hook pre-commit \"$@\" || exit $?\n{END_MARKER}\n"),
    );
    fs::write(dirs.path(Hook::PreCommit), old_style).expect("write");
    assert_eq!(
        dirs.uninstall(&[Hook::PreCommit]),
        vec![Uninstalled::Restored]
    );
    assert_eq!(dirs.read(Hook::PreCommit), FAILING_SH);
}

#[test]
fn a_hook_deleted_after_install_is_not_resurrected() {
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, FAILING_SH, 0o755);
    dirs.install(&[Hook::PreCommit, Hook::CommitMsg], false);
    fs::remove_file(dirs.path(Hook::PreCommit)).expect("rm");
    fs::remove_file(dirs.path(Hook::CommitMsg)).expect("rm");
    assert_eq!(
        dirs.uninstall(&[Hook::PreCommit, Hook::CommitMsg]),
        vec![
            Uninstalled::Missing {
                backup: dirs.backup_file("pre-commit.json")
            },
            Uninstalled::Removed
        ]
    );
    assert!(!dirs.path(Hook::PreCommit).exists());
}

#[test]
fn without_a_backup_uninstall_removes_what_is_recognisably_ours() {
    let dirs = Dirs::new();
    // A vendored copy of hooks/pre-commit, and a user script that pasted the block.
    dirs.write(
        Hook::PreCommit,
        &shim(Hook::PreCommit, Options::default()),
        0o755,
    );
    dirs.write(
        Hook::CommitMsg,
        &format!(
            "#!/bin/sh\n{}echo theirs\n",
            block(Hook::CommitMsg, Options::default())
        ),
        0o755,
    );
    assert_eq!(
        dirs.install(&[Hook::PreCommit, Hook::CommitMsg], false),
        vec![Installed::AlreadyInstalled; 2]
    );
    assert_eq!(
        dirs.uninstall(&Hook::ALL),
        vec![
            Uninstalled::Removed,
            Uninstalled::BlockRemoved {
                why: Kept::NoBackup,
                backup: None
            },
            Uninstalled::NotInstalled,
            Uninstalled::NotInstalled
        ]
    );
    assert!(!dirs.path(Hook::PreCommit).exists());
    assert_eq!(dirs.read(Hook::CommitMsg), "#!/bin/sh\necho theirs\n");
}

#[test]
fn a_chaining_shim_without_backup_still_moves_the_hook_back() {
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, PYTHON_HOOK, 0o755);
    dirs.install(&[Hook::PreCommit], false);
    fs::remove_dir_all(&dirs.backup).expect("lose the backup");
    assert_eq!(
        dirs.uninstall(&[Hook::PreCommit]),
        vec![Uninstalled::Restored]
    );
    assert_eq!(dirs.read(Hook::PreCommit), PYTHON_HOOK);
}

#[test]
fn a_half_block_is_refused_and_nothing_is_touched() {
    let dirs = Dirs::new();
    let broken = format!("#!/bin/sh\n{BEGIN_MARKER}\necho half\n");
    dirs.write(Hook::PreCommit, &broken, 0o755);
    let err = install(&dirs.ctx(), &[Hook::PreCommit], Options::default()).expect_err("refused");
    assert!(matches!(err, Error::BrokenBlock { .. }), "{err}");
    assert_eq!(dirs.read(Hook::PreCommit), broken);
    assert!(uninstall(&dirs.ctx(), &[Hook::PreCommit]).is_err());
    assert_eq!(dirs.read(Hook::PreCommit), broken);
}

#[test]
fn an_existing_chained_file_is_never_clobbered() {
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, PYTHON_HOOK, 0o755);
    fs::write(dirs.hooks.join("pre-commit.git-pair-chained"), "older").expect("write");
    let before = dirs.snapshot();
    let err = install(&dirs.ctx(), &[Hook::PreCommit], Options::default()).expect_err("refused");
    assert!(matches!(err, Error::ChainedExists { .. }), "{err}");
    assert_eq!(dirs.snapshot(), before);
}

#[test]
fn a_changed_hooks_path_keeps_each_directorys_backup() {
    let dirs = Dirs::new();
    let husky = dirs.hooks.parent().expect("parent").join("husky-hooks");
    fs::create_dir_all(&husky).expect("husky");
    fs::write(husky.join("pre-commit"), FAILING_SH).expect("write");
    fs::set_permissions(husky.join("pre-commit"), fs::Permissions::from_mode(0o755))
        .expect("chmod");
    let husky_ctx = Context {
        hooks_dir: &husky,
        backup_dir: &dirs.backup,
    };
    dirs.install(&[Hook::PreCommit], false);
    install(&husky_ctx, &[Hook::PreCommit], Options::default()).expect("install");
    assert_ne!(backup_subdir(&husky_ctx), backup_subdir(&dirs.ctx()));

    let restored = uninstall(&husky_ctx, &[Hook::PreCommit]).expect("uninstall");
    assert_eq!(restored.hooks[0].outcome, Uninstalled::Restored);
    assert_eq!(
        fs::read_to_string(husky.join("pre-commit")).expect("read"),
        FAILING_SH
    );
    assert_eq!(
        dirs.uninstall(&[Hook::PreCommit]),
        vec![Uninstalled::Removed]
    );
    assert!(!dirs.backup.exists());

    let slash = dirs.hooks.join("");
    let with_slash = Context {
        hooks_dir: &slash,
        backup_dir: &dirs.backup,
    };
    assert_eq!(backup_subdir(&with_slash), backup_subdir(&dirs.ctx()));
}

#[test]
fn husky_hook_directories_are_edited_in_place() {
    // husky 9: core.hooksPath=.husky/_ holding generated sh files; husky 4-8:
    // core.hooksPath=.husky holding the user's tracked scripts.
    for (dir, script) in [
        (".husky/_", "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n"),
        (
            ".husky",
            "#!/usr/bin/env sh\n. \"$(dirname -- \"$0\")/_/husky.sh\"\n\nnpx lint-staged\n",
        ),
    ] {
        let dirs = Dirs::with_hooks_dir(dir);
        dirs.write(Hook::PreCommit, script, 0o755);
        assert_eq!(
            dirs.install(&[Hook::PreCommit], false),
            vec![Installed::Chained {
                how: Chain::InPlace
            }],
            "{dir}"
        );
        assert_eq!(
            dirs.snapshot().len(),
            1,
            "no file beside the user's in {dir}"
        );
        assert_eq!(
            dirs.uninstall(&[Hook::PreCommit]),
            vec![Uninstalled::Restored]
        );
        assert_eq!(dirs.read(Hook::PreCommit), script);
    }
}

#[test]
fn shell_detection_reads_the_shebang() {
    let cases: &[(&[u8], bool)] = &[
        (b"#!/bin/sh\n", true),
        (b"#!/bin/bash -e\n", true),
        (b"#!/usr/bin/dash\n", true),
        (b"#!/bin/zsh\n", true),
        (b"#! /bin/sh\n", true),
        (b"#!/usr/bin/env sh\n", true),
        (b"#!/usr/bin/env bash\n", true),
        (b"#!/usr/bin/env -S bash -e\n", true),
        (b"echo no shebang\n", true),
        (b"", true),
        (b"#!/usr/bin/env python3\n", false),
        (b"#!/usr/bin/python\n", false),
        (b"#!/usr/bin/env node\n", false),
        (b"#!/usr/bin/env\n", false),
        (b"#!/usr/bin/perl -w\n", false),
        (b"#!/bin/fish\n", false),
        (b"#!\n", false),
        (b"\x7fELF\x02\x01\x01\0\0", false),
        (b"echo \xff\xfe\n", false),
    ];
    for (script, expected) in cases {
        assert_eq!(
            is_posix_shell_script(script),
            *expected,
            "{}",
            String::from_utf8_lossy(script)
        );
    }
}

#[test]
fn a_shebang_without_newline_still_gets_a_working_block() {
    let dirs = Dirs::new();
    dirs.write(Hook::PreCommit, "#!/bin/sh", 0o755);
    dirs.install(&[Hook::PreCommit], false);
    assert_eq!(
        dirs.read(Hook::PreCommit),
        format!("#!/bin/sh\n{}", block(Hook::PreCommit, Options::default()))
    );
    assert_eq!(
        dirs.uninstall(&[Hook::PreCommit]),
        vec![Uninstalled::Restored]
    );
    assert_eq!(dirs.read(Hook::PreCommit), "#!/bin/sh");
}

#[test]
fn git_runs_the_installed_shims_and_the_chained_hooks_in_a_real_commit() {
    let repo = tempfile::tempdir().expect("repo");
    let tools = Tools::new(true);
    let git = |args: &[&str]| tools.git_in(repo.path()).args(args).output().expect("git");
    assert!(git(&["init", "-q"]).status.success());
    let hooks_dir = repo.path().join(".git/hooks");
    let backup_dir = repo.path().join(".git/pair/hooks-backup");
    fs::create_dir_all(&hooks_dir).expect("hooks dir");
    let write = |name: &str, text: &str| {
        let path = hooks_dir.join(name);
        fs::write(&path, text).expect("hook");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
    };
    let seen = repo.path().join(".git/seen");
    let seen_s = seen.display().to_string();
    write(
        "pre-commit",
        &format!("#!/usr/bin/env python3\nopen('{seen_s}', 'a').write('user pre-commit\\n')\n"),
    );
    write(
        "commit-msg",
        &format!("echo \"user commit-msg $1\" >> {seen_s}\nexit $USER_MSG_EXIT\n"),
    );
    write(
        "post-commit",
        &format!("#!/bin/sh\necho 'user post-commit' >> {seen_s}\n"),
    );
    let ctx = Context {
        hooks_dir: &hooks_dir,
        backup_dir: &backup_dir,
    };
    install(&ctx, &Hook::ALL, Options::default()).expect("install");

    fs::write(repo.path().join("a.txt"), "a\n").expect("file");
    assert!(git(&["add", "a.txt"]).status.success());
    let commit = |msg_exit: &str| {
        tools
            .git_in(repo.path())
            .args(["commit", "-q", "-m", "first"])
            .env("USER_MSG_EXIT", msg_exit)
            .output()
            .expect("git commit")
    };
    let out = commit("1");
    assert!(
        !out.status.success(),
        "the user's commit-msg hook still refuses"
    );
    let out = commit("0");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = tools.calls();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(
        calls,
        [
            "git-pair hook pre-commit",
            "git-pair hook commit-msg .git/COMMIT_EDITMSG",
            "git-pair hook pre-commit",
            "git-pair hook commit-msg .git/COMMIT_EDITMSG",
            "git-pair hook post-commit",
        ]
    );
    let seen = fs::read_to_string(&seen).expect("seen");
    if find_on_path("python3").is_some() {
        assert_eq!(
            seen,
            "user pre-commit\nuser commit-msg .git/COMMIT_EDITMSG\nuser pre-commit\nuser commit-msg .git/COMMIT_EDITMSG\nuser post-commit\n"
        );
    }
}

#[test]
fn reports_serialize_with_the_outcome_and_how() {
    let report = HookReport {
        hook: Hook::PreCommit,
        path: PathBuf::from("/r/.git/hooks/pre-commit"),
        outcome: Installed::Chained {
            how: Chain::MovedAside {
                chained: PathBuf::from("/r/.git/hooks/pre-commit.git-pair-chained"),
            },
        },
    };
    assert_eq!(
        serde_json::to_string(&report).expect("json"),
        r#"{"hook":"pre-commit","path":"/r/.git/hooks/pre-commit","outcome":"chained","how":"moved-aside","chained":"/r/.git/hooks/pre-commit.git-pair-chained"}"#
    );
}
