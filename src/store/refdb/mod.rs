//! The bulk ref reads and writes `sync` and the run list need, over git's files ref backend:
//! every run tip in one pass, the newest runs without listing them all, many refs created or
//! overwritten with one write of `packed-refs`, loose refs packed. `packed` reads and writes
//! `packed-refs` (under its lock, through [`super::lock`]); `loose` reads loose ref files.
//! Another ref backend (reftable) takes gix's ordinary paths.

mod loose;
mod packed;

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use super::cas::{Swap, Swapped};
use super::layout::{RUNS_PREFIX, run_ref};
use super::{Error, Repo};
use crate::model::RunId;
use loose::{collect_loose, read_direct_ref, remove_empty_dirs};
use packed::{OnExisting, PackedRefs, packed_backwards};

/// From how many new refs on, creating them writes `packed-refs` once instead of loose files.
const PACK_THRESHOLD: usize = 16;

impl Repo {
    /// Every run ref with its tip, read in one pass.
    pub fn run_tips(&self) -> Result<BTreeMap<RunId, ObjectId>, Error> {
        Ok(self
            .refs_under(RUNS_PREFIX)?
            .into_iter()
            .filter_map(|(name, id)| {
                let run_id = crate::store::ref_run_id(&name, RUNS_PREFIX)?;
                Some((run_id, id))
            })
            .collect())
    }

    /// The newest `n` runs with their tips, oldest first, without listing every run: run ids
    /// sort by creation, so they are the loose run refs (few: `start` packs them) and the last
    /// `n` entries of the run range of the sorted `packed-refs`, read backwards from its end
    /// (a loose ref shadows a packed one, as everywhere in git). The same answer as the tail
    /// of [`Repo::run_tips`], at a cost that does not grow with the number of runs.
    pub fn newest_run_tips(&self, n: usize) -> Result<Vec<(RunId, ObjectId)>, Error> {
        let mut tips: BTreeMap<RunId, ObjectId> = BTreeMap::new();
        if !self.uses_files_ref_backend() {
            tips = self.run_tips()?;
        } else {
            // Loose refs first, then packed-refs: a ref packed meanwhile (written to
            // packed-refs, then its loose file deleted) is seen in one or the other.
            let mut loose = Vec::new();
            collect_loose(
                &self.common_dir().join(RUNS_PREFIX),
                RUNS_PREFIX,
                &mut loose,
            );
            let loose: Vec<(RunId, ObjectId)> = loose
                .into_iter()
                .filter_map(|(name, path)| {
                    let run_id = crate::store::ref_run_id(&name, RUNS_PREFIX)?;
                    Some((run_id, read_direct_ref(&path)?))
                })
                .collect();
            let packed = self
                .repo
                .refs
                .cached_packed_buffer()
                .map_err(Error::git("read packed-refs"))?;
            if let Some(packed) = packed {
                let newest_packed = packed_backwards(packed.as_ref().as_ref(), RUNS_PREFIX)
                    .filter_map(|(name, id)| {
                        Some((crate::store::ref_run_id(name, RUNS_PREFIX)?, id))
                    })
                    .take(n);
                tips.extend(newest_packed);
            }
            // A loose ref shadows its packed value.
            tips.extend(loose);
        }
        let skip = tips.len().saturating_sub(n);
        Ok(tips.into_iter().skip(skip).collect())
    }

    /// The object the ref `name` points to, if it exists and is direct.
    pub fn ref_target(&self, name: &str) -> Result<Option<ObjectId>, Error> {
        let reference = self
            .repo
            .try_find_reference(name)
            .map_err(Error::git("read a ref"))?;
        Ok(reference.and_then(|r| r.target().try_id().map(ToOwned::to_owned)))
    }

    /// Every direct ref whose full name starts with `prefix`, with the object it points to.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>, Error> {
        let platform = self.repo.references().map_err(Error::git("list refs"))?;
        let iter = platform.prefixed(prefix).map_err(Error::git("list refs"))?;
        let mut out = Vec::new();
        for reference in iter {
            let reference = reference.map_err(|e| Error::Git {
                action: "read a ref".into(),
                source: gix::Error::from_error(e),
            })?;
            if let Some(id) = reference.target().try_id() {
                out.push((reference.name().as_bstr().to_string(), id.to_owned()));
            }
        }
        Ok(out)
    }

    /// Sets refs this tool owns outright, such as the staging copies of a remote's refs,
    /// without compare-and-swap: they are a cache of what the remote holds, and a wrong
    /// value only costs a rejected lease and a fetch. Many go into `packed-refs` at once.
    pub fn overwrite_refs(&self, refs: &[(String, ObjectId)]) -> Result<(), Error> {
        if refs.is_empty() {
            return Ok(());
        }
        if refs.len() >= PACK_THRESHOLD
            && self.uses_files_ref_backend()
            && refs.iter().all(|(_, id)| self.is_commit(*id))
            && let Some(packed) = PackedRefs::lock(self.common_dir())?
        {
            packed.write_with(refs, OnExisting::Replace)?;
            // A loose file would shadow the value just packed.
            for (name, _) in refs {
                let _ = std::fs::remove_file(self.common_dir().join(name));
            }
            return Ok(());
        }
        let edits = refs
            .iter()
            .map(|(name, id)| {
                let name = super::cas::full_ref_name(name)?;
                Ok(RefEdit {
                    change: Change::Update {
                        log: no_reflog(),
                        expected: PreviousValue::Any,
                        new: gix::refs::Target::Object(*id),
                    },
                    name,
                    deref: false,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        self.repo
            .edit_references_as(edits, None)
            .map(|_| ())
            .map_err(Error::git("update staging refs"))
    }

    /// Whether a ref to `id` can go into `packed-refs` without a peeled line: anything but
    /// an annotated tag (run tips are commits, ownership refs blobs).
    fn needs_no_peeling(&self, id: ObjectId) -> bool {
        self.repo
            .find_header(id)
            .is_ok_and(|h| h.kind() != gix::object::Kind::Tag)
    }

    fn is_commit(&self, id: ObjectId) -> bool {
        self.repo
            .find_header(id)
            .is_ok_and(|h| h.kind() == gix::object::Kind::Commit)
    }

    /// Creates many run refs at once, each on condition it does not exist yet. Returns
    /// `false`, changing nothing, when one of them exists meanwhile.
    ///
    /// Many new refs go straight into `packed-refs` (one lock, one rename) instead of one
    /// loose file each: on a slow file system, creating a thousand lock files costs as much
    /// as the whole fetch. `git pack-refs` writes the same file the same way.
    pub(super) fn create_run_refs(&self, runs: &[&(RunId, ObjectId)]) -> Result<bool, Error> {
        if runs.len() >= PACK_THRESHOLD && self.uses_files_ref_backend() {
            match self.create_packed_run_refs(runs)? {
                Packed::Written => return Ok(true),
                Packed::Exists => return Ok(false),
                // Someone else is rewriting packed-refs: take the ordinary path.
                Packed::Busy => {}
            }
        }
        let names: Vec<String> = runs.iter().map(|(run_id, _)| run_ref(run_id)).collect();
        let swaps: Vec<Swap> = names
            .iter()
            .zip(runs)
            .map(|(name, (_, tip))| Swap {
                name,
                expected: None,
                new: Some(*tip),
            })
            .collect();
        let swapped =
            self.compare_and_swap(&swaps, "git-pair: sync", None, || "create run refs".into())?;
        Ok(swapped == Swapped::Done)
    }

    fn uses_files_ref_backend(&self) -> bool {
        self.config_values("extensions.refStorage")
            .last()
            .is_none_or(|backend| backend.eq_ignore_ascii_case("files"))
    }

    /// Moves the loose refs under `prefix` (a namespace this tool owns, such as a remote's
    /// staging copy, the ownership refs) into `packed-refs` when there are at least
    /// `min_loose` of them, so that reading the namespace costs one file instead of one per
    /// ref. Refs to annotated tags are left loose (they would need a peeled line). A best-effort optimisation: when `packed-refs` is busy, nothing
    /// happens. Returns how many refs were packed.
    pub fn pack_loose_refs(&self, prefix: &str, min_loose: usize) -> Result<usize, Error> {
        self.pack_loose_refs_guarded(prefix, min_loose, &|_| None)
    }

    /// Packs the loose run refs when there are at least `min_loose` of them (a repository
    /// where thousands of runs were started reads one `packed-refs` instead of thousands of
    /// files). Each loose file is removed only under that run's writer lock, so a concurrent
    /// writer of ours never loses an update to the packing.
    pub fn pack_run_refs(&self, min_loose: usize) -> Result<usize, Error> {
        self.pack_loose_refs_guarded(RUNS_PREFIX, min_loose, &|name| {
            let run_id = crate::store::ref_run_id(name, RUNS_PREFIX)?;
            self.lock_run(&run_id).ok().flatten()
        })
    }

    fn pack_loose_refs_guarded(
        &self,
        prefix: &str,
        min_loose: usize,
        guard: &dyn Fn(&str) -> Option<std::fs::File>,
    ) -> Result<usize, Error> {
        if !self.uses_files_ref_backend() {
            return Ok(0);
        }
        let mut loose = Vec::new();
        collect_loose(&self.common_dir().join(prefix), prefix, &mut loose);
        if loose.len() < min_loose {
            return Ok(0);
        }
        let Some(packed_refs) = PackedRefs::lock(self.common_dir())? else {
            return Ok(0);
        };
        let mut packed: Vec<(String, ObjectId)> = Vec::with_capacity(loose.len());
        for (name, path) in &loose {
            let Some(id) = read_direct_ref(path) else {
                continue;
            };
            if self.needs_no_peeling(id) {
                packed.push((name.clone(), id));
            }
        }
        packed_refs.write_with(&packed, OnExisting::Replace)?;
        // The packed copy now holds each value; a loose file changed meanwhile (a fetch
        // racing us) is kept, since it shadows the packed one.
        for (name, id) in &packed {
            let path = self.common_dir().join(name);
            let _held = guard(name);
            if read_direct_ref(&path) == Some(*id) {
                let _ = std::fs::remove_file(&path);
            }
        }
        remove_empty_dirs(&self.common_dir().join(prefix));
        // The emptied directory itself too, as git does: a directory that once held thousands
        // of entries keeps its size, and every later listing reads it whole. A writer that
        // needs it again creates it (gix and git both retry when it vanishes under them).
        let _ = std::fs::remove_dir(self.common_dir().join(prefix));
        Ok(packed.len())
    }

    /// Adds `runs` to `packed-refs` under its lock, after checking that none of them exists
    /// loose or packed. A loose ref created concurrently would shadow the packed one; nothing
    /// is lost then, because the staged copy that was to be created is merged on the next pull.
    fn create_packed_run_refs(&self, runs: &[&(RunId, ObjectId)]) -> Result<Packed, Error> {
        let Some(packed) = PackedRefs::lock(self.common_dir())? else {
            return Ok(Packed::Busy);
        };
        let new: Vec<(String, ObjectId)> = runs
            .iter()
            .map(|(run_id, tip)| (run_ref(run_id), *tip))
            .collect();
        for (name, _) in &new {
            if self.common_dir().join(name).symlink_metadata().is_ok() {
                return Ok(Packed::Exists);
            }
        }
        Ok(if packed.write_with(&new, OnExisting::Refuse)? {
            Packed::Written
        } else {
            Packed::Exists
        })
    }
}

enum Packed {
    Written,
    Exists,
    Busy,
}

fn no_reflog() -> LogChange {
    LogChange {
        mode: RefLog::AndReference,
        force_create_reflog: false,
        message: "git-pair: sync".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs git in `dir`, isolated from the user's configuration; asserts success and
    /// returns its trimmed stdout.
    fn git_in(dir: &std::path::Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@e")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@e")
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    }

    #[test]
    fn the_newest_run_tips_are_the_tail_of_all_tips_packed_loose_or_both() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = |args: &[&str]| git_in(dir.path(), args);
        git(&["init", "-q"]);
        let a = git(&[
            "commit-tree",
            "-m",
            "a",
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        ]);
        let b = git(&[
            "commit-tree",
            "-m",
            "b",
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        ]);
        let run = |i: usize| format!("refs/pair/runs/20260101-0000{i:02}-000abc");
        for i in 0..12 {
            git(&["update-ref", &run(i), &a]);
        }
        git(&["update-ref", "refs/tags/after", &a]);
        git(&["pack-refs", "--all"]);
        // Newer runs loose, and one packed run shadowed by a loose value.
        for i in 12..15 {
            git(&["update-ref", &run(i), &a]);
        }
        git(&["update-ref", &run(11), &b]);
        let repo = Repo::open_isolated(dir.path()).expect("open");
        let all: Vec<_> = repo.run_tips().expect("tips").into_iter().collect();
        assert_eq!(all.len(), 15);
        for n in [0, 1, 3, 4, 5, 15, 40] {
            let want = all[all.len().saturating_sub(n)..].to_vec();
            assert_eq!(repo.newest_run_tips(n).expect("newest"), want, "n = {n}");
        }
        let eleven = RunId::parse(&run(11)["refs/pair/runs/".len()..]).expect("id");
        assert!(
            repo.newest_run_tips(5)
                .expect("newest")
                .contains(&(eleven, ObjectId::from_hex(b.as_bytes()).expect("hex")))
        );
    }

    #[test]
    fn packing_the_run_refs_removes_their_emptied_directory_and_new_runs_still_land() {
        let dir = tempfile::tempdir().expect("tempdir");
        let git = |args: &[&str]| git_in(dir.path(), args);
        git(&["init", "-q"]);
        let a = git(&[
            "commit-tree",
            "-m",
            "a",
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        ]);
        for i in 0..3 {
            git(&[
                "update-ref",
                &format!("refs/pair/runs/20260101-00000{i}-000abc"),
                &a,
            ]);
        }
        let repo = Repo::open_isolated(dir.path()).expect("open");
        assert_eq!(repo.pack_run_refs(1).expect("pack"), 3);
        let runs_dir = dir.path().join(".git/refs/pair/runs");
        assert!(!runs_dir.exists(), "the emptied directory is gone");
        assert_eq!(
            git(&["for-each-ref", "--format=%(refname)", "refs/pair/runs"])
                .lines()
                .count(),
            3
        );
        // A new loose run ref recreates the directory, through git and through gix alike.
        git(&["update-ref", "refs/pair/runs/20260101-000009-000abc", &a]);
        let id = ObjectId::from_hex(a.as_bytes()).expect("hex");
        let edits = vec![RefEdit {
            change: Change::Update {
                log: no_reflog(),
                expected: PreviousValue::MustNotExist,
                new: gix::refs::Target::Object(id),
            },
            name: super::super::cas::full_ref_name("refs/pair/runs/20260101-000010-000abc")
                .expect("name"),
            deref: false,
        }];
        assert_eq!(repo.pack_run_refs(1).expect("pack again"), 1);
        assert!(!runs_dir.exists());
        repo.gix()
            .edit_references(edits)
            .expect("gix creates the directory");
        assert_eq!(repo.run_tips().expect("tips").len(), 5);
    }

    /// Where a generated run ref's value lives.
    #[derive(Debug, Clone, Copy)]
    enum Stored {
        Packed,
        Loose,
        /// Packed, and shadowed by a different loose value.
        Both,
    }

    fn oid(bytes: [u8; 20]) -> ObjectId {
        let mut bytes = bytes;
        // Never the null id, which no real ref holds.
        bytes[0] |= 1;
        ObjectId::from_bytes_or_panic(&bytes)
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 48,
            ..proptest::test_runner::Config::default()
        })]

        /// The fast reader (loose run refs plus `packed-refs` read backwards from the end of
        /// the run range) answers what gix's own ref iteration does, for any mix of packed,
        /// loose and shadowed run refs among other refs (some with peel lines) sorting before,
        /// inside and after the run range.
        #[test]
        fn the_fast_reader_of_the_newest_runs_agrees_with_gix_ref_iteration(
            runs in proptest::collection::btree_map(
                "[0-9]{8}-[0-9]{6}-[0-9a-f]{6}",
                (0u8..3, proptest::prelude::any::<[u8; 20]>(), proptest::prelude::any::<[u8; 20]>()),
                0..40,
            ),
            others in proptest::collection::btree_map(
                "refs/(heads|tags|pair/dropped|pair/runsx|pair/runs0|zz)/[a-z0-9]{1,8}",
                (proptest::prelude::any::<bool>(), proptest::prelude::any::<[u8; 20]>()),
                0..8,
            ),
            n in 0usize..45,
        ) {
            let dir = tempfile::tempdir().expect("tempdir");
            let status = std::process::Command::new("git")
                .args(["init", "-q"])
                .current_dir(dir.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()
                .expect("run git init");
            proptest::prop_assert!(status.success());
            let git_dir = dir.path().join(".git");
            // packed-refs: every entry sorted by name, peel lines after some of the others.
            let mut packed: BTreeMap<String, (ObjectId, Option<ObjectId>)> = BTreeMap::new();
            for (name, (peeled, id)) in &others {
                packed.insert(name.clone(), (oid(*id), peeled.then(|| oid([7; 20]))));
            }
            for (id, (stored, packed_id, loose_id)) in &runs {
                let name = format!("{RUNS_PREFIX}{id}");
                let stored = [Stored::Packed, Stored::Loose, Stored::Both][usize::from(*stored)];
                if matches!(stored, Stored::Packed | Stored::Both) {
                    packed.insert(name.clone(), (oid(*packed_id), None));
                }
                if matches!(stored, Stored::Loose | Stored::Both) {
                    let path = git_dir.join(&name);
                    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
                    std::fs::write(&path, format!("{}\n", oid(*loose_id))).expect("write loose");
                }
            }
            let mut text = String::from("# pack-refs with: peeled fully-peeled sorted \n");
            for (name, (id, peel)) in &packed {
                text.push_str(&format!("{id} {name}\n"));
                if let Some(peel) = peel {
                    text.push_str(&format!("^{peel}\n"));
                }
            }
            std::fs::write(git_dir.join("packed-refs"), text).expect("write packed-refs");

            let repo = Repo::open_isolated(dir.path()).expect("open");
            let platform = repo.gix().references().expect("references");
            let mut all: BTreeMap<RunId, ObjectId> = BTreeMap::new();
            for reference in platform.prefixed(RUNS_PREFIX).expect("prefixed") {
                let reference = reference.expect("a ref");
                let name = reference.name().as_bstr().to_string();
                let Some(run_id) = crate::store::ref_run_id(&name, RUNS_PREFIX)
                else {
                    continue;
                };
                all.insert(run_id, reference.target().try_id().expect("direct").to_owned());
            }
            let want: Vec<_> = all.into_iter().collect();
            let want = want[want.len().saturating_sub(n)..].to_vec();
            proptest::prop_assert_eq!(repo.newest_run_tips(n).expect("newest"), want);
        }
    }
}
