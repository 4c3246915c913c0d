//! Abbreviated object ids as `index a..b` lines print them (git's `find_unique_abbrev`): at
//! least the configured number of hex digits, more while another object in the repository
//! shares them. Pack indexes are opened once and loose-object directories are listed once
//! each, as git caches them, instead of once per id.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::odb::pack::index::File as PackIndex;

/// Computes unique abbreviations in one repository.
pub struct Abbreviator {
    hex_len: usize,
    indexes: Vec<PackIndex>,
    loose_roots: Vec<PathBuf>,
    loose: HashMap<u8, Vec<ObjectId>>,
}

impl Abbreviator {
    /// Prepares abbreviations of at least `hex_len` digits for the objects in `objects_dir`
    /// and its alternates.
    pub fn new(objects_dir: &Path, hex_len: usize, kind: gix::hash::Kind) -> Abbreviator {
        let mut roots = vec![objects_dir.to_owned()];
        if let Ok(alternates) = std::fs::read_to_string(objects_dir.join("info/alternates")) {
            for line in alternates.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let path = Path::new(line);
                roots.push(if path.is_absolute() {
                    path.to_owned()
                } else {
                    objects_dir.join(path)
                });
            }
        }
        let mut indexes = Vec::new();
        for root in &roots {
            let Ok(entries) = std::fs::read_dir(root.join("pack")) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "idx")
                    && let Ok(index) = PackIndex::at(&path, kind)
                {
                    indexes.push(index);
                }
            }
        }
        Abbreviator {
            hex_len: hex_len.min(kind.len_in_hex()),
            indexes,
            loose_roots: roots,
            loose: HashMap::new(),
        }
    }

    /// The number of digits used for an id no other object is compared with (the null id).
    pub fn min_len(&self) -> usize {
        self.hex_len
    }

    /// `id` abbreviated: `min_len()` digits, more while they are ambiguous.
    pub fn abbreviate(&mut self, id: &ObjectId) -> String {
        let hex = id.to_hex().to_string();
        if id.is_null() {
            return hex[..self.hex_len].to_owned();
        }
        let mut len = self.hex_len;
        while len < hex.len() && self.is_ambiguous(id, len) {
            len += 1;
        }
        hex[..len].to_owned()
    }

    fn is_ambiguous(&mut self, id: &ObjectId, len: usize) -> bool {
        let Ok(prefix) = gix::hash::Prefix::new(id, len) else {
            return false;
        };
        let packed = self
            .indexes
            .iter()
            .any(|index| match index.lookup_prefix(prefix, None) {
                Some(Ok(entry)) => index.oid_at_index(entry) != id.as_ref(),
                Some(Err(())) => true,
                None => false,
            });
        packed
            || self
                .loose_ids(id.as_bytes()[0])
                .iter()
                .any(|other| other != id && prefix.cmp_oid(other).is_eq())
    }

    fn loose_ids(&mut self, first_byte: u8) -> &[ObjectId] {
        let roots = &self.loose_roots;
        self.loose.entry(first_byte).or_insert_with(|| {
            let mut ids = Vec::new();
            let fan_out = format!("{first_byte:02x}");
            for root in roots {
                let Ok(entries) = std::fs::read_dir(root.join(&fan_out)) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    let hex = format!("{fan_out}{}", name.to_string_lossy());
                    // Loose object directories also hold temporary files (`tmp_obj_*`):
                    // they are no object and cannot clash with an abbreviation.
                    if let Ok(id) = ObjectId::from_hex(hex.as_bytes()) {
                        ids.push(id);
                    }
                }
            }
            ids
        })
    }
}
