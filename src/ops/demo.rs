//! The throwaway repository `git pair demo` runs its loop in, built with gix alone (no `git`
//! subprocess): two files, one commit, an index matching it, the demo's edits, and the commit
//! of the approved work.

use std::path::{Path, PathBuf};

use gix::object::tree::EntryKind;

/// Why the demo repository could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot {action}: {source}")]
    Io {
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot {action}: {}", crate::util::chain::error_chain(source))]
    Git {
        action: &'static str,
        #[source]
        source: gix::Error,
    },
}

fn git(action: &'static str) -> impl FnOnce(gix::Error) -> Error {
    move |source| Error::Git { action, source }
}

fn io(action: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { action, source }
}

/// The files of the demo project's first commit.
const FILES: [(&str, &str); 2] = [
    (
        "README.md",
        "# greeter\n\nA tiny library that greets people.\n",
    ),
    (
        "src/lib.rs",
        "//! Greetings.\n\n/// The library's version.\npub const VERSION: &str = \"0.1.0\";\n",
    ),
];

/// The coder's first attempt: it works, but leaves a debug print behind.
pub const FIRST_ATTEMPT: &str = "//! Greetings.\n\n/// The library's version.\npub const VERSION: &str = \"0.1.0\";\n\n/// Greets `name`.\npub fn greet(name: &str) -> String {\n    dbg!(name);\n    format!(\"Hello, {name}!\")\n}\n";
/// The fix: no debug print.
pub const FIXED: &str = "//! Greetings.\n\n/// The library's version.\npub const VERSION: &str = \"0.1.0\";\n\n/// Greets `name`.\npub fn greet(name: &str) -> String {\n    format!(\"Hello, {name}!\")\n}\n";
/// The test the coder adds with the fix.
pub const TEST: &str = "#[test]\nfn greets_by_name() {\n    assert_eq!(greeter::greet(\"Ada\"), \"Hello, Ada!\");\n}\n";

/// Creates a new repository in a fresh temporary directory (kept, so it can be inspected)
/// with one commit on its default branch and a clean work tree.
pub fn create() -> Result<PathBuf, Error> {
    let dir = tempfile::Builder::new()
        .prefix("git-pair-demo-")
        .tempdir()
        .map_err(io("create a temporary directory"))?
        .keep();
    let mut repo = gix::init(&dir).map_err(git("create the demo repository"))?;
    with_identity(&mut repo)?;
    let mut editor = repo
        .edit_tree(gix::ObjectId::empty_tree(repo.object_hash()))
        .map_err(git("start a tree"))?;
    for (path, content) in FILES {
        write_file(&dir, path, content)?;
        let blob = repo.write_blob(content).map_err(git("write a blob"))?;
        editor
            .upsert(path, EntryKind::Blob, blob)
            .map_err(git("add a file to the tree"))?;
    }
    let tree = editor.write().map_err(git("write the tree"))?.detach();
    let committer = repo
        .committer()
        .expect("an identity was installed above")
        .map_err(git("read the identity"))?;
    let commit = repo
        .new_commit_as(
            committer,
            committer,
            "Start the greeter library\n",
            tree,
            None::<gix::ObjectId>,
        )
        .map_err(git("write the first commit"))?;
    move_branch(
        &repo,
        gix::refs::transaction::PreviousValue::MustNotExist,
        commit.id,
        tree,
        "commit (initial): Start the greeter library",
    )?;
    Ok(dir)
}

/// Writes a work-tree file of the demo repository.
pub fn write_file(dir: &Path, path: &str, content: &str) -> Result<(), Error> {
    let full = dir.join(path);
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent).map_err(io("create a directory"))?;
    }
    std::fs::write(full, content).map_err(io("write a file"))
}

/// Gives the demo repository's handle the demo identity when none is configured: a machine
/// with no git identity (a fresh container) still runs the demo.
fn with_identity(repo: &mut gix::Repository) -> Result<(), Error> {
    if repo.committer().is_none() {
        repo.committer_or_set_fallback("git pair demo", "demo@git-pair.invalid")
            .map_err(git("set a demo identity"))?;
    }
    Ok(())
}

/// Commits the work tree of the demo repository at `dir` on its branch (what `git add -A &&
/// git commit` would do there), with the index matching; returns the new commit's id.
pub fn commit_work_tree(dir: &Path, message: &str) -> Result<gix::ObjectId, Error> {
    let mut repo =
        gix::open(dir).map_err(|e| git("open the demo repository")(gix::Error::from_error(e)))?;
    with_identity(&mut repo)?;
    let tree = crate::worktree::snapshot::write_worktree_tree(&repo)
        .map_err(|e| git("snapshot the work tree")(gix::Error::from_error(e)))?;
    let parent = repo
        .head_id()
        .map_err(|e| git("read HEAD")(gix::Error::from_error(e)))?
        .detach();
    let committer = repo
        .committer()
        .expect("an identity was installed above")
        .map_err(git("read the identity"))?;
    let commit = repo
        .new_commit_as(committer, committer, message, tree, [parent])
        .map_err(git("write the commit"))?;
    move_branch(
        &repo,
        gix::refs::transaction::PreviousValue::MustExistAndMatch(gix::refs::Target::Object(parent)),
        commit.id,
        tree,
        &format!("commit: {}", message.lines().next().unwrap_or_default()),
    )?;
    Ok(commit.id)
}

/// Moves the demo repository's branch to `commit` (compare-and-swap on `expected`, with a
/// reflog entry) and writes the index of `tree`, as `git commit` leaves them.
fn move_branch(
    repo: &gix::Repository,
    expected: gix::refs::transaction::PreviousValue,
    commit: gix::ObjectId,
    tree: gix::ObjectId,
    message: &str,
) -> Result<(), Error> {
    use gix::refs::transaction::{Change, LogChange, RefEdit, RefLog};
    let head = repo
        .head_name()
        .map_err(git("read HEAD"))?
        .map(|name| name.to_string())
        .unwrap_or_else(|| "refs/heads/main".to_owned());
    repo.edit_reference(RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: message.into(),
            },
            expected,
            new: gix::refs::Target::Object(commit),
        },
        name: head
            .as_str()
            .try_into()
            .map_err(|e: gix::validate::reference::name::Error| {
                git("name the branch")(gix::Error::from_error(e))
            })?,
        deref: false,
    })
    .map_err(git("move the branch"))?;
    let mut index = repo
        .index_from_tree(&tree)
        .map_err(git("build the index"))?;
    index
        .write(Default::default())
        .map_err(git("write the index"))
}
