//! The review packet's diff: the base → snapshot diff cut to a byte budget, with a coverage
//! manifest saying what a reviewer saw. Refuses outright when a path matches a blindness
//! pattern (`pair.review.exclude`), before anything else is looked at.
//!
//! Over budget the packet degrades in tiers: lockfiles/generated/vendored files to names only;
//! deletion-only hunks dropped (a marker line says how many lines); the largest files clipped
//! with a marker; the files that still do not fit (the last ones, in git's order) listed as
//! not included, with that list itself bounded. The text never exceeds the budget.
//! Built with a scanner ([`build_redacted`]), every secret is replaced by `[REDACTED:<kind>]`
//! before the budget applies, and the packet lists what was found, including in files too
//! far over budget to be rendered at all (scanned from their blobs).
//! This module decides and formats; it never prints and never spawns anything.

pub mod glob;
pub mod passes;
mod redact;
mod shape;

use gix::bstr::ByteSlice;

use crate::diff::{Change, ChangeKind, Differ, FileDiff};
use crate::secrets::{Finding, Scanner};
pub use shape::MARKER;
use shape::{Prepared, Shape};

/// Packet settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The most bytes the packet's diff may take (`pair.diffBudgetBytes`).
    pub budget_bytes: usize,
    /// Paths a reviewer must never see (`pair.review.exclude`), gitignore-style patterns.
    pub exclude: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budget_bytes: 256 * 1024,
            exclude: ALWAYS_EXCLUDED.map(str::to_owned).to_vec(),
        }
    }
}

/// Why no packet was built.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A changed path matches a blindness pattern: the review must be rejected before spawn.
    #[error(
        "the change touches '{path}', which matches the review exclude pattern '{pattern}': refusing to show it to a reviewer"
    )]
    Blind { path: String, pattern: String },
    /// Rendering a file's diff failed.
    #[error(transparent)]
    Diff(#[from] crate::diff::Error),
}

/// A packet: the diff text for the reviewer and what it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// git diff text with `[git-pair]` marker lines, at most `budget_bytes` long.
    pub diff: Vec<u8>,
    /// What the diff shows.
    pub coverage: Coverage,
    /// The secrets found in the change (redacted from `diff`), in file order; empty when the
    /// packet was built without a scanner. Ranges point into the unredacted file diffs.
    pub secrets: Vec<Finding>,
}

/// What a packet shows, for the review record, transcript and PR body.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Coverage {
    /// Schema version.
    pub v: u32,
    /// Changed files in the diff.
    pub files_total: usize,
    /// Files shown completely (binary files count here: metadata is all there is to show).
    pub full: FileList,
    /// Files shown in part: deletion-only hunks dropped, or content clipped.
    pub clipped: FileList,
    /// Files shown by name and header only.
    pub names_only: FileList,
    /// Files left out, named only in the list at the end of the diff.
    pub not_included: FileList,
    /// Files shown as metadata only because git shows them as binary.
    pub binary: usize,
    /// Length of the packet's diff.
    pub bytes_included: u64,
    /// Length of the complete git diff, when every file was rendered (files known to be left
    /// out are not diffed at all, so then it is unknown: `null`).
    pub bytes_total: Option<u64>,
    /// The budget the packet was cut to.
    pub budget_bytes: u64,
    /// `reviewed X of Y files` when not every file is shown completely, else `null`.
    pub summary: Option<String>,
    /// How many packets (passes) the change was reviewed in; 1 for a single packet.
    #[serde(default = "one")]
    pub passes: u32,
    /// Files whose content no pass showed (binary content, over `pair.maxFileBytes`, a line
    /// longer than a pass): an approval with any of them is partial.
    #[serde(default)]
    pub unreviewed: FileList,
}

fn one() -> u32 {
    1
}

/// A bounded list of paths.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct FileList {
    /// How many files are in this category.
    pub count: usize,
    /// The first of them (at most [`LISTED_PATHS`]), as display strings (`old => new` for
    /// renames).
    pub paths: Vec<String>,
}

/// At most this many paths are named per coverage list.
pub const LISTED_PATHS: usize = 100;

impl FileList {
    fn push(&mut self, label: &str) {
        self.count += 1;
        if self.paths.len() < LISTED_PATHS {
            self.paths.push(label.to_owned());
        }
    }
}

impl Coverage {
    /// Whether some file is not shown completely.
    pub fn is_partial(&self) -> bool {
        self.full.count < self.files_total
    }
}

/// Lockfiles, minified and vendored files: names only when over budget. Files marked
/// `linguist-generated`/`linguist-vendored` in `.gitattributes` join them.
const GENERATED: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "go.sum",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "Gemfile.lock",
    "composer.lock",
    "flake.lock",
    "*.min.js",
    "*.min.css",
    "vendor/",
    "node_modules/",
];

/// Content bytes every included file keeps at least before files are left out.
const MIN_ALLOWANCE: usize = 1024;
/// The not-included list takes at most this share of the budget (and at most 16 KiB).
const LIST_SHARE: usize = 8;
const LIST_MAX: usize = 16 * 1024;

/// Paths a reviewer never sees, whatever `pair.review.exclude` adds: they are checked on their
/// own, so a `!pattern` there cannot re-include them.
pub const ALWAYS_EXCLUDED: [&str; 2] = crate::config::DEFAULT_REVIEW_EXCLUDE;

/// Checks `paths` (old and new path of every changed file) against [`ALWAYS_EXCLUDED`] and the
/// exclude patterns, which are read as one `.gitignore` file (`!` re-includes, the last match
/// wins).
pub fn check_blindness<'a>(
    paths: impl IntoIterator<Item = &'a [u8]>,
    exclude: &[String],
) -> Result<(), Error> {
    let always = glob::PathSet::new(ALWAYS_EXCLUDED);
    let excluded = glob::PathSet::new(exclude);
    for path in paths {
        if let Some(pattern) = always.matching(path).or_else(|| excluded.matching(path)) {
            return Err(Error::Blind {
                path: path.to_str_lossy().into_owned(),
                pattern: pattern.to_owned(),
            });
        }
    }
    Ok(())
}

/// Builds a packet from already rendered files (as [`crate::diff::diff_trees`] returns them).
pub fn build(files: &[FileDiff], options: &Options) -> Result<Packet, Error> {
    let changes: Vec<&Change> = files.iter().map(|f| &f.change).collect();
    let mut source = |i: usize| -> Result<FileDiff, Error> { Ok(files[i].clone()) };
    // (Each file is copied once, into the packet's working set; `build_from_changes` moves.)
    assemble(&changes, &mut source, options)
}

/// Builds a packet from changes, rendering only the files it shows: files beyond what can fit
/// are listed by name without being diffed. The fast path for large changes. Nothing is
/// redacted: what goes to a reviewer is built by [`build_redacted`].
pub fn build_from_changes(
    differ: &mut Differ,
    changes: &[Change],
    options: &Options,
) -> Result<Packet, Error> {
    let refs: Vec<&Change> = changes.iter().collect();
    let mut source = |i: usize| -> Result<FileDiff, Error> { Ok(differ.render(&changes[i])?) };
    assemble(&refs, &mut source, options)
}

/// [`build_from_changes`] with every secret `scanner` finds replaced by `[REDACTED:<kind>]`
/// in each file's diff before the budget is applied (so the budget holds for what is really
/// sent). Files that are not rendered (too far over budget) are scanned from their new
/// content (text blobs up to [`crate::secrets::MAX_SCANNED_BLOB`]), so that a secret in the
/// change is reported even when the reviewer never sees it.
pub fn build_redacted(
    differ: &mut Differ,
    changes: &[Change],
    options: &Options,
    scanner: &Scanner,
) -> Result<Packet, Error> {
    let refs: Vec<&Change> = changes.iter().collect();
    // The files that fit the budget in full are rendered ahead and redacted on worker
    // threads meanwhile; the rest, if the packet asks for them, one by one.
    let mut ahead = redact::render_ahead(differ, changes, options.budget_bytes, scanner)?;
    let mut found: Vec<(usize, Vec<Finding>)> = Vec::new();
    let mut rendered = 0;
    let mut source = |i: usize| -> Result<FileDiff, Error> {
        rendered = rendered.max(i + 1);
        let (file, findings) = match ahead.get_mut(i).and_then(Option::take) {
            Some(done) => done,
            None => redact::redact_file(scanner, differ.render(&changes[i])?),
        };
        if !findings.is_empty() {
            found.push((i, findings));
        }
        Ok(file)
    };
    let mut packet = assemble(&refs, &mut source, options)?;
    found.sort_by_key(|(i, _)| *i);
    packet.secrets = found.into_iter().flat_map(|(_, f)| f).collect();
    for change in &changes[rendered..] {
        let Some(id) = change.new_id.filter(|_| change.new_mode != Some(0o160000)) else {
            continue;
        };
        let path = change.new_path.to_str_lossy();
        if scanner.skips_path(&path) {
            continue;
        }
        if let Some(content) = differ.text_blob(id, crate::secrets::MAX_SCANNED_BLOB)? {
            packet.secrets.extend(scanner.scan(&path, &content));
        }
    }
    Ok(packet)
}

/// The whole pipeline after the snapshot: diff `old` (a tree or commit, `None` for the empty
/// tree) against `new`, and build the packet, rendering only the files it shows.
pub fn from_trees(
    repo: &gix::Repository,
    old: Option<gix::ObjectId>,
    new: gix::ObjectId,
    diff_options: &crate::diff::Options,
    options: &Options,
) -> Result<Packet, Error> {
    let mut differ = Differ::new(repo, diff_options.clone())?;
    let changes = differ.changes(old, new)?;
    build_from_changes(&mut differ, &changes, options)
}

/// A change's path as people read it (UTF-8, not git-quoted): what the coverage lists name.
fn display(change: &Change) -> String {
    let text = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
    match change.kind {
        ChangeKind::Renamed { .. } => {
            format!("{} => {}", text(&change.old_path), text(&change.new_path))
        }
        _ => text(&change.new_path),
    }
}

/// A change's path as `git diff` writes it (quoted when needed): what the packet's own
/// "not included" list names.
fn label(change: &Change) -> String {
    let quote = |p: &[u8]| crate::diff::quote_path(p, true);
    match change.kind {
        ChangeKind::Renamed { .. } => {
            format!("{} => {}", quote(&change.old_path), quote(&change.new_path))
        }
        _ => quote(&change.new_path),
    }
}

fn is_generated(change: &Change, generated: &glob::PathSet) -> bool {
    generated.matches(&change.new_path)
}

fn assemble(
    changes: &[&Change],
    render: &mut dyn FnMut(usize) -> Result<FileDiff, Error>,
    options: &Options,
) -> Result<Packet, Error> {
    check_blindness(
        changes
            .iter()
            .flat_map(|c| [c.old_path.as_slice(), c.new_path.as_slice()]),
        &options.exclude,
    )?;
    let budget = options.budget_bytes;
    let generated_patterns = glob::PathSet::new(GENERATED);
    let labels: Vec<String> = changes.iter().map(|c| label(c)).collect();
    let displays: Vec<String> = changes.iter().map(|c| display(c)).collect();
    let list_cap = (budget / LIST_SHARE).min(LIST_MAX);
    // Room for the list of left-out files: the list of all files bounds the list of any
    // suffix of them when it is complete; when it had to be cut, a suffix's list may name
    // other (longer) paths, so reserve the whole cap.
    let full_list = not_included_list(&labels, budget, list_cap);
    let list_reserve = if full_list.ends_with(b" more\n") {
        full_list.len().max(list_cap).min(budget)
    } else {
        full_list.len()
    };

    // Render in order while the reduced shapes might still all fit, or while the minimal
    // shapes of a prefix fit next to the not-included list.
    let mut prepared: Vec<Prepared> = Vec::new();
    let (mut git_sum, mut full_sum, mut tier1_sum) = (0usize, 0usize, 0usize);
    let (mut reduced_sum, mut minimal_sum) = (0usize, 0usize);
    for (i, change) in changes.iter().enumerate() {
        if reduced_sum > budget && minimal_sum > budget.saturating_sub(list_reserve) {
            break;
        }
        let file = render(i)?;
        git_sum += file.text.len();
        let generated = file.generated || is_generated(change, &generated_patterns);
        let p = Prepared::new(file, generated);
        full_sum += p.full.len();
        tier1_sum += p.tier1().len();
        reduced_sum += shape_bytes(p.reduced()).len();
        minimal_sum += p.clipped_len(MIN_ALLOWANCE);
        prepared.push(p);
    }
    let all_rendered = prepared.len() == changes.len();

    let mut out = Outcome::new(changes.len(), budget);
    if all_rendered && (full_sum <= budget || tier1_sum <= budget || reduced_sum <= budget) {
        let tier = if full_sum <= budget {
            0
        } else if tier1_sum <= budget {
            1
        } else {
            2
        };
        for (p, label) in prepared.iter().zip(&displays) {
            match tier {
                0 => out.add(&p.full, Kind::Full, p, label),
                1 => {
                    let names = p.tier1().len() < p.full.len();
                    out.add(
                        p.tier1(),
                        if names { Kind::NamesOnly } else { Kind::Full },
                        p,
                        label,
                    )
                }
                _ => out.add_reduced(p, label),
            }
        }
        return Ok(out.finish(all_rendered.then_some(git_sum as u64)));
    }

    // Tiers 3 and 4: keep the longest prefix whose minimal shapes fit beside the list of the
    // rest, then give every kept file the largest common content allowance that fits.
    let mut kept = 0;
    let mut minimal = 0;
    for p in &prepared {
        let next = minimal + p.clipped_len(MIN_ALLOWANCE);
        let rest_listed = if kept + 1 == changes.len() {
            0
        } else {
            list_reserve
        };
        if next + rest_listed > budget {
            break;
        }
        minimal = next;
        kept += 1;
    }
    let rest = &labels[kept..];
    let listing = if rest.is_empty() {
        Vec::new()
    } else {
        not_included_list(rest, budget, list_cap)
    };
    let room = budget.saturating_sub(listing.len());
    let total_at = |allowance: usize| -> usize {
        prepared[..kept]
            .iter()
            .map(|p| p.clipped_len(allowance))
            .sum()
    };
    let (mut low, mut high) = (
        MIN_ALLOWANCE,
        prepared[..kept]
            .iter()
            .map(|p| p.full.len())
            .max()
            .unwrap_or(0),
    );
    high = high.max(low);
    if total_at(high) <= room {
        low = high;
    }
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if total_at(mid) <= room {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    let allowance = low;
    for (p, label) in prepared[..kept].iter().zip(&displays) {
        let (text, clipped) = p.clipped(allowance);
        let kind = match p.reduced() {
            Shape::NamesOnly(_) => Kind::NamesOnly,
            Shape::WithoutDeletions(_) if p.kept_hunks == 0 && !clipped => Kind::NamesOnly,
            Shape::WithoutDeletions(_) => Kind::Clipped,
            Shape::Full(_) if clipped => Kind::Clipped,
            Shape::Full(_) => Kind::Full,
        };
        out.add(&text, kind, p, label);
    }
    for label in &displays[kept..] {
        out.coverage.not_included.push(label);
    }
    if out.diff.len() + listing.len() <= budget {
        out.diff.extend_from_slice(&listing);
    }
    Ok(out.finish(all_rendered.then_some(git_sum as u64)))
}

fn shape_bytes(shape: Shape<'_>) -> &[u8] {
    match shape {
        Shape::Full(t) | Shape::NamesOnly(t) | Shape::WithoutDeletions(t) => t,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Full,
    Clipped,
    NamesOnly,
}

struct Outcome {
    diff: Vec<u8>,
    coverage: Coverage,
}

impl Outcome {
    fn new(files_total: usize, budget: usize) -> Outcome {
        Outcome {
            diff: Vec::new(),
            coverage: Coverage {
                v: 1,
                files_total,
                full: FileList::default(),
                clipped: FileList::default(),
                names_only: FileList::default(),
                not_included: FileList::default(),
                binary: 0,
                bytes_included: 0,
                bytes_total: None,
                budget_bytes: budget as u64,
                summary: None,
                passes: 1,
                unreviewed: FileList::default(),
            },
        }
    }

    fn add(&mut self, text: &[u8], kind: Kind, p: &Prepared, label: &str) {
        self.diff.extend_from_slice(text);
        if p.metadata_only && kind == Kind::Full {
            self.coverage.binary += 1;
        }
        match kind {
            Kind::Full => self.coverage.full.push(label),
            Kind::Clipped => self.coverage.clipped.push(label),
            Kind::NamesOnly => self.coverage.names_only.push(label),
        }
    }

    fn add_reduced(&mut self, p: &Prepared, label: &str) {
        let kind = match p.reduced() {
            Shape::Full(_) => Kind::Full,
            Shape::NamesOnly(_) => Kind::NamesOnly,
            Shape::WithoutDeletions(_) if p.kept_hunks == 0 => Kind::NamesOnly,
            Shape::WithoutDeletions(_) => Kind::Clipped,
        };
        self.add(shape_bytes(p.reduced()), kind, p, label);
    }

    fn finish(mut self, bytes_total: Option<u64>) -> Packet {
        let c = &mut self.coverage;
        c.bytes_included = self.diff.len() as u64;
        c.bytes_total = bytes_total;
        if c.is_partial() {
            c.summary = Some(format!(
                "reviewed {} of {} files",
                c.full.count, c.files_total
            ));
        }
        Packet {
            diff: self.diff,
            coverage: self.coverage,
            secrets: Vec::new(),
        }
    }
}

/// The list of files left out, at most `cap` bytes (and never more than `budget`): a count
/// line, as many names as fit, and how many more there are. Empty when not even the count
/// line fits the budget.
fn not_included_list(labels: &[String], budget: usize, cap: usize) -> Vec<u8> {
    if labels.is_empty() {
        return Vec::new();
    }
    let head = format!(
        "{MARKER} not included (over the {budget}-byte budget): {} files\n",
        labels.len()
    );
    if head.len() > budget {
        return Vec::new();
    }
    let limit = cap.max(head.len()).min(budget);
    let more = |n: usize| format!("{MARKER} ... and {n} more\n");
    let mut out = head.into_bytes();
    for (i, label) in labels.iter().enumerate() {
        let line = format!("{MARKER}   {label}\n");
        let after = labels.len() - i - 1;
        let tail = if after > 0 { more(after).len() } else { 0 };
        if out.len() + line.len() + tail <= limit {
            out.extend_from_slice(line.as_bytes());
            continue;
        }
        let rest = more(labels.len() - i);
        if out.len() + rest.len() <= limit {
            out.extend_from_slice(rest.as_bytes());
        }
        break;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::file_diff_for_tests;

    /// Deterministic pseudo-random numbers for the property test.
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n.max(1)
        }
    }

    fn random_files(rng: &mut Lcg) -> Vec<FileDiff> {
        let count = 1 + rng.below(40) as usize;
        (0..count)
            .map(|i| {
                let lines = |rng: &mut Lcg, tag: &str| -> Vec<u8> {
                    (0..rng.below(400))
                        .map(|n| format!("{tag} line {n} {}\n", "x".repeat(rng.below(90) as usize)))
                        .collect::<String>()
                        .into_bytes()
                };
                let name = match rng.below(6) {
                    0 => format!("vendor/lib{i}.rs"),
                    1 => format!("dir/Cargo.lock{i}"),
                    _ => format!("src/file{i}.rs"),
                };
                let old = lines(rng, "old");
                let mut new = old.clone();
                match rng.below(5) {
                    0 => return file_diff_for_tests(&name, Some(&old), None),
                    1 => return file_diff_for_tests(&name, None, Some(&lines(rng, "new"))),
                    2 => new.truncate(new.len() / 3),
                    3 => new.extend_from_slice(&lines(rng, "more")),
                    _ => {
                        let cut = rng.below(new.len() as u64 + 1) as usize;
                        new.splice(cut..cut, lines(rng, "inserted"));
                    }
                }
                file_diff_for_tests(&name, Some(&old), Some(&new))
            })
            .collect()
    }

    #[test]
    fn no_negation_re_includes_what_is_always_excluded() {
        let exclude: Vec<String> = ["HANDOFF.md", ".pair/working/**", "!HANDOFF.md", "!.pair/"]
            .map(String::from)
            .to_vec();
        for path in ["HANDOFF.md", "docs/HANDOFF.md", ".pair/working/notes"] {
            let err = check_blindness([path.as_bytes()], &exclude).expect_err(path);
            assert!(matches!(err, Error::Blind { .. }), "{path}");
        }
        // Configured patterns themselves can be narrowed with a negation.
        let exclude = ["secrets/*", "!secrets/README.md"].map(String::from);
        assert!(check_blindness([b"secrets/README.md".as_slice()], &exclude).is_ok());
        assert!(check_blindness([b"secrets/key.pem".as_slice()], &exclude).is_err());
        assert!(check_blindness([b"HANDOFF.md".as_slice()], &[]).is_err());
    }

    #[test]
    fn any_budget_gives_a_bounded_consistent_packet() {
        let mut rng = Lcg(7);
        for round in 0..120 {
            let files = random_files(&mut rng);
            let total: usize = files.iter().map(|f| f.text.len()).sum();
            let budget = match round % 4 {
                0 => rng.below(2_000) as usize,
                1 => rng.below(total as u64 + 1) as usize,
                2 => total,
                _ => rng.below(300_000) as usize,
            };
            let options = Options {
                budget_bytes: budget,
                exclude: Vec::new(),
            };
            let packet = build(&files, &options).expect("no exclusions");
            assert!(
                packet.diff.len() <= budget,
                "round {round}: {} > {budget}",
                packet.diff.len()
            );
            let c = &packet.coverage;
            assert_eq!(
                c.full.count + c.clipped.count + c.names_only.count + c.not_included.count,
                files.len(),
                "round {round}"
            );
            assert!(std::str::from_utf8(&packet.diff).is_ok());
            if total <= budget {
                let all: Vec<u8> = files.iter().flat_map(|f| f.text.clone()).collect();
                assert_eq!(
                    packet.diff, all,
                    "round {round}: under budget means git's text"
                );
                assert!(c.summary.is_none());
            } else {
                assert!(c.summary.is_some(), "round {round}");
            }
        }
    }

    #[test]
    fn listing_stays_within_its_cap() {
        let labels: Vec<String> = (0..1000).map(|i| format!("src/file_{i}.rs")).collect();
        let list = not_included_list(&labels, 262_144, 4096);
        assert!(list.len() <= 4096, "{}", list.len());
        let text = String::from_utf8(list).expect("UTF-8");
        assert!(
            text.starts_with("[git-pair] not included (over the 262144-byte budget): 1000 files\n")
        );
        assert!(text.contains("[git-pair]   src/file_0.rs\n"));
        assert!(text.trim_end().ends_with("more"), "{text}");
    }

    #[test]
    fn listing_fits_a_tiny_budget_or_is_empty() {
        let labels = vec!["a".to_owned(); 3];
        assert!(not_included_list(&labels, 10, 10).is_empty());
        let list = not_included_list(&labels, 200, 25);
        assert!(list.len() <= 200);
    }

    #[test]
    fn blindness_names_the_path_and_pattern() {
        let exclude = Options::default().exclude;
        let err =
            check_blindness([&b"src/a.rs"[..], b"docs/HANDOFF.md"], &exclude).expect_err("blind");
        assert!(err.to_string().contains("docs/HANDOFF.md"));
        assert!(matches!(err, Error::Blind { ref pattern, .. } if pattern == "HANDOFF.md"));
        assert!(check_blindness([&b".pair/working/x"[..]], &exclude).is_err());
        assert!(check_blindness([&b".pair/other"[..]], &exclude).is_ok());
    }
}
