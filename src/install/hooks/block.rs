//! The marker-delimited block inside a hook file: what it says (one guarded line that runs
//! `git-pair hook <name>`), where it is in a file, and splicing it in or out. Pure over bytes.

use std::path::Path;

use super::common::{Error, Hook, INSTALL_HINT, Options};

/// The first line of the managed block.
pub const BEGIN_MARKER: &str = "# >>> git-pair hook (managed by git pair hooks install) >>>";
/// The last line of the managed block.
pub const END_MARKER: &str = "# <<< git-pair hook <<<";

/// The marked block for `hook`: the begin marker, one line of shell, the end marker.
pub fn block(hook: Hook, options: Options) -> String {
    let name = hook.name();
    let gate = options.gate && hook.gates();
    let call = if gate {
        format!("git-pair hook {name} --gate \"$@\"")
    } else {
        format!("git-pair hook {name} \"$@\"")
    };
    let on_failure = if super::common::can_refuse(hook) {
        "exit $?"
    } else {
        ":"
    };
    let missing = if gate {
        format!(
            "echo \"git-pair is not on PATH and commits here are gated on review, so this commit is refused. Install it: {INSTALL_HINT}; or bypass deliberately: git commit --no-verify\" >&2; exit 1"
        )
    } else {
        format!(
            "echo \"git-pair is not on PATH, so the git pair {name} hook did nothing. Install it: {INSTALL_HINT}\" >&2"
        )
    };
    format!(
        "{BEGIN_MARKER}\nif command -v git-pair >/dev/null 2>&1; then {call} || {on_failure}; else {missing}; fi\n{END_MARKER}\n"
    )
}

/// Where the block is in `bytes`: from the start of the begin marker's line to the end of the
/// end marker's line (its newline included).
pub(super) fn find_block(bytes: &[u8], path: &Path) -> Result<Option<(usize, usize)>, Error> {
    let mut begin = None;
    let mut offset = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let text = trim_line_end(line);
        match begin {
            None if text == BEGIN_MARKER.as_bytes() => begin = Some(offset),
            Some(start) if text == END_MARKER.as_bytes() => {
                return Ok(Some((start, offset + line.len())));
            }
            _ => {}
        }
        offset += line.len();
    }
    match begin {
        Some(_) => Err(Error::BrokenBlock {
            path: path.display().to_string(),
        }),
        None => Ok(None),
    }
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

/// `bytes` with `span` replaced by `with`.
pub(super) fn splice(bytes: &[u8], (start, end): (usize, usize), with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() - (end - start) + with.len());
    out.extend_from_slice(&bytes[..start]);
    out.extend_from_slice(with);
    out.extend_from_slice(&bytes[end..]);
    out
}

/// `script` with `block` after its shebang line (or first, when it has none, as git then runs
/// it with `sh`).
pub(super) fn insert_after_shebang(script: &[u8], block: &[u8]) -> Vec<u8> {
    if !script.starts_with(b"#!") {
        return splice(script, (0, 0), block);
    }
    match script.iter().position(|&b| b == b'\n') {
        Some(nl) => splice(script, (nl + 1, nl + 1), block),
        None => {
            let mut out = script.to_vec();
            out.push(b'\n');
            out.extend_from_slice(block);
            out
        }
    }
}
