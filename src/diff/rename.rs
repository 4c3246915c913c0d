//! Pairing deleted and added files into renames with git's rules (`diffcore-rename.c`, rename
//! detection without copies or breaks): exact matches first, then files whose basename is
//! unique on both sides at a raised threshold, then the best-scoring pairs of the whole matrix.
//! Pure: blob sizes and contents come through the [`Blobs`] trait.

use std::collections::HashMap;

use gix::ObjectId;

use super::similarity::{Fingerprint, MAX_SCORE, score, sizes_rule_out};

/// A deleted (source) or added (destination) file.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// Repository-relative path.
    pub path: &'a [u8],
    /// git mode, e.g. `0o100644`.
    pub mode: u32,
    /// Blob (or commit, for submodules) id.
    pub id: ObjectId,
}

/// Which side of the diff a candidate is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// A deleted file.
    Source,
    /// An added file.
    Destination,
}

/// Access to what similarity needs, loaded only when the cheaper checks did not decide.
pub trait Blobs {
    /// The error loading may fail with.
    type Error;
    /// The size in bytes of the candidate's blob.
    fn size(&mut self, candidate: &Candidate<'_>) -> Result<u64, Self::Error>;
    /// The candidate's content fingerprint (git fingerprints text and binary content alike,
    /// skipping CR before LF in text only).
    fn fingerprint(&mut self, candidate: &Candidate<'_>) -> Result<Fingerprint, Self::Error>;
}

/// Rename detection settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Minimum score for a rename, on git's 0..=60000 scale (`-M50%` is 30000, the default).
    pub minimum_score: u64,
    /// `diff.renameLimit`: above `limit²` source × destination pairs the matrix is skipped
    /// (exact and basename matches still run). 0 means unlimited.
    pub limit: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            minimum_score: MAX_SCORE / 2,
            limit: 1000,
        }
    }
}

/// One detected rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    /// Index into the sources.
    pub source: usize,
    /// Index into the destinations.
    pub destination: usize,
    /// Similarity on git's 0..=60000 scale.
    pub score: u64,
}

/// How many best candidates git keeps per destination in the matrix phase.
const CANDIDATES_PER_DESTINATION: usize = 4;
/// How many identical sources git looks at per destination before picking one.
const EXACT_CANDIDATE_LIMIT: usize = 100;

/// Finds renames among `sources` (deleted files, in diff order) and `destinations` (added
/// files, in diff order).
pub fn detect<B: Blobs>(
    sources: &[Candidate<'_>],
    destinations: &[Candidate<'_>],
    settings: &Settings,
    blobs: &mut B,
) -> Result<Vec<Pair>, B::Error> {
    let mut state = State {
        source_used: vec![false; sources.len()],
        destination_paired: vec![false; destinations.len()],
        pairs: Vec::new(),
        sizes: HashMap::new(),
        fingerprints: HashMap::new(),
    };
    if sources.is_empty() || destinations.is_empty() {
        return Ok(state.pairs);
    }
    state.exact(sources, destinations);
    if settings.minimum_score >= MAX_SCORE {
        return Ok(state.pairs);
    }
    let basename_score = settings.minimum_score + (MAX_SCORE - settings.minimum_score) / 2;
    state.basenames(sources, destinations, basename_score, blobs)?;

    let remaining_sources: Vec<usize> = (0..sources.len())
        .filter(|&s| !state.source_used[s])
        .collect();
    let open_destinations: Vec<usize> = (0..destinations.len())
        .filter(|&d| !state.destination_paired[d])
        .collect();
    if remaining_sources.is_empty() || open_destinations.is_empty() {
        return Ok(state.pairs);
    }
    let matrix_size = remaining_sources.len() as u64 * open_destinations.len() as u64;
    if settings.limit > 0 && matrix_size > settings.limit * settings.limit {
        return Ok(state.pairs);
    }
    state.matrix(
        sources,
        destinations,
        &remaining_sources,
        &open_destinations,
        settings.minimum_score,
        blobs,
    )?;
    Ok(state.pairs)
}

struct State {
    source_used: Vec<bool>,
    destination_paired: Vec<bool>,
    pairs: Vec<Pair>,
    sizes: HashMap<(Side, usize), u64>,
    fingerprints: HashMap<(Side, usize), Fingerprint>,
}

#[derive(Debug, Clone, Copy)]
struct Scored {
    /// `None` for an empty candidate slot.
    destination: Option<usize>,
    source: usize,
    score: u64,
    same_basename: bool,
}

/// git's `score_compare`: empty slots last, then higher score, then same basename first.
fn worse(a: &Scored, b: &Scored) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a.destination, b.destination) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(_), Some(_)) => b
            .score
            .cmp(&a.score)
            .then_with(|| b.same_basename.cmp(&a.same_basename)),
    }
}

impl State {
    fn record(&mut self, source: usize, destination: usize, score: u64) {
        self.source_used[source] = true;
        self.destination_paired[destination] = true;
        self.pairs.push(Pair {
            source,
            destination,
            score,
        });
    }

    fn exact(&mut self, sources: &[Candidate<'_>], destinations: &[Candidate<'_>]) {
        let mut by_id: HashMap<ObjectId, Vec<usize>> = HashMap::new();
        for (index, source) in sources.iter().enumerate() {
            by_id.entry(source.id).or_default().push(index);
        }
        for (d, destination) in destinations.iter().enumerate() {
            let Some(same_content) = by_id.get(&destination.id) else {
                continue;
            };
            let mut best: Option<usize> = None;
            let mut looked_at = 0;
            for &s in same_content {
                let source = &sources[s];
                let both_regular = is_regular(source.mode) && is_regular(destination.mode);
                if (!both_regular && source.mode != destination.mode) || self.source_used[s] {
                    continue;
                }
                if best.is_none() {
                    best = Some(s);
                }
                if basename(source.path) == basename(destination.path) {
                    best = Some(s);
                    break;
                }
                looked_at += 1;
                if looked_at == EXACT_CANDIDATE_LIMIT {
                    break;
                }
            }
            if let Some(s) = best {
                self.record(s, d, MAX_SCORE);
            }
        }
    }

    fn basenames<B: Blobs>(
        &mut self,
        sources: &[Candidate<'_>],
        destinations: &[Candidate<'_>],
        minimum_score: u64,
        blobs: &mut B,
    ) -> Result<(), B::Error> {
        let unique_sources = unique_basenames(sources, &self.source_used);
        let unique_destinations = unique_basenames(destinations, &self.destination_paired);
        for s in 0..sources.len() {
            if self.source_used[s] {
                continue;
            }
            let base = basename(sources[s].path);
            let (Some(&Some(s_unique)), Some(&Some(d))) =
                (unique_sources.get(base), unique_destinations.get(base))
            else {
                continue;
            };
            debug_assert_eq!(s_unique, s);
            if self.destination_paired[d] {
                continue;
            }
            let score = self.estimate(sources, destinations, s, d, minimum_score, blobs)?;
            if score >= minimum_score {
                self.record(s, d, score);
            }
        }
        Ok(())
    }

    fn matrix<B: Blobs>(
        &mut self,
        sources: &[Candidate<'_>],
        destinations: &[Candidate<'_>],
        remaining_sources: &[usize],
        open_destinations: &[usize],
        minimum_score: u64,
        blobs: &mut B,
    ) -> Result<(), B::Error> {
        let empty = Scored {
            destination: None,
            source: 0,
            score: 0,
            same_basename: false,
        };
        let mut all = Vec::with_capacity(open_destinations.len() * CANDIDATES_PER_DESTINATION);
        for &d in open_destinations {
            let mut best = [empty; CANDIDATES_PER_DESTINATION];
            for &s in remaining_sources {
                let candidate = Scored {
                    destination: Some(d),
                    source: s,
                    score: self.estimate(sources, destinations, s, d, minimum_score, blobs)?,
                    same_basename: basename(sources[s].path) == basename(destinations[d].path),
                };
                let mut worst = 0;
                for slot in 1..CANDIDATES_PER_DESTINATION {
                    if worse(&best[slot], &best[worst]).is_gt() {
                        worst = slot;
                    }
                }
                if worse(&best[worst], &candidate).is_gt() {
                    best[worst] = candidate;
                }
            }
            all.extend_from_slice(&best);
        }
        // Stable, as git's STABLE_QSORT: ties keep destination order.
        all.sort_by(worse);
        for entry in all {
            let Some(d) = entry.destination else { break };
            if entry.score < minimum_score {
                break;
            }
            if self.destination_paired[d] || self.source_used[entry.source] {
                continue;
            }
            self.record(entry.source, d, entry.score);
        }
        Ok(())
    }

    fn estimate<B: Blobs>(
        &mut self,
        sources: &[Candidate<'_>],
        destinations: &[Candidate<'_>],
        s: usize,
        d: usize,
        minimum_score: u64,
        blobs: &mut B,
    ) -> Result<u64, B::Error> {
        let (source, destination) = (&sources[s], &destinations[d]);
        if !is_regular(source.mode) || !is_regular(destination.mode) {
            return Ok(0);
        }
        let source_size = self.size(Side::Source, s, source, blobs)?;
        let destination_size = self.size(Side::Destination, d, destination, blobs)?;
        if sizes_rule_out(source_size, destination_size, minimum_score) {
            return Ok(0);
        }
        self.fingerprint(Side::Source, s, source, blobs)?;
        self.fingerprint(Side::Destination, d, destination, blobs)?;
        let (Some(old), Some(new)) = (
            self.fingerprints.get(&(Side::Source, s)),
            self.fingerprints.get(&(Side::Destination, d)),
        ) else {
            return Ok(0);
        };
        Ok(score(old, new, source_size, destination_size))
    }

    fn size<B: Blobs>(
        &mut self,
        side: Side,
        index: usize,
        candidate: &Candidate<'_>,
        blobs: &mut B,
    ) -> Result<u64, B::Error> {
        if let Some(&size) = self.sizes.get(&(side, index)) {
            return Ok(size);
        }
        let size = blobs.size(candidate)?;
        self.sizes.insert((side, index), size);
        Ok(size)
    }

    fn fingerprint<B: Blobs>(
        &mut self,
        side: Side,
        index: usize,
        candidate: &Candidate<'_>,
        blobs: &mut B,
    ) -> Result<(), B::Error> {
        if let std::collections::hash_map::Entry::Vacant(slot) =
            self.fingerprints.entry((side, index))
        {
            slot.insert(blobs.fingerprint(candidate)?);
        }
        Ok(())
    }
}

/// Basename → the only candidate (not yet taken) with it, or `None` when several share it.
fn unique_basenames<'a>(
    candidates: &[Candidate<'a>],
    taken: &[bool],
) -> HashMap<&'a [u8], Option<usize>> {
    let mut map: HashMap<&'a [u8], Option<usize>> = HashMap::new();
    for (index, candidate) in candidates.iter().enumerate() {
        if taken[index] {
            continue;
        }
        map.entry(basename(candidate.path))
            .and_modify(|slot| *slot = None)
            .or_insert(Some(index));
    }
    map
}

fn basename(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(slash) => &path[slash + 1..],
        None => path,
    }
}

fn is_regular(mode: u32) -> bool {
    mode & 0o170000 == 0o100000
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Memory<'a>(HashMap<ObjectId, &'a [u8]>);

    impl Blobs for Memory<'_> {
        type Error = std::convert::Infallible;
        fn size(&mut self, c: &Candidate<'_>) -> Result<u64, Self::Error> {
            Ok(self.0[&c.id].len() as u64)
        }
        fn fingerprint(&mut self, c: &Candidate<'_>) -> Result<Fingerprint, Self::Error> {
            Ok(Fingerprint::new(self.0[&c.id], true))
        }
    }

    fn id(content: &[u8]) -> ObjectId {
        gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, content)
            .expect("hashing memory")
    }

    fn run(
        sources: &[(&'static str, &'static str)],
        destinations: &[(&'static str, &'static str)],
    ) -> Vec<(usize, usize)> {
        let memory: HashMap<ObjectId, &[u8]> = sources
            .iter()
            .chain(destinations)
            .map(|(_, content)| (id(content.as_bytes()), content.as_bytes()))
            .collect();
        let candidates = |list: &[(&'static str, &'static str)]| -> Vec<Candidate<'static>> {
            list.iter()
                .map(|(path, content)| Candidate {
                    path: path.as_bytes(),
                    mode: 0o100644,
                    id: id(content.as_bytes()),
                })
                .collect()
        };
        let (s, d) = (candidates(sources), candidates(destinations));
        let mut pairs: Vec<_> = detect(&s, &d, &Settings::default(), &mut Memory(memory))
            .expect("infallible")
            .into_iter()
            .map(|p| (p.source, p.destination))
            .collect();
        pairs.sort();
        pairs
    }

    #[test]
    fn exact_rename_prefers_same_basename() {
        let pairs = run(
            &[("a/x", "same\n"), ("b/y", "same\n")],
            &[("c/y", "same\n")],
        );
        assert_eq!(pairs, vec![(1, 0)]);
    }

    #[test]
    fn similar_content_pairs_above_half() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let new = "1\n2\n3\n4\n5\n6\n7\nchanged\n";
        assert_eq!(run(&[("old.txt", old)], &[("new.txt", new)]), vec![(0, 0)]);
        let unrelated = "x\ny\nz\nw\nv\nu\nt\ns\n";
        assert_eq!(run(&[("old.txt", old)], &[("new.txt", unrelated)]), vec![]);
    }

    #[test]
    fn symlinks_only_rename_exactly() {
        let target = b"target" as &[u8];
        let oid = id(target);
        let other = id(b"targex");
        let s = [Candidate {
            path: b"l1",
            mode: 0o120000,
            id: oid,
        }];
        let d = [Candidate {
            path: b"l2",
            mode: 0o120000,
            id: other,
        }];
        let mut blobs = Memory(HashMap::from([(oid, target), (other, b"targex" as &[u8])]));
        assert!(
            detect(&s, &d, &Settings::default(), &mut blobs)
                .expect("infallible")
                .is_empty()
        );
    }
}
