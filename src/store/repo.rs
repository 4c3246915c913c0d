//! The opened repository: discovery, HEAD, configuration values and object access for the
//! store and the snapshot code. gix stays behind this type.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice as _;

use super::Error;

/// How many commit → tree pairs [`Repo::keep_commit_tree`] keeps.
const KEPT_COMMIT_TREES: usize = 16;

/// An opened repository.
pub struct Repo {
    pub(crate) repo: gix::Repository,
    common_dir: PathBuf,
    work_dir: Option<PathBuf>,
    /// Manifests already parsed in this process, by commit: a command reads the same run
    /// state several times (finding the run, measuring, appending, rendering), and a
    /// manifest grows with the run, so it is parsed once.
    pub(crate) manifests:
        std::cell::RefCell<std::collections::HashMap<ObjectId, (ObjectId, crate::model::Manifest)>>,
    /// Records this process appended, by file name.
    pub(crate) written_records:
        std::cell::RefCell<std::collections::HashMap<String, crate::model::Record>>,
    /// Every record of run trees this process wrote whole (a new run's first tree), by
    /// tree: rendering a run just created reads nothing back.
    pub(crate) tree_records:
        std::cell::RefCell<std::collections::HashMap<ObjectId, Vec<crate::model::Record>>>,
}

/// Where HEAD points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// On a branch (short name); `commit` is None while the branch is unborn.
    Branch {
        name: String,
        commit: Option<ObjectId>,
    },
    /// Detached at a commit.
    Detached { commit: ObjectId },
}

impl Head {
    /// The branch name as runs record it (`HEAD` when detached).
    pub fn branch_name(&self) -> &str {
        match self {
            Head::Branch { name, .. } => name,
            Head::Detached { .. } => "HEAD",
        }
    }

    /// The commit HEAD points to, if any.
    pub fn commit(&self) -> Option<ObjectId> {
        match self {
            Head::Branch { commit, .. } => *commit,
            Head::Detached { commit } => Some(*commit),
        }
    }
}

impl Repo {
    /// Finds the repository containing `start` (honouring `GIT_DIR`/`GIT_WORK_TREE`, as hooks
    /// need), like git does.
    ///
    /// A `start` inside the current directory is given to gix relative to it, so the work-tree
    /// paths gix stats are short (`src/a.rs`, not `/home/…/repo/src/a.rs`), as git's are: on a
    /// big work tree the kernel's path walk per component is a measurable share of a status.
    /// The paths this type hands out ([`Repo::work_dir`], [`Repo::common_dir`]) are absolute.
    pub fn discover(start: &Path) -> Result<Repo, Error> {
        let cwd = std::env::current_dir().ok();
        let relative = cwd
            .as_deref()
            .and_then(|cwd| start.strip_prefix(cwd).ok())
            .map(|rel| {
                if rel.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    rel
                }
            });
        let dir = relative.unwrap_or(start);
        // `git -c key=value pair …` hands its overrides down in GIT_CONFIG_PARAMETERS: they
        // are read like any other configuration, with git's precedence (over every file).
        let overrides = std::env::var("GIT_CONFIG_PARAMETERS")
            .map(|text| crate::util::git_value::config_parameters(&text))
            .unwrap_or_default();
        let not_a_repository = || Error::NotARepository {
            path: absolute(start).display().to_string(),
        };
        if overrides.is_empty() {
            let repo =
                gix::discover_with_environment_overrides(dir).map_err(|_| not_a_repository())?;
            return Repo::from_gix(repo);
        }
        let mut trust = gix::sec::trust::Mapping::<gix::open::Options>::default();
        trust.full = trust.full.cli_overrides(overrides.clone());
        trust.reduced = trust.reduced.cli_overrides(overrides);
        match gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
            dir,
            Default::default(),
            trust,
        ) {
            Ok(repo) => Repo::from_gix(repo.into()),
            // Say which it is: no repository here, or overrides gix cannot apply.
            Err(e) => match gix::discover_with_environment_overrides(dir) {
                Ok(_) => {
                    // The innermost cause names the value ("… is not a valid configuration key").
                    let mut cause: &dyn std::error::Error = &e;
                    while let Some(next) = cause.source() {
                        cause = next;
                    }
                    Err(Error::BadOverrides {
                        detail: cause.to_string(),
                    })
                }
                Err(_) => Err(not_a_repository()),
            },
        }
    }

    /// Opens the repository at `path` ignoring the environment (`GIT_DIR`, …) and the global
    /// and system configuration: for tests and tools that must not see the user's setup.
    pub fn open_isolated(path: &Path) -> Result<Repo, Error> {
        let repo = gix::open_opts(path, gix::open::Options::isolated()).map_err(|_| {
            Error::NotARepository {
                path: absolute(path).display().to_string(),
            }
        })?;
        Repo::from_gix(repo)
    }

    pub(crate) fn from_gix(mut repo: gix::Repository) -> Result<Repo, Error> {
        // Run commits and reflogs need a committer; a machine without user.name/email still
        // gets one. gix takes each field from the environment or the configuration first and
        // from these fallbacks last, so installing them now is installing them when needed,
        // without resolving the committer at every open: its date needs the system time zone,
        // for which the time zone database is read whole (a command that writes no commit
        // never pays for that).
        use gix::config::tree::gitoxide::Committer;
        let fallbacks = [
            (&Committer::NAME_FALLBACK, "git-pair"),
            (&Committer::EMAIL_FALLBACK, "git-pair@localhost"),
        ];
        let snapshot = repo.config_snapshot();
        let missing: Vec<_> = fallbacks
            .into_iter()
            .filter(|(key, _)| snapshot.string(*key).is_none())
            .collect();
        if !missing.is_empty() {
            let mut config = repo.config_snapshot_mut();
            for (key, value) in missing {
                config
                    .set_value(key, value)
                    .map_err(Error::git("set a fallback committer"))?;
            }
            config
                .commit()
                .map_err(Error::git("set a fallback committer"))?;
        }
        // Run trees and records are stored as long delta chains once packed (a fetch, a
        // gc): without keeping decoded bases, every read re-inflates its whole chain. git
        // keeps them too (`core.deltaBaseCacheLimit`).
        repo.objects.set_pack_cache(|| {
            Box::new(crate::diff::DeltaBaseCache::new(
                crate::diff::DELTA_BASE_CACHE_LIMIT,
            ))
        });
        let common_dir = absolute(repo.common_dir());
        let work_dir = repo.workdir().map(absolute);
        Ok(Repo {
            repo,
            common_dir,
            work_dir,
            manifests: Default::default(),
            written_records: Default::default(),
            tree_records: Default::default(),
        })
    }

    /// Another handle on the same repository, with caches of its own: for work on another
    /// thread (a `Repo` is not shared between threads).
    pub fn detached(&self) -> Repo {
        Repo {
            repo: self.repo.clone(),
            common_dir: self.common_dir.clone(),
            work_dir: self.work_dir.clone(),
            manifests: Default::default(),
            written_records: Default::default(),
            tree_records: Default::default(),
        }
    }

    /// Another handle on the same repository that also keeps up to `bytes` of decoded
    /// objects by id (as well as delta bases): for a reader that comes back to the same
    /// commits and trees (a commit read by the history walk and again for its tree, a run
    /// tree read for its records and again for its review material). Handles made from it
    /// for other threads ([`Repo::map_parallel`]) keep caches of their own, of the same size.
    pub fn with_object_cache(&self, bytes: usize) -> Repo {
        let mut repo = self.detached();
        repo.repo.object_cache_size(bytes);
        repo
    }

    /// Whether the index tracks `path` (repository-relative).
    pub fn is_tracked(&self, path: &str) -> Result<bool, Error> {
        let index = self
            .repo
            .index_or_empty()
            .map_err(Error::git("read the index"))?;
        Ok(index
            .entry_by_path(gix::bstr::BStr::new(path.as_bytes()))
            .is_some())
    }

    /// The underlying gix repository, for the snapshot and work-tree code.
    pub fn gix(&self) -> &gix::Repository {
        &self.repo
    }

    /// A differ with this repository's diff settings (`diff.*`, `.gitattributes`).
    pub fn differ(&self) -> Result<crate::diff::Differ, crate::diff::Error> {
        crate::diff::Differ::new(&self.repo, crate::diff::Options::from_config(&self.repo)?)
    }

    /// A [`crate::diff::Differ`] whose attributes come from `tree`'s own `.gitattributes`
    /// alone: what a review packet of the change to `tree` is built with.
    pub fn review_differ(&self, tree: ObjectId) -> Result<crate::diff::Differ, crate::diff::Error> {
        crate::diff::Differ::for_tree(
            &self.repo,
            crate::diff::Options::from_config(&self.repo)?,
            tree,
        )
    }

    /// Every file's `git diff` from `old` (a tree or commit, `None` for the empty tree) to
    /// `new`, with this repository's diff settings ([`crate::diff::diff_trees`]).
    pub fn diff_trees(
        &self,
        old: Option<ObjectId>,
        new: ObjectId,
    ) -> Result<Vec<crate::diff::FileDiff>, crate::diff::Error> {
        let options = crate::diff::Options::from_config(&self.repo)?;
        crate::diff::diff_trees(&self.repo, old, new, &options)
    }

    /// The paths whose entries differ between trees `old` and `new`
    /// ([`crate::diff::changed_paths`]).
    pub fn changed_paths(
        &self,
        old: ObjectId,
        new: ObjectId,
    ) -> Result<Vec<String>, crate::diff::Error> {
        crate::diff::changed_paths(&self.repo, old, new)
    }

    /// The work tree root, or an error for a bare repository.
    pub fn work_dir(&self) -> Result<&Path, Error> {
        self.work_dir.as_deref().ok_or_else(|| Error::Bare {
            git_dir: self.common_dir.display().to_string(),
        })
    }

    /// The repository's common git directory (shared by linked worktrees).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// `.git/pair/`: caches and rendered files, never shared, always rebuildable from refs.
    pub fn pair_dir(&self) -> PathBuf {
        self.common_dir.join("pair")
    }

    /// Every value of a configuration key, in file order (last one wins for single values).
    pub fn config_values(&self, key: &str) -> Vec<String> {
        self.repo
            .config_snapshot()
            .plumbing()
            .strings(key)
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.to_string())
            .collect()
    }

    /// Every occurrence of a configuration key, in file order, with `None` for one written
    /// without `=` (`[pair] handoffFile`), which git reads as a true boolean where `key =` is
    /// false. gix tells the two apart for the last occurrence only, the one that counts for
    /// single values; earlier occurrences without `=` read as empty.
    pub fn config_occurrences(&self, key: &str) -> Vec<Option<String>> {
        let snapshot = self.repo.config_snapshot();
        let config = snapshot.plumbing();
        let mut values: Vec<Option<String>> = config
            .strings(key)
            .unwrap_or_default()
            .into_iter()
            .map(|v| Some(v.to_string()))
            .collect();
        if config.string_implicit(key) == Some(None)
            && let Some(last) = values.last_mut()
        {
            *last = None;
        }
        values
    }

    /// Reads HEAD.
    pub fn head(&self) -> Result<Head, Error> {
        let head = self.repo.head().map_err(Error::git("read HEAD"))?;
        let commit = head.id().map(|id| id.detach());
        match head.referent_name() {
            Some(name) => Ok(Head::Branch {
                name: name.shorten().to_string(),
                commit,
            }),
            None => Ok(Head::Detached {
                commit: commit.ok_or_else(|| Error::BadRevision {
                    rev: "HEAD".into(),
                    detail: "HEAD is neither a branch nor a commit".into(),
                })?,
            }),
        }
    }

    /// Resolves a revision to a commit id.
    pub fn resolve_commit(&self, rev: &str) -> Result<ObjectId, Error> {
        let id = self
            .repo
            .rev_parse_single(rev)
            // gix's own message quotes its parser's input (`input="…"`): say it as git does.
            .map_err(|_| Error::BadRevision {
                rev: rev.escape_debug().to_string(),
                detail: "unknown revision or path not in the working tree".into(),
            })?;
        let object = id.object().map_err(Error::git("read an object"))?;
        let commit = object.peel_to_commit().map_err(|_| Error::BadRevision {
            rev: rev.escape_debug().to_string(),
            detail: "not a commit".into(),
        })?;
        Ok(commit.id)
    }

    /// The tree of commit `commit`.
    pub fn commit_tree(&self, commit: ObjectId) -> Result<ObjectId, Error> {
        Ok(self.commit_and_tree(commit)?.1)
    }

    /// Commit `commit`, read once, and its tree: what reading a run commit's trailers with
    /// the tree they speak of starts from.
    pub(crate) fn commit_and_tree(
        &self,
        commit: ObjectId,
    ) -> Result<(gix::Commit<'_>, ObjectId), Error> {
        let commit = self
            .repo
            .find_commit(commit)
            .map_err(Error::git("read a commit"))?;
        let tree = commit
            .tree_id()
            .map_err(Error::git("read a commit's tree"))?
            .detach();
        Ok((commit, tree))
    }

    /// The tree of HEAD's commit, or the empty tree while HEAD is unborn.
    pub fn head_tree_or_empty(&self) -> Result<ObjectId, Error> {
        match self.head()?.commit() {
            Some(commit) => self.project_commit_tree(commit),
            None => Ok(ObjectId::empty_tree(self.repo.object_hash())),
        }
    }

    /// The tree of project commit `commit` (HEAD, a run's base), for the hooks: read through
    /// the few commit → tree pairs [`Repo::keep_commit_tree`] keeps in
    /// `.git/pair/cache/commit-trees` (a commit's tree never changes), so that a hook reading
    /// only loose objects besides need not open a pack index (gix reads every offset of an
    /// index it opens: about 1 ns per object, 3.5 ms in a repository of 3.5 million objects).
    /// Writes nothing: a commit not kept is read.
    pub fn project_commit_tree(&self, commit: ObjectId) -> Result<ObjectId, Error> {
        match self.kept_commit_trees().iter().find(|(c, _)| *c == commit) {
            Some((_, tree)) => Ok(*tree),
            None => self.commit_tree(commit),
        }
    }

    /// [`Repo::project_commit_tree`], keeping the pair for the next reader (post-commit keeps
    /// the new HEAD's, `start` its base's). Best effort: a pair that cannot be kept costs the
    /// next reader the object read it would have saved.
    pub fn keep_commit_tree(&self, commit: ObjectId) -> Result<ObjectId, Error> {
        let mut pairs = self.kept_commit_trees();
        if let Some((_, tree)) = pairs.iter().find(|(c, _)| *c == commit) {
            return Ok(*tree);
        }
        let tree = self.commit_tree(commit)?;
        pairs.insert(0, (commit, tree));
        pairs.truncate(KEPT_COMMIT_TREES);
        let text: String = pairs.iter().map(|(c, t)| format!("{c} {t}\n")).collect();
        let _ = crate::util::fs::write_atomically_via(
            &self.pair_dir().join("tmp"),
            &self.commit_trees_path(),
            text.as_bytes(),
        );
        Ok(tree)
    }

    fn commit_trees_path(&self) -> PathBuf {
        self.pair_dir().join("cache").join("commit-trees")
    }

    /// The commit → tree pairs kept (newest first): lines of two ids of this repository's
    /// hash; a line cut short or of another hash is passed over, and nothing past the pairs
    /// kept is read.
    fn kept_commit_trees(&self) -> Vec<(ObjectId, ObjectId)> {
        let kind = self.repo.object_hash();
        let mut text = Vec::new();
        if let Ok(file) = std::fs::File::open(self.commit_trees_path()) {
            use std::io::Read as _;
            let line = 2 * kind.len_in_hex() + 2;
            let _ = file
                .take((KEPT_COMMIT_TREES * line) as u64)
                .read_to_end(&mut text);
        }
        text.lines()
            .filter_map(|line| {
                let (commit, tree) = line.split_once_str(" ")?;
                let (commit, tree) = (
                    ObjectId::from_hex(commit).ok()?,
                    ObjectId::from_hex(tree).ok()?,
                );
                (commit.kind() == kind && tree.kind() == kind).then_some((commit, tree))
            })
            .collect()
    }

    /// The commits reachable from `from` and from none of `hidden` (those that are not
    /// commits here are ignored), newest first, at most `limit`: what a push of `from`
    /// sends to a remote that holds `hidden`.
    pub fn commits_beyond(
        &self,
        from: ObjectId,
        hidden: &[ObjectId],
        limit: usize,
    ) -> Result<Vec<ObjectId>, Error> {
        let hidden: Vec<ObjectId> = hidden
            .iter()
            .copied()
            .filter(|id| self.repo.find_commit(*id).is_ok())
            .collect();
        let walk = self
            .repo
            .rev_walk([from])
            .with_hidden(hidden)
            .all()
            .map_err(Error::git("walk the history"))?;
        let mut out = Vec::new();
        for info in walk.take(limit) {
            out.push(info.map_err(Error::git("walk the history"))?.id);
        }
        Ok(out)
    }

    /// The parents of commit `commit`.
    pub fn commit_parents(&self, commit: ObjectId) -> Result<Vec<ObjectId>, Error> {
        let commit = self
            .repo
            .find_commit(commit)
            .map_err(Error::git("read a commit"))?;
        Ok(commit.parent_ids().map(|id| id.detach()).collect())
    }

    /// The message of commit `commit`.
    pub fn commit_message_raw(&self, commit: ObjectId) -> Result<String, Error> {
        let commit = self
            .repo
            .find_commit(commit)
            .map_err(Error::git("read a commit"))?;
        let message = commit
            .message_raw()
            .map_err(Error::git("read a commit message"))?;
        Ok(message.to_string())
    }

    /// The size of object `id` in bytes, from its header (nothing is read whole).
    pub fn object_size(&self, id: ObjectId) -> Result<u64, Error> {
        Ok(self
            .repo
            .find_header(id)
            .map_err(Error::git("read an object header"))?
            .size())
    }

    /// Reads a blob's bytes.
    pub fn blob(&self, id: ObjectId) -> Result<Vec<u8>, Error> {
        let mut blob = self.repo.find_blob(id).map_err(Error::git("read a blob"))?;
        Ok(blob.take_data())
    }

    /// Reads a blob's bytes when it holds at most `max` bytes; `Ok(Err(size))` when it is
    /// larger, decided from its header before anything is inflated (a fetched object can be
    /// gigabytes that compress to kilobytes).
    pub fn blob_within(&self, id: ObjectId, max: u64) -> Result<Result<Vec<u8>, u64>, Error> {
        let size = self.object_size(id)?;
        if size > max {
            return Ok(Err(size));
        }
        self.blob(id).map(Ok)
    }

    /// The id of the blob at `path` inside `tree`, or None when there is no such file (a
    /// symlink or a gitlink there is not a file).
    pub fn blob_id_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, Error> {
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a tree"))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(Error::git("look up a path in a tree"))?;
        Ok(entry
            .filter(|entry| entry.mode().is_blob())
            .map(|entry| entry.object_id()))
    }

    /// Reads the blob at `path` inside `tree`, or None when there is no such file.
    pub fn blob_at(&self, tree: ObjectId, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a tree"))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(Error::git("look up a path in a tree"))?;
        match entry {
            Some(entry) if entry.mode().is_blob() => Ok(Some(self.blob(entry.object_id())?)),
            _ => Ok(None),
        }
    }

    /// The (name, id) entries of the subtree at `path` inside `tree`; empty when absent.
    pub fn tree_entries(
        &self,
        tree: ObjectId,
        path: &str,
    ) -> Result<Vec<(String, ObjectId)>, Error> {
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a tree"))?;
        let Some(entry) = tree
            .lookup_entry_by_path(path)
            .map_err(Error::git("look up a path in a tree"))?
        else {
            return Ok(Vec::new());
        };
        if !entry.mode().is_tree() {
            return Ok(Vec::new());
        }
        let subtree = self
            .repo
            .find_tree(entry.object_id())
            .map_err(Error::git("read a tree"))?;
        let decoded = subtree.decode().map_err(Error::git("decode a tree"))?;
        Ok(decoded
            .entries
            .iter()
            .map(|e| (e.filename.to_string(), e.oid.to_owned()))
            .collect())
    }

    /// Whether the object database holds commit `id`.
    pub fn has_commit(&self, id: ObjectId) -> bool {
        self.repo
            .find_header(id)
            .is_ok_and(|header| header.kind() == gix::object::Kind::Commit)
    }

    /// Whether the object database holds tree `id`.
    pub fn has_tree(&self, id: ObjectId) -> bool {
        self.repo
            .find_header(id)
            .is_ok_and(|header| header.kind() == gix::object::Kind::Tree)
    }

    /// The commit local branch `name` points to; `None` when there is no such branch (or the
    /// name is not a valid branch name).
    pub fn branch_commit(&self, name: &str) -> Result<Option<ObjectId>, Error> {
        if name.starts_with('-') {
            return Ok(None);
        }
        let Ok(full) = gix::refs::FullName::try_from(format!("refs/heads/{name}")) else {
            return Ok(None);
        };
        let reference = self
            .repo
            .try_find_reference(full.as_ref())
            .map_err(Error::git("read a branch"))?;
        Ok(reference.and_then(|mut r| r.peel_to_id().ok().map(|id| id.detach())))
    }

    /// The work tree's own git directory, absolute (`.git`, or `.git/worktrees/<name>` in a
    /// linked work tree): where `MERGE_HEAD`, `index.lock` and friends live.
    pub fn git_dir(&self) -> PathBuf {
        absolute(self.repo.git_dir())
    }

    /// The id `bytes` have as a blob, without writing it.
    pub fn blob_id_of(&self, bytes: &[u8]) -> ObjectId {
        gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, bytes)
            .expect("hashing bytes in memory cannot fail")
    }

    /// Writes a blob.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<ObjectId, Error> {
        self.repo
            .write_blob(bytes)
            .map(|id| id.detach())
            .map_err(Error::git("write a blob"))
    }

    /// Writes a blob that cannot be in the repository yet (its bytes name a run and a moment:
    /// a record, a manifest, a claim) without gix's check that it is not there already: that
    /// check opens every pack index (each read whole by gix: about 1 ns per object), the one
    /// cost of writing a run that grew with the repository.
    pub fn write_unique_blob(&self, bytes: &[u8]) -> Result<ObjectId, Error> {
        use gix::objs::Write as _;
        self.repo
            .objects
            .write_buf(gix::object::Kind::Blob, bytes)
            .map_err(|source| Error::Git {
                action: "write a blob".into(),
                source,
            })
    }

    /// A tree of a run's new state (its root, its records' buckets, a round's material), which
    /// cannot be in the repository yet (it holds the new records or manifest), written without
    /// gix's check (see [`Repo::write_unique_blob`]).
    pub(crate) fn write_unique_tree(&self, tree: &gix::objs::Tree) -> Result<ObjectId, gix::Error> {
        use gix::objs::Write as _;
        self.repo.objects.write(tree)
    }

    /// [`Repo::write_commit`] for a run's own commit, which cannot be in the repository yet (its
    /// message names the run, its tree holds the new records): written without gix's check
    /// that it is not there already (see [`Repo::write_unique_blob`]).
    pub fn write_unique_commit(
        &self,
        message: &str,
        tree: ObjectId,
        parents: Vec<ObjectId>,
    ) -> Result<ObjectId, Error> {
        use gix::objs::Write as _;
        let (committer, author) = self.identities()?;
        let commit = gix::objs::Commit {
            message: message.into(),
            tree,
            author: author.into(),
            committer: committer.into(),
            encoding: None,
            parents: parents.into(),
            extra_headers: Vec::new(),
        };
        self.repo
            .objects
            .write(&commit)
            .map_err(|source| Error::Git {
                action: "write a commit".into(),
                source,
            })
    }

    /// The committer (configured, or the fallback installed at open) and the author (the
    /// committer when none is configured) of the commits git pair writes.
    fn identities(
        &self,
    ) -> Result<(gix::actor::SignatureRef<'_>, gix::actor::SignatureRef<'_>), Error> {
        let committer = self
            .repo
            .committer()
            .expect("a fallback committer is installed at open")
            .map_err(Error::git("read the committer identity"))?;
        let author = self.repo.author().and_then(Result::ok).unwrap_or(committer);
        Ok((committer, author))
    }

    /// Writes a commit object (no ref moves) as the configured or fallback committer.
    pub fn write_commit(
        &self,
        message: &str,
        tree: ObjectId,
        parents: Vec<ObjectId>,
    ) -> Result<ObjectId, Error> {
        let (committer, author) = self.identities()?;
        let commit = self
            .repo
            .new_commit_as(committer, author, message, tree, parents)
            .map_err(Error::git("write a commit"))?;
        Ok(commit.id)
    }
}

fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    // gix hands back paths relative to the directory it was given (`./.git`, `sub/..`):
    // spelled out without `.` and `..`, as the user expects to read them.
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The configuration outside any repository (system, global, `GIT_CONFIG_*` overrides), read
/// like a repository's: what a command that needs no repository (`review --plan` outside
/// one) runs with.
pub struct GlobalConfig {
    file: gix::config::File,
}

impl GlobalConfig {
    /// Loads it; a file that cannot be read counts as empty (as for git outside a repository,
    /// the defaults then hold).
    pub fn load() -> GlobalConfig {
        let mut file = gix::config::File::from_globals().unwrap_or_default();
        // Overrides that do not read leave the files' values in force.
        if let Ok(overrides) = gix::config::File::from_environment_overrides() {
            let _ = file.append(overrides);
        }
        GlobalConfig { file }
    }

    /// Every occurrence of `key`, in file order (as [`Repo::config_occurrences`]).
    pub fn occurrences(&self, key: &str) -> Vec<Option<String>> {
        let mut values: Vec<Option<String>> = self
            .file
            .strings(key)
            .unwrap_or_default()
            .into_iter()
            .map(|v| Some(v.to_string()))
            .collect();
        if self.file.string_implicit(key) == Some(None)
            && let Some(last) = values.last_mut()
        {
            *last = None;
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn committer_of_a_new_commit(dir: &Path) -> (String, String) {
        let repo = Repo::open_isolated(dir).expect("open");
        let empty = ObjectId::empty_tree(repo.gix().object_hash());
        let id = repo.write_commit("m\n", empty, Vec::new()).expect("commit");
        let commit = repo.gix().find_commit(id).expect("read back");
        let committer = commit.committer().expect("committer");
        (committer.name.to_string(), committer.email.to_string())
    }

    #[test]
    fn the_fallback_committer_fills_only_what_is_not_configured() {
        let dir = tempfile::tempdir().expect("tempdir");
        git(dir.path(), &["init", "-q"]);
        assert_eq!(
            committer_of_a_new_commit(dir.path()),
            ("git-pair".into(), "git-pair@localhost".into())
        );
        git(dir.path(), &["config", "user.name", "Someone"]);
        assert_eq!(
            committer_of_a_new_commit(dir.path()),
            ("Someone".into(), "git-pair@localhost".into())
        );
        git(dir.path(), &["config", "user.email", "someone@example.com"]);
        assert_eq!(
            committer_of_a_new_commit(dir.path()),
            ("Someone".into(), "someone@example.com".into())
        );
        // A fallback configured by hand is not replaced.
        git(dir.path(), &["config", "--unset", "user.name"]);
        git(
            dir.path(),
            &["config", "gitoxide.committer.nameFallback", "Mine"],
        );
        assert_eq!(
            committer_of_a_new_commit(dir.path()),
            ("Mine".into(), "someone@example.com".into())
        );
    }
}
