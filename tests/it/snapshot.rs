//! `snapshot::write_worktree_tree` against `cp index tmp && GIT_INDEX_FILE=tmp git add -A &&
//! git write-tree`, in many work-tree states; the real index and work tree must not change.

use std::path::Path;

use git_pair::worktree::snapshot;

use crate::common::{self, git_command, git_ok, git_str, sh};

fn git_snapshot(repo: &Path) -> String {
    common::git_worktree_tree(repo)
}

fn worktree_state(repo: &Path) -> (Option<Vec<u8>>, String) {
    let index = std::fs::read(repo.join(".git/index")).ok();
    let listing = git_str(
        repo,
        &[
            "ls-files",
            "--others",
            "--cached",
            "--stage",
            "--exclude-standard",
        ],
    );
    (index, listing)
}

/// Sets up a repository with `script`, then checks our snapshot against git's.
fn check(name: &str, script: &str) {
    let temp = common::empty_repo();
    let repo_path = &temp.path;
    sh(repo_path, script);
    let before = worktree_state(repo_path);
    let ours = snapshot::write_worktree_tree(&common::open(repo_path))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .to_string();
    let after = worktree_state(repo_path);
    assert!(before == after, "{name}: the index or work tree changed");
    let expected = git_snapshot(repo_path);
    assert_eq!(ours, expected, "{name}: snapshot tree differs from git's");
    // The in-place comparison the Stop hook uses agrees with the snapshot, both ways.
    let equals = |tree: &str| {
        snapshot::worktree_equals_tree(&common::open(repo_path), common::oid(tree))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    assert!(
        equals(&expected),
        "{name}: the work tree differs from its own snapshot"
    );
    let head = git_command(repo_path)
        .args(["rev-parse", "--verify", "-q", "HEAD^{tree}"])
        .output()
        .expect("git rev-parse");
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    if !head.is_empty() {
        assert_eq!(
            equals(&head),
            head == expected,
            "{name}: against HEAD's tree"
        );
    }
    let empty = git_str(repo_path, &["hash-object", "-w", "-t", "tree", "/dev/null"]);
    assert_eq!(
        equals(&empty),
        empty == expected,
        "{name}: against the empty tree"
    );
    assert!(
        before == worktree_state(repo_path),
        "{name}: the comparison changed the index"
    );
    // The tree and everything in it must really exist in the object database, in valid packs.
    git_ok(repo_path, &["cat-file", "-e", &format!("{ours}^{{tree}}")]);
    git_ok(repo_path, &["ls-tree", "-r", &ours]);
    let fsck = git_command(repo_path)
        .args(["fsck", "--full", "--strict", "--no-dangling"])
        .output()
        .expect("fsck");
    assert!(
        fsck.status.success(),
        "{name}: git fsck: {}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    for pack in std::fs::read_dir(repo_path.join(".git/objects/pack"))
        .expect("pack dir")
        .flatten()
    {
        if pack.path().extension().is_some_and(|e| e == "idx") {
            git_ok(
                repo_path,
                &[
                    "verify-pack",
                    pack.path().to_str().expect("UTF-8 temp path"),
                ],
            );
        }
    }
}

const BASE: &str = r#"
printf 'one\ntwo\nthree\n' >a.txt
mkdir -p dir/sub && printf 'inner\n' >dir/sub/x.txt && printf 'y\n' >dir/y.txt
printf '#!/bin/sh\n' >run.sh
ln -s a.txt link
git add -A && git commit -qm base
"#;

#[test]
fn modified_staged_deleted_and_untracked_files() {
    check(
        "unstaged modification",
        &format!("{BASE}\nprintf 'changed\\n' >>a.txt"),
    );
    check(
        "staged then modified again",
        &format!(
            "{BASE}\nprintf 'staged\\n' >>a.txt && git add a.txt && printf 'again\\n' >>a.txt"
        ),
    );
    check(
        "staged new file",
        &format!("{BASE}\nprintf 'new\\n' >new.txt && git add new.txt"),
    );
    check("deleted file", &format!("{BASE}\nrm dir/y.txt"));
    check(
        "staged deletion, file kept",
        &format!("{BASE}\ngit rm -q --cached a.txt"),
    );
    check(
        "staged deletion",
        &format!("{BASE}\ngit rm -q dir/sub/x.txt"),
    );
    check(
        "untracked files at all depths",
        &format!(
            "{BASE}\nprintf 'u\\n' >u.txt && mkdir -p new/deep/er && printf 'd\\n' >new/deep/er/f.txt"
        ),
    );
    check(
        "touched but unchanged",
        &format!("{BASE}\ntouch -d '2030-01-01' a.txt dir/y.txt"),
    );
}

#[test]
fn ignored_files_stay_out_but_tracked_ignored_files_count() {
    check(
        "ignored",
        &format!(
            "{BASE}\nprintf '*.log\\nbuild/\\n' >.gitignore && printf 'x\\n' >debug.log && mkdir build && printf 'o\\n' >build/out.o"
        ),
    );
    check(
        "tracked file matching an ignore rule",
        &format!("{BASE}\nprintf 'a.txt\\n' >.gitignore && printf 'more\\n' >>a.txt"),
    );
    check(
        "untracked files in an ignored directory that has tracked files",
        &format!(
            "{BASE}\nmkdir -p gen && printf 't\\n' >gen/tracked.txt && git add gen && git commit -qm gen && printf 'gen/\\n!keep.txt\\n' >.gitignore && printf 'n\\n' >gen/new.txt && printf 'k\\n' >keep.txt && mkdir -p deep/gen && printf 'g\\n' >deep/gen/x"
        ),
    );
    check(
        "info/exclude",
        &format!("{BASE}\nprintf 'secret*\\n' >>.git/info/exclude && printf 's\\n' >secret.txt"),
    );
}

#[test]
fn modes_symlinks_and_type_changes() {
    check("exec bit added", &format!("{BASE}\nchmod +x a.txt"));
    check(
        "exec bit removed",
        &format!(
            "{BASE}\nchmod +x run.sh && git add run.sh && git commit -qm x && chmod -x run.sh"
        ),
    );
    check("new symlink", &format!("{BASE}\nln -s dir/y.txt link2"));
    check(
        "symlink retargeted",
        &format!("{BASE}\nrm link && ln -s run.sh link"),
    );
    check(
        "file becomes symlink",
        &format!("{BASE}\nrm a.txt && ln -s run.sh a.txt"),
    );
    check(
        "symlink becomes file",
        &format!("{BASE}\nrm link && printf 'file\\n' >link"),
    );
    check(
        "dangling symlink",
        &format!("{BASE}\nln -s does-not-exist dangling"),
    );
    check(
        "core.fileMode=false keeps the index's bit",
        &format!(
            "{BASE}\ngit config core.fileMode false && chmod +x a.txt run.sh && printf 'edit\\n' >>a.txt && printf 'n\\n' >new.sh && chmod +x new.sh"
        ),
    );
}

#[test]
fn file_directory_swaps_and_empty_directories() {
    check(
        "file becomes directory",
        &format!("{BASE}\nrm a.txt && mkdir a.txt && printf 'in\\n' >a.txt/inside"),
    );
    check(
        "directory becomes file",
        &format!("{BASE}\nrm -r dir && printf 'now a file\\n' >dir"),
    );
    check(
        "empty directories are not recorded",
        &format!("{BASE}\nmkdir -p empty/nested"),
    );
    check("directory emptied", &format!("{BASE}\nrm dir/sub/x.txt"));
}

#[test]
fn line_endings_through_clean_filters() {
    check(
        "autocrlf=true converts CRLF",
        &format!("{BASE}\ngit config core.autocrlf true && printf 'crlf\\r\\nline\\r\\n' >win.txt"),
    );
    check(
        "eol=crlf attribute",
        &format!(
            "{BASE}\nprintf '*.txt eol=crlf\\n' >.gitattributes && printf 'x\\r\\ny\\r\\n' >e.txt"
        ),
    );
    check(
        "text=auto attribute",
        &format!(
            "{BASE}\nprintf '* text=auto\\n' >.gitattributes && printf 'x\\r\\ny\\r\\n' >t.txt"
        ),
    );
    check(
        "file committed with CRLF stays CRLF under autocrlf",
        "printf 'a\\r\\nb\\r\\n' >old.txt && git add -A && git commit -qm crlf && git config core.autocrlf true && printf 'a\\r\\nb\\r\\nc\\r\\n' >old.txt",
    );
    check(
        "binary file is not converted",
        &format!("{BASE}\ngit config core.autocrlf true && printf 'bin\\0\\r\\n' >b.bin"),
    );
    check(
        "clean filter driver",
        &format!(
            "{BASE}\ngit config filter.upper.clean 'tr a-z A-Z' && git config filter.upper.smudge cat && printf '*.up filter=upper\\n' >.gitattributes && printf 'shout\\n' >x.up"
        ),
    );
}

#[test]
fn unborn_head() {
    check("nothing at all", "true");
    check(
        "untracked only",
        "printf 'a\\n' >a.txt && mkdir d && printf 'b\\n' >d/b.txt",
    );
    check(
        "partly staged, no commit",
        "printf 'a\\n' >a.txt && git add a.txt && printf 'more\\n' >>a.txt && printf 'b\\n' >b.txt",
    );
}

#[test]
fn index_states_conflicts_and_intent_to_add() {
    check(
        "intent to add",
        &format!("{BASE}\nprintf 'n\\n' >n.txt && git add -N n.txt"),
    );
    check(
        "intent to add, then deleted",
        &format!("{BASE}\nprintf 'n\\n' >n.txt && git add -N n.txt && rm n.txt"),
    );
    check(
        "conflicted merge",
        &format!(
            "{BASE}\ngit checkout -qb other && printf 'theirs\\n' >a.txt && git commit -qam theirs && git checkout -q main && printf 'ours\\n' >a.txt && git commit -qam ours && (git merge -q other >/dev/null 2>&1 || true) && printf 'resolved\\n' >a.txt"
        ),
    );
    check(
        "conflicted merge, file deleted",
        &format!(
            "{BASE}\ngit checkout -qb other && printf 'theirs\\n' >a.txt && git commit -qam theirs && git checkout -q main && printf 'ours\\n' >a.txt && git commit -qam ours && (git merge -q other >/dev/null 2>&1 || true) && rm a.txt"
        ),
    );
    check(
        "skip-worktree entry",
        &format!(
            "{BASE}\ngit update-index --skip-worktree a.txt && printf 'hidden change\\n' >>a.txt"
        ),
    );
    check(
        "assume-unchanged entry",
        &format!(
            "{BASE}\ngit update-index --assume-unchanged a.txt && printf 'hidden change\\n' >>a.txt"
        ),
    );
}

#[test]
fn submodules_and_nested_repositories() {
    let sub_setup = r#"
mkdir ../subrepo && (cd ../subrepo && git init -q -b main && printf 's\n' >s.txt && git add -A && git commit -qm s1)
git -c protocol.file.allow=always submodule add -q ../subrepo sub >/dev/null 2>&1
git commit -qm "add submodule"
"#;
    check(
        "submodule at the recorded commit",
        &format!("{BASE}\n{sub_setup}"),
    );
    check(
        "submodule moved to a new commit",
        &format!(
            "{BASE}\n{sub_setup}\n(cd sub && printf 't\\n' >t.txt && git add -A && git commit -qm s2)"
        ),
    );
    check(
        "submodule with uncommitted changes",
        &format!("{BASE}\n{sub_setup}\nprintf 'dirty\\n' >>sub/s.txt"),
    );
    check(
        "submodule not checked out",
        &format!("{BASE}\n{sub_setup}\ngit submodule deinit -q -f sub"),
    );
    check(
        "untracked nested repository",
        &format!(
            "{BASE}\nmkdir nested && (cd nested && git init -q && printf 'n\\n' >n && git add -A && git commit -qm n)"
        ),
    );
}

#[test]
fn unusual_names() {
    check(
        "spaces, unicode, quotes",
        &format!(
            "{BASE}\nprintf 'x\\n' >'with space.txt' && printf 'y\\n' >\"naïve.txt\" && printf 'z\\n' >'quo\"te'"
        ),
    );
}
