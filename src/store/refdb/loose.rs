//! Loose ref files of git's files backend: reading one, listing a namespace's, and removing
//! the directories deleting them leaves behind.

use gix::ObjectId;

/// The object id of a loose ref file holding one (not a symbolic ref, not a lock).
pub(super) fn read_direct_ref(path: &std::path::Path) -> Option<ObjectId> {
    let bytes = std::fs::read(path).ok()?;
    // `ref: …` (symbolic) or a file being written holds no id: no direct ref, as documented.
    ObjectId::from_hex(bytes.trim_ascii_end()).ok()
}

/// Every loose ref file below `dir` (whose ref name starts with `prefix`), lock files aside.
pub(super) fn collect_loose(
    dir: &std::path::Path,
    prefix: &str,
    out: &mut Vec<(String, std::path::PathBuf)>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let path = entry.path();
        let full = format!("{}/{name}", prefix.trim_end_matches('/'));
        match entry.file_type() {
            Ok(t) if t.is_dir() => collect_loose(&path, &full, out),
            Ok(t) if t.is_file() && !name.ends_with(".lock") => out.push((full, path)),
            _ => {}
        }
    }
}

/// Removes the empty directories below `dir` (what deleting loose refs leaves behind).
pub(super) fn remove_empty_dirs(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&entry.path());
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}
