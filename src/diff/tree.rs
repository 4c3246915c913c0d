//! Walks two trees side by side and lists what differs, in git's diff order (which is the
//! byte order of full paths). Subtrees with equal ids are skipped without being read.

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};

use super::Error;

/// One side of a raw change: mode (canonical, as git prints it) and object id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Side {
    /// `0o100644`, `0o100755`, `0o120000` or `0o160000`.
    pub mode: u32,
    /// The blob or, for a submodule, commit id.
    pub id: ObjectId,
}

/// A path whose entry differs between the two trees. At least one side is present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawChange {
    /// Repository-relative path.
    pub path: BString,
    /// The entry in the old tree.
    pub old: Option<Side>,
    /// The entry in the new tree.
    pub new: Option<Side>,
}

const TREE: u32 = 0o040000;

/// git's `canon_mode`: any regular file is 644 or 755, the rest is kept by type.
pub fn canonical_mode(mode: u32) -> u32 {
    match mode & 0o170000 {
        0o100000 if mode & 0o100 != 0 => 0o100755,
        0o100000 => 0o100644,
        0o120000 => 0o120000,
        0o160000 => 0o160000,
        _ => TREE,
    }
}

struct Entry {
    name: BString,
    mode: u32,
    id: ObjectId,
}

impl Entry {
    fn is_tree(&self) -> bool {
        self.mode == TREE
    }
}

/// Lists the differences between `old` (absent: the empty tree) and `new`.
pub fn changes(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: ObjectId,
) -> Result<Vec<RawChange>, Error> {
    let mut out = Vec::new();
    let mut prefix = BString::default();
    walk(repo, old, Some(new), &mut prefix, &mut out)?;
    Ok(out)
}

fn read_tree(repo: &gix::Repository, id: Option<ObjectId>) -> Result<Vec<Entry>, Error> {
    let Some(id) = id else { return Ok(Vec::new()) };
    let object = repo.find_object(id).map_err(|source| Error::ReadObject {
        what: "tree",
        id,
        source,
    })?;
    let tree = gix::objs::TreeRef::from_bytes(&object.data, repo.object_hash())
        .map_err(|_| Error::NotATree { id })?;
    Ok(tree
        .entries
        .iter()
        .map(|e| Entry {
            name: e.filename.to_owned(),
            mode: canonical_mode(u32::from(e.mode.value())),
            id: e.oid.to_owned(),
        })
        .collect())
}

/// git orders tree entries by name, comparing a directory as if its name ended with `/`.
fn order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    let common = a.name.len().min(b.name.len());
    a.name[..common].cmp(&b.name[..common]).then_with(|| {
        let next = |e: &Entry| e.name.get(common).copied().or(e.is_tree().then_some(b'/'));
        next(a).cmp(&next(b))
    })
}

fn walk(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    prefix: &mut BString,
    out: &mut Vec<RawChange>,
) -> Result<(), Error> {
    let old_entries = read_tree(repo, old)?;
    let new_entries = read_tree(repo, new)?;
    let (mut i, mut j) = (0, 0);
    while i < old_entries.len() || j < new_entries.len() {
        let ordering = match (old_entries.get(i), new_entries.get(j)) {
            (Some(a), Some(b)) => order(a, b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, _) => std::cmp::Ordering::Greater,
        };
        match ordering {
            std::cmp::Ordering::Less => {
                emit(repo, Some(&old_entries[i]), None, prefix, out)?;
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                emit(repo, None, Some(&new_entries[j]), prefix, out)?;
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                let (a, b) = (&old_entries[i], &new_entries[j]);
                if a.id != b.id || a.mode != b.mode {
                    emit(repo, Some(a), Some(b), prefix, out)?;
                }
                i += 1;
                j += 1;
            }
        }
    }
    Ok(())
}

/// Records one entry pair; both are trees, or neither, or only one side exists.
fn emit(
    repo: &gix::Repository,
    old: Option<&Entry>,
    new: Option<&Entry>,
    prefix: &mut BString,
    out: &mut Vec<RawChange>,
) -> Result<(), Error> {
    let name = old
        .or(new)
        .map(|e| e.name.as_bstr())
        .expect("one side exists");
    let base_len = prefix.len();
    prefix.extend_from_slice(name);
    let is_tree = old.or(new).is_some_and(Entry::is_tree);
    if is_tree {
        prefix.push(b'/');
        walk(repo, old.map(|e| e.id), new.map(|e| e.id), prefix, out)?;
    } else {
        let side = |e: &Entry| Side {
            mode: e.mode,
            id: e.id,
        };
        out.push(RawChange {
            path: prefix[..].into(),
            old: old.map(side),
            new: new.map(side),
        });
    }
    prefix.truncate(base_len);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_modes() {
        let cases = [
            (0o100644, 0o100644),
            (0o100664, 0o100644),
            (0o100755, 0o100755),
            (0o100775, 0o100755),
            (0o120000, 0o120000),
            (0o160000, 0o160000),
            (0o040000, 0o040000),
        ];
        for (input, expected) in cases {
            assert_eq!(canonical_mode(input), expected, "{input:o}");
        }
    }
}
