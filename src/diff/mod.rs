//! Diffs between two trees (typically a run's base and a work-tree snapshot), rendered byte for
//! byte as `git diff <old-tree> <new-tree>` prints them with git's defaults: renames at 50%,
//! three lines of context, Myers, no colour, `a/`/`b/` prefixes.
//!
//! Each changed file comes back as its own [`FileDiff`] so that a packet builder can budget
//! per file; [`render`] concatenates them into git's exact output. [`Differ`] separates the
//! cheap part (which files changed, renames) from rendering, so callers can render only what
//! they will use. This module reads objects through gix and never writes any.

mod abbrev;
mod cache;
mod error;
mod quote;
mod rename;
mod render;
mod similarity;
mod tree;
mod unified;

use std::io::Write;

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};

pub use cache::{DEFAULT_LIMIT as DELTA_BASE_CACHE_LIMIT, DeltaBaseCache};
pub use error::Error;
pub use quote::quoted as quote_path;
pub use rename::Settings as RenameSettings;
pub use tree::{RawChange, Side, changes as raw_changes};
pub use unified::{Algorithm, HunkOptions, HunkSpan};

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ChangeKind {
    /// Only in the new tree.
    Added,
    /// Only in the old tree.
    Deleted,
    /// Same path, different content or mode (same kind of entry).
    Modified,
    /// Moved to another path, possibly edited.
    Renamed {
        /// Similarity in percent, as `similarity index N%` prints it.
        similarity: u32,
    },
    /// Same path, different kind of entry (file ↔ symlink ↔ submodule); git prints it as a
    /// deletion followed by an addition.
    TypeChanged,
}

/// One changed file, before rendering: what changed, with paths, modes and ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// How it changed.
    pub kind: ChangeKind,
    /// Path in the old tree (equal to `new_path` unless renamed; for additions, the new path).
    pub old_path: BString,
    /// Path in the new tree (for deletions, the old path).
    pub new_path: BString,
    /// git mode in the old tree, `None` when added.
    pub old_mode: Option<u32>,
    /// git mode in the new tree, `None` when deleted.
    pub new_mode: Option<u32>,
    /// Object id in the old tree, `None` when added.
    pub old_id: Option<ObjectId>,
    /// Object id in the new tree, `None` when deleted.
    pub new_id: Option<ObjectId>,
}

/// One changed file, rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// What changed.
    pub change: Change,
    /// Whether git shows the content as `Binary files … differ`.
    pub binary: bool,
    /// Marked `linguist-generated` or `linguist-vendored` in `.gitattributes`.
    pub generated: bool,
    /// `+` lines in `text`.
    pub added_lines: u32,
    /// `-` lines in `text`.
    pub deleted_lines: u32,
    /// This file's complete section of `git diff` output (two sections for a type change).
    pub text: Vec<u8>,
    /// Bytes of `text` before the first hunk.
    pub header_len: usize,
    /// The hunks' positions in `text`.
    pub hunks: Vec<HunkSpan>,
}

/// How abbreviated ids in `index` lines are (`core.abbrev`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Abbrev {
    /// git's default: at least 7 hex digits, more in large repositories, and always unique.
    #[default]
    Auto,
    /// At least this many hex digits, extended until unique.
    Length(usize),
}

/// Diff settings. [`Options::default`] is git's defaults; [`Options::from_config`] reads the
/// repository's `diff.*` and `core.*` settings as `git diff` would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Hunk shape and line matching.
    pub hunks: HunkOptions,
    /// Rename detection, `None` to disable (`diff.renames=false`).
    pub renames: Option<RenameSettings>,
    /// `core.abbrev`.
    pub abbrev: Abbrev,
    /// Blobs larger than this are shown as binary without being read (`core.bigFileThreshold`).
    pub big_file_threshold: u64,
    /// `core.quotePath`: quote paths with bytes above 0x7f.
    pub quote_path: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hunks: HunkOptions::default(),
            renames: Some(RenameSettings::default()),
            abbrev: Abbrev::Auto,
            big_file_threshold: 512 * 1024 * 1024,
            quote_path: true,
        }
    }
}

impl Options {
    /// git's defaults overridden by the repository's configuration: `diff.algorithm`,
    /// `diff.context`, `diff.interHunkContext`, `diff.indentHeuristic`, `diff.renames`,
    /// `diff.renameLimit`, `core.abbrev`, `core.bigFileThreshold`, `core.quotePath`.
    ///
    /// `diff.renames=copies` is read as plain rename detection (copies are not detected).
    pub fn from_config(repo: &gix::Repository) -> Result<Options, Error> {
        let config = repo.config_snapshot();
        let mut options = Options::default();
        let string = |key: &str| {
            config
                .string(key)
                .map(|v| v.to_str_lossy().trim().to_ascii_lowercase())
        };
        if let Some(value) = string("diff.algorithm") {
            options.hunks.algorithm = match value.as_str() {
                "myers" | "default" => Algorithm::Myers,
                "minimal" => Algorithm::Minimal,
                "histogram" | "patience" => Algorithm::Histogram,
                _ => {
                    return Err(Error::Config {
                        key: "diff.algorithm",
                        value,
                    });
                }
            };
        }
        let count = |key: &'static str| -> Result<Option<u64>, Error> {
            match config.try_integer(key) {
                Ok(None) => Ok(None),
                Ok(Some(n)) if n >= 0 => Ok(Some(n as u64)),
                _ => Err(Error::Config {
                    key,
                    value: string(key).unwrap_or_default(),
                }),
            }
        };
        if let Some(n) = count("diff.context")? {
            options.hunks.context = n.min(u64::from(u32::MAX / 4)) as u32;
        }
        if let Some(n) = count("diff.interHunkContext")? {
            options.hunks.inter_hunk_context = n.min(u64::from(u32::MAX / 4)) as u32;
        }
        if let Some(value) = config.boolean("diff.indentHeuristic") {
            options.hunks.indent_heuristic = value;
        }
        if let Some(value) = string("diff.renames") {
            options.renames = match value.as_str() {
                "copies" | "copy" | "true" | "yes" | "on" | "1" | "" => {
                    Some(RenameSettings::default())
                }
                "false" | "no" | "off" | "0" => None,
                _ => {
                    return Err(Error::Config {
                        key: "diff.renames",
                        value,
                    });
                }
            };
        }
        if let (Some(limit), Some(renames)) = (count("diff.renameLimit")?, options.renames.as_mut())
        {
            renames.limit = limit;
        }
        if let Some(value) = string("core.abbrev") {
            options.abbrev = match value.as_str() {
                "auto" => Abbrev::Auto,
                "false" | "no" | "off" => Abbrev::Length(40),
                number => match number.parse::<usize>() {
                    Ok(n) => Abbrev::Length(n.clamp(4, 40)),
                    Err(_) => {
                        return Err(Error::Config {
                            key: "core.abbrev",
                            value,
                        });
                    }
                },
            };
        }
        if let Some(n) = count("core.bigFileThreshold")? {
            options.big_file_threshold = n;
        }
        if let Some(value) = config.boolean("core.quotePath") {
            options.quote_path = value;
        }
        Ok(options)
    }
}

/// Computes and renders diffs in one repository; holds the attribute lookup, the
/// abbreviations and a delta-base cache so that they are prepared once.
pub struct Differ {
    /// A handle of its own, so that it can carry the delta-base cache.
    repo: gix::Repository,
    options: Options,
    attributes: gix::worktree::Stack,
    matches: gix::attrs::search::Outcome,
    /// Made on first use, so that packs written after [`Differ::new`] (a snapshot's) count.
    abbreviator: Option<abbrev::Abbreviator>,
    /// Blob sizes already read from a header or a whole object: a packet asks for one blob's
    /// size up to three times (its size cap, git's `core.bigFileThreshold`, the scanner's cap).
    sizes: std::cell::RefCell<std::collections::HashMap<ObjectId, u64>>,
}

/// What `.gitattributes` says about one path, as far as diffs are concerned.
#[derive(Debug, Clone, Copy, Default)]
struct PathAttributes {
    /// `Some(true)` for `-diff`/`binary`, `Some(false)` for `diff` set, `None` to look at content.
    binary: Option<bool>,
    generated: bool,
}

impl Differ {
    /// Prepares diffs in `repo` with `options`. `.gitattributes` come from the work tree (and
    /// the index), as for `git diff`.
    pub fn new(repo: &gix::Repository, options: Options) -> Result<Differ, Error> {
        let index = repo
            .index_or_empty()
            .map_err(|source| Error::Attributes { source })?;
        let source = if repo.workdir().is_some() {
            gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping
        } else {
            gix::worktree::stack::state::attributes::Source::IdMapping
        };
        let attributes = repo
            .attributes_only(&index, source)
            .map_err(|source| Error::Attributes { source })?
            .detach();
        Differ::with_attributes(repo, options, attributes)
    }

    /// Prepares diffs whose attributes come from the `.gitattributes` files committed in
    /// `tree` alone: not the work tree, the index, `$GIT_DIR/info/attributes` or a global
    /// attributes file (SPEC §6.2: what a reviewer sees is decided by the change itself, never
    /// by files outside it). What review packets are built with.
    pub fn for_tree(
        repo: &gix::Repository,
        options: Options,
        tree: ObjectId,
    ) -> Result<Differ, Error> {
        let index = repo
            .index_from_tree(&tree)
            .map_err(|source| Error::Attributes { source })?;
        let case = if repo
            .config_snapshot()
            .boolean("core.ignoreCase")
            .unwrap_or(false)
        {
            gix::glob::pattern::Case::Fold
        } else {
            gix::glob::pattern::Case::Sensitive
        };
        let mut buf = Vec::new();
        let mut collection = gix::attrs::search::MetadataCollection::default();
        // Only git's built-in `binary` macro: no global file is read.
        let globals = gix::attrs::Search::new_globals(
            std::iter::empty::<std::path::PathBuf>(),
            &mut buf,
            &mut collection,
        )
        .map_err(|e| Error::Attributes {
            source: gix::Error::from_error(e),
        })?;
        let state = gix::worktree::stack::State::AttributesStack(
            gix::worktree::stack::state::Attributes::new(
                globals,
                None,
                gix::worktree::stack::state::attributes::Source::IdMapping,
                collection,
            ),
        );
        let mappings = state.id_mappings_from_index(&index, index.path_backing(), case);
        let root = repo.workdir().unwrap_or(repo.git_dir()).to_owned();
        let attributes = gix::worktree::Stack::new(root, state, case, buf, mappings);
        Differ::with_attributes(repo, options, attributes)
    }

    fn with_attributes(
        repo: &gix::Repository,
        options: Options,
        attributes: gix::worktree::Stack,
    ) -> Result<Differ, Error> {
        let matches = attributes.selected_attribute_matches([
            "diff",
            "linguist-generated",
            "linguist-vendored",
        ]);
        let mut repo = repo.clone();
        repo.objects
            .set_pack_cache(|| Box::new(cache::DeltaBaseCache::new(cache::DEFAULT_LIMIT)));
        Ok(Differ {
            repo,
            options,
            attributes,
            matches,
            abbreviator: None,
            sizes: Default::default(),
        })
    }

    /// Another handle on the same repository with the same options and attributes, and caches
    /// of its own: what a second thread renders with.
    pub fn fork(&self) -> Result<Differ, Error> {
        Differ::with_attributes(&self.repo, self.options.clone(), self.attributes.clone())
    }

    /// The options in use.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Lists the files that differ between `old` (a tree or commit; `None` for the empty tree,
    /// e.g. an unborn base) and `new`, in git's output order, with renames detected.
    pub fn changes(&mut self, old: Option<ObjectId>, new: ObjectId) -> Result<Vec<Change>, Error> {
        let old_tree = old.map(|id| peel_to_tree(&self.repo, id)).transpose()?;
        let new_tree = peel_to_tree(&self.repo, new)?;
        let raw = tree::changes(&self.repo, old_tree, new_tree)?;
        let mut queue: Vec<Change> = raw.into_iter().map(Change::from_raw).collect();
        if let Some(settings) = self.options.renames {
            queue = self.detect_renames(queue, &settings)?;
        }
        Ok(queue)
    }

    fn detect_renames(
        &mut self,
        queue: Vec<Change>,
        settings: &RenameSettings,
    ) -> Result<Vec<Change>, Error> {
        let source_slots: Vec<usize> = (0..queue.len())
            .filter(|&i| queue[i].kind == ChangeKind::Deleted)
            .collect();
        let destination_slots: Vec<usize> = (0..queue.len())
            .filter(|&i| queue[i].kind == ChangeKind::Added)
            .collect();
        if source_slots.is_empty() || destination_slots.is_empty() {
            return Ok(queue);
        }
        let null = ObjectId::null(self.repo.object_hash());
        let sources: Vec<_> = source_slots
            .iter()
            .map(|&i| rename::Candidate {
                path: &queue[i].old_path,
                mode: queue[i].old_mode.unwrap_or(0),
                id: queue[i].old_id.unwrap_or(null),
            })
            .collect();
        let destinations: Vec<_> = destination_slots
            .iter()
            .map(|&i| rename::Candidate {
                path: &queue[i].new_path,
                mode: queue[i].new_mode.unwrap_or(0),
                id: queue[i].new_id.unwrap_or(null),
            })
            .collect();
        let pairs = rename::detect(
            &sources,
            &destinations,
            settings,
            &mut RenameBlobs { differ: self },
        )?;

        let mut renamed_from: Vec<Option<(usize, u64)>> = vec![None; queue.len()];
        let mut consumed = vec![false; queue.len()];
        for pair in pairs {
            renamed_from[destination_slots[pair.destination]] =
                Some((source_slots[pair.source], pair.score));
            consumed[source_slots[pair.source]] = true;
        }
        let mut out = Vec::with_capacity(queue.len());
        for (i, change) in queue.iter().enumerate() {
            if consumed[i] {
                continue;
            }
            match renamed_from[i] {
                Some((source, score)) => {
                    let old = &queue[source];
                    out.push(Change {
                        kind: ChangeKind::Renamed {
                            similarity: (score * 100 / similarity::MAX_SCORE) as u32,
                        },
                        old_path: old.old_path.clone(),
                        new_path: change.new_path.clone(),
                        old_mode: old.old_mode,
                        new_mode: change.new_mode,
                        old_id: old.old_id,
                        new_id: change.new_id,
                    });
                }
                None => out.push(change.clone()),
            }
        }
        Ok(out)
    }

    /// Renders one change as git prints it.
    pub fn render(&mut self, change: &Change) -> Result<FileDiff, Error> {
        let old = match (change.old_mode, change.old_id) {
            (Some(mode), Some(id)) => Some(self.load_side(&change.old_path, mode, id)?),
            _ => None,
        };
        let new = match (change.new_mode, change.new_id) {
            (Some(mode), Some(id)) => Some(self.load_side(&change.new_path, mode, id)?),
            _ => None,
        };
        let null_abbrev = "0".repeat(self.abbreviator().min_len());
        let base = render::SectionView {
            old: old.as_ref().map(LoadedSide::view),
            new: new.as_ref().map(LoadedSide::view),
            similarity: match change.kind {
                ChangeKind::Renamed { similarity } => Some(similarity),
                _ => None,
            },
            same_id: change.old_id == change.new_id,
            null_abbrev: &null_abbrev,
            quote_path: self.options.quote_path,
        };
        let mut text = Vec::new();
        let mut written = if change.kind == ChangeKind::TypeChanged {
            let deletion = render::SectionView {
                new: None,
                same_id: false,
                ..base
            };
            let addition = render::SectionView {
                old: None,
                same_id: false,
                ..base
            };
            let first = render::write_section(&deletion, &self.options.hunks, &mut text);
            let offset = text.len();
            let second = render::write_section(&addition, &self.options.hunks, &mut text);
            let mut hunks = first.hunks;
            hunks.extend(second.hunks.iter().map(|h| HunkSpan {
                start: h.start + offset,
                end: h.end + offset,
                ..*h
            }));
            render::Written {
                header_len: first.header_len,
                hunks,
                added: first.added + second.added,
                deleted: first.deleted + second.deleted,
            }
        } else {
            render::write_section(&base, &self.options.hunks, &mut text)
        };
        written.header_len = written.header_len.min(text.len());
        let binary =
            old.as_ref().is_some_and(|s| s.binary) || new.as_ref().is_some_and(|s| s.binary);
        let generated = new.as_ref().or(old.as_ref()).is_some_and(|s| s.generated);
        Ok(FileDiff {
            change: change.clone(),
            binary,
            generated,
            added_lines: written.added,
            deleted_lines: written.deleted,
            text,
            header_len: written.header_len,
            hunks: written.hunks,
        })
    }

    fn path_attributes(&mut self, path: &[u8], mode: u32) -> Result<PathAttributes, Error> {
        let entry_mode = if mode == 0o120000 {
            gix::index::entry::Mode::SYMLINK
        } else if mode == 0o160000 {
            gix::index::entry::Mode::COMMIT
        } else {
            gix::index::entry::Mode::FILE
        };
        let platform = self
            .attributes
            .at_entry(path.as_bstr(), Some(entry_mode), &self.repo.objects)
            .map_err(|source| Error::Attributes {
                source: gix::Error::from_error(source),
            })?;
        platform.matching_attributes(&mut self.matches);
        let mut out = PathAttributes::default();
        for m in self.matches.iter_selected() {
            use gix::attrs::StateRef;
            let name = m.assignment.name.as_str();
            match (name, m.assignment.state) {
                ("diff", StateRef::Set) => out.binary = Some(false),
                ("diff", StateRef::Unset) => out.binary = Some(true),
                ("linguist-generated" | "linguist-vendored", StateRef::Set) => out.generated = true,
                ("linguist-generated" | "linguist-vendored", StateRef::Value(v)) => {
                    out.generated =
                        !matches!(v.as_bstr().as_bytes(), b"false" | b"0" | b"no" | b"off");
                }
                _ => {}
            }
        }
        Ok(out)
    }

    fn load_side(&mut self, path: &[u8], mode: u32, id: ObjectId) -> Result<LoadedSide, Error> {
        let abbrev = self.abbreviate(id);
        if mode == 0o160000 {
            return Ok(LoadedSide {
                path: path.into(),
                mode,
                abbrev,
                content: format!("Subproject commit {id}\n").into_bytes(),
                binary: false,
                generated: false,
            });
        }
        // git consults the diff driver (attributes) for regular files only.
        let attributes = if mode & 0o170000 == 0o100000 {
            self.path_attributes(path, mode)?
        } else {
            PathAttributes::default()
        };
        let mut binary = attributes.binary;
        if binary.is_none() && self.blob_size(id)? > self.options.big_file_threshold {
            binary = Some(true);
        }
        let content = match binary {
            Some(true) => Vec::new(),
            _ => self.blob(id)?,
        };
        let binary = binary.unwrap_or_else(|| is_binary_content(&content));
        Ok(LoadedSide {
            path: path.into(),
            mode,
            abbrev,
            content,
            binary,
            generated: attributes.generated,
        })
    }

    /// The content of blob `id` when it is text worth scanning: at most `max_bytes` long and
    /// without a NUL in its first 8 KiB (git's binary test); `None` otherwise.
    pub fn text_blob(&self, id: ObjectId, max_bytes: u64) -> Result<Option<Vec<u8>>, Error> {
        if self.blob_size(id)? > max_bytes {
            return Ok(None);
        }
        let content = self.blob(id)?;
        Ok((!is_binary_content(&content)).then_some(content))
    }

    fn blob(&self, id: ObjectId) -> Result<Vec<u8>, Error> {
        let object = self
            .repo
            .find_object(id)
            .map_err(|source| Error::ReadObject {
                what: "blob",
                id,
                source,
            })?;
        let data = object.detach().data;
        self.sizes.borrow_mut().insert(id, data.len() as u64);
        Ok(data)
    }

    /// The size of blob `id`, from its header (nothing is read whole), read once.
    pub fn blob_size(&self, id: ObjectId) -> Result<u64, Error> {
        if let Some(&size) = self.sizes.borrow().get(&id) {
            return Ok(size);
        }
        let header = self
            .repo
            .find_header(id)
            .map_err(|source| Error::ReadObject {
                what: "blob",
                id,
                source,
            })?;
        self.sizes.borrow_mut().insert(id, header.size());
        Ok(header.size())
    }

    fn abbreviate(&mut self, id: ObjectId) -> String {
        self.abbreviator().abbreviate(&id)
    }

    fn abbreviator(&mut self) -> &mut abbrev::Abbreviator {
        let repo = &self.repo;
        let abbrev = self.options.abbrev;
        self.abbreviator.get_or_insert_with(|| {
            let hex_len = match abbrev {
                Abbrev::Length(n) => n.clamp(4, repo.object_hash().len_in_hex()),
                Abbrev::Auto => auto_hex_len(repo.objects.packed_object_count().unwrap_or(0)),
            };
            abbrev::Abbreviator::new(repo.objects.store_ref().path(), hex_len, repo.object_hash())
        })
    }
}

struct LoadedSide {
    path: BString,
    mode: u32,
    abbrev: String,
    content: Vec<u8>,
    binary: bool,
    generated: bool,
}

impl LoadedSide {
    fn view(&self) -> render::SideView<'_> {
        render::SideView {
            path: &self.path,
            mode: self.mode,
            abbrev: &self.abbrev,
            content: &self.content,
            binary: self.binary,
        }
    }
}

/// git's `buffer_is_binary`: a NUL byte in the first 8000 bytes.
fn is_binary_content(content: &[u8]) -> bool {
    content[..content.len().min(8000)].contains(&0)
}

/// git's automatic abbreviation length: about half the bits needed to count the packed
/// objects, in hex digits, at least 7.
fn auto_hex_len(packed_objects: u64) -> usize {
    let bits = 64 - packed_objects.leading_zeros();
    (bits.div_ceil(2) as usize).max(7)
}

fn peel_to_tree(repo: &gix::Repository, id: ObjectId) -> Result<ObjectId, Error> {
    let object = repo.find_object(id).map_err(|source| Error::ReadObject {
        what: "object",
        id,
        source,
    })?;
    match object.kind {
        gix::object::Kind::Tree => Ok(id),
        gix::object::Kind::Commit => {
            let commit = object.into_commit();
            commit
                .tree_id()
                .map(|tree| tree.detach())
                .map_err(|source| Error::ReadObject {
                    what: "commit",
                    id,
                    source,
                })
        }
        _ => Err(Error::NotATree { id }),
    }
}

impl Change {
    /// A modification of `path` with placeholder ids, for tests of code that consumes changes.
    #[cfg(test)]
    pub(crate) fn for_tests(kind: ChangeKind, path: &str) -> Change {
        Change {
            kind,
            old_path: path.into(),
            new_path: path.into(),
            old_mode: Some(0o100644),
            new_mode: Some(0o100644),
            old_id: Some(ObjectId::null(gix::hash::Kind::Sha1)),
            new_id: Some(ObjectId::null(gix::hash::Kind::Sha1)),
        }
    }

    fn from_raw(raw: tree::RawChange) -> Change {
        let kind = match (raw.old, raw.new) {
            (None, _) => ChangeKind::Added,
            (_, None) => ChangeKind::Deleted,
            (Some(o), Some(n)) if (o.mode ^ n.mode) & 0o170000 != 0 => ChangeKind::TypeChanged,
            _ => ChangeKind::Modified,
        };
        Change {
            kind,
            old_path: raw.path.clone(),
            new_path: raw.path,
            old_mode: raw.old.map(|s| s.mode),
            new_mode: raw.new.map(|s| s.mode),
            old_id: raw.old.map(|s| s.id),
            new_id: raw.new.map(|s| s.id),
        }
    }
}

struct RenameBlobs<'a> {
    differ: &'a mut Differ,
}

impl rename::Blobs for RenameBlobs<'_> {
    type Error = Error;

    fn size(&mut self, candidate: &rename::Candidate<'_>) -> Result<u64, Error> {
        self.differ.blob_size(candidate.id)
    }

    fn fingerprint(
        &mut self,
        candidate: &rename::Candidate<'_>,
    ) -> Result<similarity::Fingerprint, Error> {
        let content = self.differ.blob(candidate.id)?;
        let attributes = self
            .differ
            .path_attributes(candidate.path, candidate.mode)?;
        let binary = match attributes.binary {
            Some(binary) => binary,
            None => {
                content.len() as u64 > self.differ.options.big_file_threshold
                    || is_binary_content(&content)
            }
        };
        Ok(similarity::Fingerprint::new(&content, !binary))
    }
}

/// Renders a file pair from contents, for tests of code that consumes rendered diffs.
#[cfg(test)]
pub(crate) fn file_diff_for_tests(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> FileDiff {
    let id = |content: &[u8]| {
        gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, content)
            .expect("hashing memory")
    };
    fn view<'a>(path: &'a str, content: &'a [u8]) -> render::SideView<'a> {
        render::SideView {
            path: path.as_bytes(),
            mode: 0o100644,
            abbrev: "1234567",
            content,
            binary: is_binary_content(content),
        }
    }
    let section = render::SectionView {
        old: old.map(|c| view(path, c)),
        new: new.map(|c| view(path, c)),
        similarity: None,
        same_id: old == new,
        null_abbrev: "0000000",
        quote_path: true,
    };
    let mut text = Vec::new();
    let written = render::write_section(&section, &HunkOptions::default(), &mut text);
    let kind = match (old, new) {
        (None, _) => ChangeKind::Added,
        (_, None) => ChangeKind::Deleted,
        _ => ChangeKind::Modified,
    };
    FileDiff {
        change: Change {
            kind,
            old_path: path.into(),
            new_path: path.into(),
            old_mode: old.map(|_| 0o100644),
            new_mode: new.map(|_| 0o100644),
            old_id: old.map(id),
            new_id: new.map(id),
        },
        binary: section.old.is_some_and(|s| s.binary) || section.new.is_some_and(|s| s.binary),
        generated: false,
        added_lines: written.added,
        deleted_lines: written.deleted,
        text,
        header_len: written.header_len,
        hunks: written.hunks,
    }
}

/// Computes the diff from `old` (a tree or commit, or `None` for the empty tree) to `new` and
/// renders every file.
pub fn diff_trees(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: ObjectId,
    options: &Options,
) -> Result<Vec<FileDiff>, Error> {
    let mut differ = Differ::new(repo, options.clone())?;
    let changes = differ.changes(old, new)?;
    changes.iter().map(|change| differ.render(change)).collect()
}

/// The paths whose entries differ between trees `old` and `new` (files, symlinks and
/// submodules; no rename detection), in git's order. Reads only the subtrees that differ.
pub fn changed_paths(
    repo: &gix::Repository,
    old: ObjectId,
    new: ObjectId,
) -> Result<Vec<String>, Error> {
    Ok(tree::changes(repo, Some(old), new)?
        .into_iter()
        .map(|change| change.path.to_str_lossy().into_owned())
        .collect())
}

/// Writes the files' sections one after the other: exactly `git diff`'s output.
pub fn render(files: &[FileDiff], out: &mut dyn Write) -> std::io::Result<()> {
    for file in files {
        out.write_all(&file.text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_abbreviation_length_follows_git() {
        let cases = [
            (0, 7),
            (1, 7),
            (16_383, 7),
            (16_384, 8),
            (20_000, 8),
            (262_144, 10),
        ];
        for (count, expected) in cases {
            assert_eq!(auto_hex_len(count), expected, "{count} objects");
        }
    }

    #[test]
    fn binary_means_nul_in_first_8000_bytes() {
        let mut data = vec![b'a'; 9000];
        assert!(!is_binary_content(&data));
        data[7999] = 0;
        assert!(is_binary_content(&data));
        data[7999] = b'a';
        data[8000] = 0;
        assert!(!is_binary_content(&data));
    }
}
