//! Writes a set of new objects as one pack (`objects/pack/pack-<sha>.pack` + `.idx`, version 2),
//! the way `git fast-import` or a fetch adds objects: one file instead of one file per object,
//! which on most file systems is many times faster than loose objects. Objects are stored whole,
//! or (given a base earlier in the same pack) as git's offset deltas against it, computed by a
//! plain block-matching encoder; `git gc` repacks them like any other pack. Readers only see a
//! pack once its index exists, so the index is moved into place last.

use std::path::Path;

use crate::util::fs::{AtomicWrite, Mode};
use gix::ObjectId;

/// A pack could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write pack in {dir}: {source}")]
pub struct Error {
    dir: String,
    #[source]
    source: std::io::Error,
}

/// Objects as `(id, kind, content)`; ids must be the objects' real ids.
pub type Objects<'a> = [(ObjectId, gix::objs::Kind, &'a [u8])];

/// Writes `objects` as a pack into `pack_dir` (`.git/objects/pack`); does nothing for none.
pub fn write(pack_dir: &Path, objects: &Objects<'_>) -> Result<(), Error> {
    write_with_bases(pack_dir, objects, &[]).map(|_| ())
}

/// Writes `objects` as a pack into `pack_dir`, object `i` as a delta against object
/// `bases[i]` (which must come before it) where that is smaller than storing it whole; objects
/// past the end of `bases`, or with `None`, are stored whole. Returns the pack's name
/// (`pack-<checksum>`), `None` for no objects.
pub fn write_with_bases(
    pack_dir: &Path,
    objects: &Objects<'_>,
    bases: &[Option<usize>],
) -> Result<Option<String>, Error> {
    if objects.is_empty() {
        return Ok(None);
    }
    let fail = |source| Error {
        dir: pack_dir.display().to_string(),
        source,
    };
    let (pack, entries, checksum) = encode_pack(objects, bases).map_err(fail)?;
    let index = encode_index(entries, &checksum);
    let name = format!("pack-{}", checksum.to_hex());
    let final_pack = pack_dir.join(format!("{name}.pack"));
    let final_index = pack_dir.join(format!("{name}.idx"));
    if !final_index.exists() {
        persist(pack_dir, &pack, &final_pack).map_err(fail)?;
        persist(pack_dir, &index, &final_index).map_err(fail)?;
    }
    Ok(Some(name))
}

/// Packs larger than this together are not joined (an index's offsets stay plain).
const MAX_JOINED: u64 = 1 << 30;

/// Writes one pack holding every object of the packs named `names` (`pack-<checksum>` in
/// `pack_dir`), each entry copied byte for byte: offset deltas point back a distance within
/// their own pack's run of entries, which stays the same, so no object is inflated or
/// deltified again. A pack that cannot be read, that holds an object an earlier one holds,
/// or that would take the whole past [`MAX_JOINED`] is left out. Returns the new pack's name
/// and the names it took (the caller removes those); `None` when fewer than two could be
/// taken. The old packs are not touched.
pub fn join(pack_dir: &Path, names: &[String]) -> Result<Option<(String, Vec<String>)>, Error> {
    let fail = |source| Error {
        dir: pack_dir.display().to_string(),
        source,
    };
    let mut taken: Vec<(String, Vec<u8>, Vec<Entry>)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut total = 0u64;
    for name in names {
        let Some((bytes, entries)) = read_pack(pack_dir, name) else {
            continue;
        };
        let size = bytes.len() as u64;
        if total + size > MAX_JOINED || entries.iter().any(|e| seen.contains(&e.id)) {
            continue;
        }
        total += size;
        seen.extend(entries.iter().map(|e| e.id));
        taken.push((name.clone(), bytes, entries));
    }
    if taken.len() < 2 {
        return Ok(None);
    }
    let count: usize = taken.iter().map(|(_, _, e)| e.len()).sum();
    let mut pack = Vec::with_capacity(total as usize);
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&(count as u32).to_be_bytes());
    let mut entries = Vec::with_capacity(count);
    for (_, bytes, old) in &taken {
        let shift = pack.len() as u64 - 12;
        pack.extend_from_slice(&bytes[12..bytes.len() - 20]);
        entries.extend(old.iter().map(|e| Entry {
            id: e.id,
            offset: e.offset + shift,
            crc32: e.crc32,
        }));
    }
    let checksum = ObjectId::from(sha1(&pack));
    pack.extend_from_slice(checksum.as_bytes());
    let index = encode_index(entries, &checksum);
    let name = format!("pack-{}", checksum.to_hex());
    let final_index = pack_dir.join(format!("{name}.idx"));
    if !final_index.exists() {
        persist(pack_dir, &pack, &pack_dir.join(format!("{name}.pack"))).map_err(fail)?;
        persist(pack_dir, &index, &final_index).map_err(fail)?;
    }
    Ok(Some((name, taken.into_iter().map(|(n, _, _)| n).collect())))
}

/// Pack `name`'s bytes and its index's entries, when both are whole and agree (a version 2
/// pack whose object count is its index's, every entry with its CRC).
fn read_pack(pack_dir: &Path, name: &str) -> Option<(Vec<u8>, Vec<Entry>)> {
    let index = gix::odb::pack::index::File::at(
        pack_dir.join(format!("{name}.idx")),
        gix::hash::Kind::Sha1,
    )
    .ok()?;
    let bytes = std::fs::read(pack_dir.join(format!("{name}.pack"))).ok()?;
    let header_ok = bytes.len() >= 32
        && &bytes[..4] == b"PACK"
        && bytes[4..8] == 2u32.to_be_bytes()
        && bytes[8..12] == index.num_objects().to_be_bytes()
        && bytes[bytes.len() - 20..] == *index.pack_checksum().as_bytes();
    if !header_ok {
        return None;
    }
    let entries = index
        .iter()
        .map(|e| {
            Some(Entry {
                id: e.oid,
                offset: e.pack_offset,
                crc32: e.crc32?,
            })
        })
        .collect::<Option<Vec<Entry>>>()?;
    let inside = entries
        .iter()
        .all(|e| e.offset >= 12 && e.offset < bytes.len() as u64 - 20);
    inside.then_some((bytes, entries))
}

fn persist(dir: &Path, bytes: &[u8], to: &Path) -> std::io::Result<()> {
    // Durable before it becomes visible, as git does for the packs it writes: a ref may point
    // into this pack right after. Named as git names its temporary packs.
    AtomicWrite::new(Mode::Umasked(0o444))
        .durable()
        .named("tmp_pack_", "")
        .via(dir)
        .write(to, bytes)
        .map_err(|(_, _, source)| source)
}

/// One object's place in the pack, for the index.
struct Entry {
    id: ObjectId,
    offset: u64,
    crc32: u32,
}

/// The pack's bytes, where each object went, and the pack's checksum (its trailing 20 bytes).
fn encode_pack(
    objects: &Objects<'_>,
    bases: &[Option<usize>],
) -> std::io::Result<(Vec<u8>, Vec<Entry>, ObjectId)> {
    let mut pack = Vec::with_capacity(
        objects
            .iter()
            .map(|(_, _, d)| d.len() / 2 + 32)
            .sum::<usize>()
            + 32,
    );
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    let mut entries: Vec<Entry> = Vec::with_capacity(objects.len());
    // One compressor for all objects: setting one up allocates its whole window.
    let mut compress =
        gix::zlib::stream::deflate::Compress::new(gix::zlib::Compression::BEST_SPEED);
    for (i, (id, kind, data)) in objects.iter().enumerate() {
        let offset = pack.len();
        let delta: Option<(u64, Vec<u8>)> = bases
            .get(i)
            .copied()
            .flatten()
            .filter(|&base| base < i)
            .and_then(|base| {
                let delta = delta::encode(objects[base].2, data)?;
                Some((entries[base].offset, delta))
            });
        let (type_bits, data): (u8, &[u8]) = match (&delta, kind) {
            // OFS_DELTA: the base is this many bytes before.
            (Some((_, delta)), _) => (6, delta.as_slice()),
            (None, gix::objs::Kind::Commit) => (1, data),
            (None, gix::objs::Kind::Tree) => (2, data),
            (None, gix::objs::Kind::Blob) => (3, data),
            (None, gix::objs::Kind::Tag) => (4, data),
        };
        // Type and size: 3 bits of type and 4 of size, then 7 bits of size per byte.
        let mut size = data.len() as u64;
        let mut byte = (type_bits << 4) | (size & 0x0f) as u8;
        size >>= 4;
        while size > 0 {
            pack.push(byte | 0x80);
            byte = (size & 0x7f) as u8;
            size >>= 7;
        }
        pack.push(byte);
        if let Some((base_offset, _)) = &delta {
            pack.extend_from_slice(&delta::offset_bytes(offset as u64 - base_offset));
        }
        deflate_into(&mut compress, data, &mut pack)?;
        entries.push(Entry {
            id: *id,
            offset: offset as u64,
            crc32: crc32fast::hash(&pack[offset..]),
        });
    }
    let checksum = ObjectId::from(sha1(&pack));
    pack.extend_from_slice(checksum.as_bytes());
    Ok((pack, entries, checksum))
}

/// Appends the zlib stream of `data` to `out`.
fn deflate_into(
    compress: &mut gix::zlib::stream::deflate::Compress,
    data: &[u8],
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    use gix::zlib::{Status, stream::deflate::FlushCompress};
    compress.reset();
    let (mut read, mut written) = (0usize, out.len());
    loop {
        // Room for the rest at worst-case expansion, so one call usually finishes.
        out.resize(
            written + (data.len() - read) + (data.len() - read) / 8 + 64,
            0,
        );
        let (in_before, out_before) = (compress.total_in(), compress.total_out());
        let status = compress
            .compress(&data[read..], &mut out[written..], FlushCompress::Finish)
            .map_err(std::io::Error::other)?;
        read += (compress.total_in() - in_before) as usize;
        written += (compress.total_out() - out_before) as usize;
        if status == Status::StreamEnd {
            out.truncate(written);
            return Ok(());
        }
    }
}

/// git's delta format (`patch-delta.c`): the base's and the result's sizes, then copy (from the
/// base) and insert (literal) instructions.
mod delta {
    use std::collections::HashMap;

    /// Matches are found on blocks of this many bytes.
    const BLOCK: usize = 16;
    /// The longest copy one instruction holds (three size bytes).
    const MAX_COPY: usize = 0xff_ffff;

    /// The delta turning `base` into `target`, when it is clearly smaller than `target`.
    pub(super) fn encode(base: &[u8], target: &[u8]) -> Option<Vec<u8>> {
        if base.len() < BLOCK || target.len() < BLOCK || base.len() > u32::MAX as usize {
            return None;
        }
        let mut index: HashMap<[u8; BLOCK], usize> = HashMap::with_capacity(base.len());
        for at in (0..=base.len() - BLOCK).rev() {
            let key: [u8; BLOCK] = base[at..at + BLOCK].try_into().expect("a block");
            index.insert(key, at);
        }
        let mut out = Vec::with_capacity(target.len() / 4 + 16);
        varint(&mut out, base.len());
        varint(&mut out, target.len());
        let (mut at, mut literal_from) = (0, 0);
        while at + BLOCK <= target.len() {
            let key: [u8; BLOCK] = target[at..at + BLOCK].try_into().expect("a block");
            let Some(&found) = index.get(&key) else {
                at += 1;
                continue;
            };
            let (mut from, mut start) = (found, at);
            // Grow the match backwards over the pending literal, then forwards.
            while start > literal_from && from > 0 && base[from - 1] == target[start - 1] {
                from -= 1;
                start -= 1;
            }
            let mut len = at - start + BLOCK;
            while from + len < base.len()
                && start + len < target.len()
                && base[from + len] == target[start + len]
            {
                len += 1;
            }
            insert(&mut out, &target[literal_from..start]);
            copy(&mut out, from, len);
            at = start + len;
            literal_from = at;
            if out.len() + 8 >= target.len() {
                return None;
            }
        }
        insert(&mut out, &target[literal_from..]);
        (out.len() + 8 < target.len() - target.len() / 8).then_some(out)
    }

    fn varint(out: &mut Vec<u8>, mut n: usize) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    fn insert(out: &mut Vec<u8>, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let n = bytes.len().min(127);
            out.push(n as u8);
            out.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
    }

    fn copy(out: &mut Vec<u8>, mut from: usize, mut len: usize) {
        while len > 0 {
            let n = len.min(MAX_COPY);
            let mut op = 0x80u8;
            let mut args = Vec::with_capacity(7);
            for i in 0..4 {
                let byte = (from >> (8 * i)) as u8;
                if byte != 0 {
                    op |= 1 << i;
                    args.push(byte);
                }
            }
            for i in 0..3 {
                let byte = (n >> (8 * i)) as u8;
                if byte != 0 {
                    op |= 1 << (4 + i);
                    args.push(byte);
                }
            }
            out.push(op);
            out.extend_from_slice(&args);
            from += n;
            len -= n;
        }
    }

    /// An OFS_DELTA's distance back to its base, as git encodes it (big-endian groups of 7
    /// bits, each continued group one less).
    pub(super) fn offset_bytes(mut distance: u64) -> Vec<u8> {
        let mut bytes = vec![(distance & 0x7f) as u8];
        distance >>= 7;
        while distance > 0 {
            distance -= 1;
            bytes.push(0x80 | (distance & 0x7f) as u8);
            distance >>= 7;
        }
        bytes.reverse();
        bytes
    }

    /// Applies `delta` to `base` (tests only: git and gix are the readers).
    #[cfg(test)]
    pub(super) fn apply(base: &[u8], delta: &[u8]) -> Vec<u8> {
        let mut at = 0;
        let mut size = || {
            let (mut n, mut shift) = (0usize, 0);
            loop {
                let byte = delta[at];
                at += 1;
                n |= ((byte & 0x7f) as usize) << shift;
                shift += 7;
                if byte & 0x80 == 0 {
                    return n;
                }
            }
        };
        let (_, len) = (size(), size());
        let mut out = Vec::with_capacity(len);
        while at < delta.len() {
            let op = delta[at];
            at += 1;
            if op & 0x80 == 0 {
                out.extend_from_slice(&delta[at..at + op as usize]);
                at += op as usize;
                continue;
            }
            let (mut from, mut n) = (0usize, 0usize);
            for i in 0..4 {
                if op & (1 << i) != 0 {
                    from |= (delta[at] as usize) << (8 * i);
                    at += 1;
                }
            }
            for i in 0..3 {
                if op & (1 << (4 + i)) != 0 {
                    n |= (delta[at] as usize) << (8 * i);
                    at += 1;
                }
            }
            if n == 0 {
                n = 0x10000;
            }
            out.extend_from_slice(&base[from..from + n]);
        }
        out
    }
}

fn encode_index(mut entries: Vec<Entry>, pack_checksum: &ObjectId) -> Vec<u8> {
    entries.sort_by_key(|e| e.id);
    let mut index = Vec::with_capacity(8 + 1024 + entries.len() * 28 + 40);
    index.extend_from_slice(b"\xfftOc");
    index.extend_from_slice(&2u32.to_be_bytes());
    let mut fanout = [0u32; 256];
    for entry in &entries {
        fanout[entry.id.as_bytes()[0] as usize] += 1;
    }
    let mut running = 0u32;
    for count in fanout {
        running += count;
        index.extend_from_slice(&running.to_be_bytes());
    }
    for entry in &entries {
        index.extend_from_slice(entry.id.as_bytes());
    }
    for entry in &entries {
        index.extend_from_slice(&entry.crc32.to_be_bytes());
    }
    let mut large = Vec::new();
    for entry in &entries {
        if entry.offset < 0x8000_0000 {
            index.extend_from_slice(&(entry.offset as u32).to_be_bytes());
        } else {
            index.extend_from_slice(&(0x8000_0000 | large.len() as u32).to_be_bytes());
            large.push(entry.offset);
        }
    }
    for offset in large {
        index.extend_from_slice(&offset.to_be_bytes());
    }
    index.extend_from_slice(pack_checksum.as_bytes());
    let checksum = sha1(&index);
    index.extend_from_slice(&checksum);
    index
}

fn sha1(bytes: &[u8]) -> [u8; 20] {
    let mut hasher = sha1_smol::Sha1::new();
    hasher.update(bytes);
    hasher.digest().bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn gix_reads_back_every_object_and_checksum() {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = gix::init_bare(dir.path()).expect("init");
        let big: Vec<u8> = (0..100_000u32).flat_map(|n| n.to_le_bytes()).collect();
        let contents: [(gix::objs::Kind, &[u8]); 4] = [
            (gix::objs::Kind::Blob, b""),
            (gix::objs::Kind::Blob, b"hello\n"),
            (gix::objs::Kind::Blob, &big),
            (gix::objs::Kind::Tree, b""),
        ];
        let objects: Vec<(ObjectId, gix::objs::Kind, &[u8])> = contents
            .iter()
            .map(|&(kind, data)| {
                let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, data).expect("hash");
                (id, kind, data)
            })
            .collect();
        let pack_dir = repo.objects.store_ref().path().join("pack");
        write(&pack_dir, &objects).expect("write pack");

        let idx_path = std::fs::read_dir(&pack_dir)
            .expect("pack dir")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "idx"))
            .expect("an index");
        let index = gix::odb::pack::index::File::at(&idx_path, gix::hash::Kind::Sha1)
            .expect("gix reads the index");
        let pack =
            gix::odb::pack::data::File::at(idx_path.with_extension("pack"), gix::hash::Kind::Sha1)
                .expect("gix reads the pack");
        // The file name is the pack checksum, which the index repeats.
        let stem = idx_path.file_stem().and_then(|s| s.to_str()).expect("name");
        assert_eq!(stem, format!("pack-{}", pack.checksum().to_hex()));
        assert_eq!(index.pack_checksum(), pack.checksum());
        assert_eq!(index.num_objects(), 4);
        // Each entry's CRC-32 covers its bytes up to the next entry (or the trailer).
        let mut ends = index.sorted_offsets();
        ends.push(pack.data_len() as u64 - 20);
        for entry in index.iter() {
            let i = ends
                .iter()
                .position(|&o| o == entry.pack_offset)
                .expect("offset");
            let size = (ends[i + 1] - entry.pack_offset) as usize;
            assert_eq!(entry.crc32, Some(pack.entry_crc32(entry.pack_offset, size)));
        }

        let repo = gix::open(dir.path()).expect("reopen");
        for (id, kind, data) in &objects {
            let object = repo.find_object(*id).expect("found in the pack");
            assert_eq!((object.kind, object.data.as_slice()), (*kind, *data));
        }
    }

    #[test]
    fn deltas_rebuild_their_targets() {
        let base: Vec<u8> = (0..5_000u32)
            .flat_map(|n| n.to_string().into_bytes())
            .collect();
        let mut shifted = b"a new start ".to_vec();
        shifted.extend_from_slice(&base[100..3_000]);
        shifted.extend_from_slice(b" something inserted ");
        shifted.extend_from_slice(&base[3_000..]);
        let long_copy = [base.clone(), base.clone(), base.clone(), base.clone()].concat();
        for target in [shifted, base[..base.len() / 2].to_vec(), long_copy] {
            let delta = delta::encode(&base, &target).expect("a delta pays");
            assert!(
                delta.len() < target.len() / 4,
                "{} vs {}",
                delta.len(),
                target.len()
            );
            assert_eq!(delta::apply(&base, &delta), target);
        }
        // Nothing in common: stored whole.
        let other: Vec<u8> = (0..4_000u32)
            .map(|n| (n.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert!(delta::encode(&base, &other).is_none());
        assert_eq!(delta::offset_bytes(127), [127]);
        assert_eq!(delta::offset_bytes(128), [0x80, 0]);
    }

    /// A pack of objects stored as deltas of each other: git verifies it and reads every
    /// object back byte for byte.
    #[test]
    fn git_reads_a_pack_of_deltas() {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = gix::init_bare(dir.path()).expect("init");
        let versions: Vec<Vec<u8>> = (0..20u32)
            .rev()
            .map(|n| {
                (0..200 + n * 10)
                    .flat_map(|i| format!("line {i} of version {}\n", i.min(n)).into_bytes())
                    .collect()
            })
            .collect();
        let objects: Vec<(ObjectId, gix::objs::Kind, &[u8])> = versions
            .iter()
            .map(|data| {
                let kind = gix::objs::Kind::Blob;
                let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, data).expect("hash");
                (id, kind, data.as_slice())
            })
            .collect();
        let bases: Vec<Option<usize>> = (0..objects.len()).map(|i| i.checked_sub(1)).collect();
        let pack_dir = repo.objects.store_ref().path().join("pack");
        write_with_bases(&pack_dir, &objects, &bases).expect("write pack");
        let idx = std::fs::read_dir(&pack_dir)
            .expect("pack dir")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "idx"))
            .expect("an index");
        let verified = git(
            dir.path(),
            &["verify-pack", "-v", idx.to_str().expect("utf-8")],
            b"",
        );
        let verified = String::from_utf8(verified).expect("utf-8");
        assert!(verified.contains("chain length = 1"), "{verified}");
        let pack_size = std::fs::metadata(idx.with_extension("pack"))
            .expect("pack")
            .len();
        let whole: usize = versions.iter().map(Vec::len).sum();
        assert!((pack_size as usize) < whole / 4, "{pack_size} of {whole}");
        let ids: String = objects.iter().map(|(id, _, _)| format!("{id}\n")).collect();
        let batch = git(dir.path(), &["cat-file", "--batch"], ids.as_bytes());
        let mut want = Vec::new();
        for (id, _, data) in &objects {
            want.extend_from_slice(format!("{id} blob {}\n", data.len()).as_bytes());
            want.extend_from_slice(data);
            want.push(b'\n');
        }
        assert!(batch == want, "cat-file --batch differs");
    }

    /// Packs of deltas joined into one: git verifies it, the deltas are still deltas, every
    /// object reads back, and a pack holding an object an earlier one holds is left out.
    #[test]
    fn joined_packs_keep_their_deltas_and_leave_out_a_pack_that_repeats_an_object() {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = gix::init_bare(dir.path()).expect("init");
        let pack_dir = repo.objects.store_ref().path().join("pack");
        let version = |pack: u32, n: u32| -> Vec<u8> {
            (0..300)
                .flat_map(|i| format!("pack {pack} line {i} v{}\n", i.min(n)).into_bytes())
                .collect()
        };
        let mut names = Vec::new();
        let mut all: Vec<(ObjectId, Vec<u8>)> = Vec::new();
        for pack in 0..3u32 {
            let versions: Vec<Vec<u8>> = (0..6).map(|n| version(pack, n)).collect();
            let objects: Vec<(ObjectId, gix::objs::Kind, &[u8])> = versions
                .iter()
                .map(|data| {
                    let id =
                        gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, data)
                            .expect("hash");
                    (id, gix::objs::Kind::Blob, data.as_slice())
                })
                .collect();
            let bases: Vec<Option<usize>> = (0..objects.len()).map(|i| i.checked_sub(1)).collect();
            let name = write_with_bases(&pack_dir, &objects, &bases)
                .expect("write pack")
                .expect("a pack");
            names.push(name);
            all.extend(objects.iter().map(|(id, _, d)| (*id, d.to_vec())));
        }
        // A fourth pack repeating an object of the first.
        let repeat = [(all[0].0, gix::objs::Kind::Blob, all[0].1.as_slice())];
        names.push(
            write_with_bases(&pack_dir, &repeat, &[])
                .expect("write")
                .expect("a pack"),
        );

        let (joined, taken) = join(&pack_dir, &names).expect("join").expect("joined");
        assert_eq!(taken, names[..3], "the repeating pack is left out");
        let idx = pack_dir.join(format!("{joined}.idx"));
        let verified = git(
            dir.path(),
            &["verify-pack", "-v", idx.to_str().expect("utf-8")],
            b"",
        );
        let verified = String::from_utf8(verified).expect("utf-8");
        assert!(
            verified.contains("chain length = 5: 3 objects"),
            "{verified}"
        );
        for name in &names[..3] {
            for ext in ["idx", "pack"] {
                std::fs::remove_file(pack_dir.join(format!("{name}.{ext}"))).expect("rm");
            }
        }
        let ids: String = all.iter().map(|(id, _)| format!("{id}\n")).collect();
        let batch = git(dir.path(), &["cat-file", "--batch"], ids.as_bytes());
        let mut want = Vec::new();
        for (id, data) in &all {
            want.extend_from_slice(format!("{id} blob {}\n", data.len()).as_bytes());
            want.extend_from_slice(data);
            want.push(b'\n');
        }
        assert!(batch == want, "cat-file --batch differs");
        // Joining again what is one pack already does nothing.
        assert_eq!(join(&pack_dir, &[joined]).expect("join"), None);
    }

    /// Runs git on the repository at `git_dir` (isolated from any configuration), feeding
    /// `stdin`; returns stdout.
    fn git(git_dir: &std::path::Path, args: &[&str], stdin: &[u8]) -> Vec<u8> {
        use std::process::{Command, Stdio};
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(git_dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run git");
        let mut pipe = child.stdin.take().expect("stdin");
        let input = stdin.to_vec();
        let writer = std::thread::spawn(move || pipe.write_all(&input));
        let out = child.wait_with_output().expect("git ends");
        writer.join().expect("writer").expect("write stdin");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        out.stdout
    }

    /// Random content, from nothing to past one deflate block, compressible (repeated
    /// bytes) or not (a hashed sequence).
    fn content() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..300),
            (any::<u8>(), 0usize..80_000).prop_map(|(b, n)| vec![b; n]),
            (any::<u64>(), 0usize..80_000).prop_map(|(seed, n)| {
                (0..n as u64)
                    .map(|i| (seed ^ i).wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes()[7])
                    .collect()
            }),
        ]
    }

    proptest::proptest! {
        // Each case writes a pack and runs git twice: a few dozen keep the run to seconds.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

        /// A random set of objects written as a pack: `git verify-pack -v` accepts it and
        /// lists exactly those objects with their kinds and sizes, and `git cat-file --batch`
        /// reads each one back byte for byte.
        #[test]
        fn git_verifies_the_pack_and_reads_back_every_object(
            contents in proptest::collection::vec(
                (proptest::sample::select(vec![gix::objs::Kind::Blob, gix::objs::Kind::Tag]), content()),
                1..12,
            )
        ) {
            let dir = tempfile::tempdir().expect("temp dir");
            let repo = gix::init_bare(dir.path()).expect("init");
            // Objects by id: a pack holds each once (equal contents are one object).
            let objects: std::collections::BTreeMap<ObjectId, (gix::objs::Kind, &[u8])> = contents
                .iter()
                .map(|(kind, data)| {
                    let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, *kind, data)
                        .expect("hash");
                    (id, (*kind, data.as_slice()))
                })
                .collect();
            let list: Vec<(ObjectId, gix::objs::Kind, &[u8])> =
                objects.iter().map(|(id, (kind, data))| (*id, *kind, *data)).collect();
            let pack_dir = repo.objects.store_ref().path().join("pack");
            write(&pack_dir, &list).expect("write pack");
            let idx = std::fs::read_dir(&pack_dir)
                .expect("pack dir")
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|e| e == "idx"))
                .expect("an index");

            let verified = git(dir.path(), &["verify-pack", "-v", idx.to_str().expect("utf-8")], b"");
            let verified = String::from_utf8(verified).expect("utf-8");
            let mut listed: Vec<(String, String, u64)> = verified
                .lines()
                .filter_map(|line| {
                    let mut words = line.split_whitespace();
                    let (id, kind, size) = (words.next()?, words.next()?, words.next()?);
                    if id.len() != 40 {
                        return None;
                    }
                    Some((id.to_owned(), kind.to_owned(), size.parse().ok()?))
                })
                .collect();
            listed.sort();
            let expected: Vec<(String, String, u64)> = objects
                .iter()
                .map(|(id, (kind, data))| (id.to_hex().to_string(), kind.to_string(), data.len() as u64))
                .collect();
            proptest::prop_assert_eq!(&listed, &expected);
            proptest::prop_assert!(verified.contains(": ok"), "{}", verified);

            let ids: String = objects.keys().map(|id| format!("{id}\n")).collect();
            let batch = git(dir.path(), &["cat-file", "--batch"], ids.as_bytes());
            let mut want = Vec::new();
            for (id, (kind, data)) in &objects {
                want.extend_from_slice(format!("{id} {kind} {}\n", data.len()).as_bytes());
                want.extend_from_slice(data);
                want.push(b'\n');
            }
            proptest::prop_assert!(batch == want, "cat-file --batch differs");
        }
    }
}
