//! One file's section of `git diff` output: the `diff --git` header block (new/deleted file
//! mode, old/new mode, similarity and rename lines, `index a..b mode`), then either
//! `Binary files … differ` or the `---`/`+++` lines and hunks. Pure: everything it prints is
//! passed in (abbreviated ids, contents, binary flags).

use super::quote::push_quoted_with_prefix;
use super::unified::{HunkOptions, HunkSpan, write_hunks};

/// One side of a file pair, with what the header and the hunks need.
#[derive(Debug, Clone, Copy)]
pub struct SideView<'a> {
    /// Repository-relative path.
    pub path: &'a [u8],
    /// git mode, e.g. `0o100644`.
    pub mode: u32,
    /// The abbreviated id as `index` lines print it.
    pub abbrev: &'a str,
    /// The bytes that are diffed (blob content, symlink target, `Subproject commit …` line).
    pub content: &'a [u8],
    /// Whether git considers this side binary.
    pub binary: bool,
}

/// A file pair to print; `None` is the absent side (`/dev/null`).
#[derive(Debug, Clone, Copy)]
pub struct SectionView<'a> {
    /// The old side.
    pub old: Option<SideView<'a>>,
    /// The new side.
    pub new: Option<SideView<'a>>,
    /// Set for renames: the similarity in percent (`similarity index N%`).
    pub similarity: Option<u32>,
    /// Whether both sides have the same object id (no `index` line then).
    pub same_id: bool,
    /// The abbreviation of the null id, printed for an absent side.
    pub null_abbrev: &'a str,
    /// `core.quotePath`.
    pub quote_path: bool,
}

/// What [`write_section`] appended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Bytes of header before the first hunk (or the whole section when it has none).
    pub header_len: usize,
    /// Hunk positions, relative to where the section starts.
    pub hunks: Vec<HunkSpan>,
    /// `+` lines.
    pub added: u32,
    /// `-` lines.
    pub deleted: u32,
}

/// Appends one file section, exactly as git's `builtin_diff` prints it, to `out`.
pub fn write_section(
    section: &SectionView<'_>,
    hunk_options: &HunkOptions,
    out: &mut Vec<u8>,
) -> Written {
    let begin = out.len();
    let (old, new) = (section.old, section.new);
    let any = old.or(new).expect("a section has at least one side");
    let name_a = old.unwrap_or(any).path;
    let name_b = new.unwrap_or(any).path;
    let q = section.quote_path;
    let mut a_label = Vec::new();
    push_quoted_with_prefix(&mut a_label, b"a/", name_a, q);
    let mut b_label = Vec::new();
    push_quoted_with_prefix(&mut b_label, b"b/", name_b, q);

    let mut header = Vec::new();
    header.extend_from_slice(b"diff --git ");
    header.extend_from_slice(&a_label);
    header.push(b' ');
    header.extend_from_slice(&b_label);
    header.push(b'\n');

    let mut meta = Vec::new();
    let mut must_show_header = false;
    if let (Some(similarity), Some(o), Some(n)) = (section.similarity, old, new) {
        must_show_header = true;
        meta.extend_from_slice(format!("similarity index {similarity}%\nrename from ").as_bytes());
        push_quoted_with_prefix(&mut meta, b"", o.path, q);
        meta.extend_from_slice(b"\nrename to ");
        push_quoted_with_prefix(&mut meta, b"", n.path, q);
        meta.push(b'\n');
    }
    let old_mode = old.map_or(0, |s| s.mode);
    let new_mode = new.map_or(0, |s| s.mode);
    if !section.same_id {
        let old_abbrev = old.map_or(section.null_abbrev, |s| s.abbrev);
        let new_abbrev = new.map_or(section.null_abbrev, |s| s.abbrev);
        meta.extend_from_slice(format!("index {old_abbrev}..{new_abbrev}").as_bytes());
        if old_mode == new_mode {
            meta.extend_from_slice(format!(" {old_mode:06o}").as_bytes());
        }
        meta.push(b'\n');
    }

    match (old, new) {
        (None, _) => {
            header.extend_from_slice(format!("new file mode {new_mode:06o}\n").as_bytes());
            must_show_header = true;
        }
        (_, None) => {
            header.extend_from_slice(format!("deleted file mode {old_mode:06o}\n").as_bytes());
            must_show_header = true;
        }
        _ if old_mode != new_mode => {
            header.extend_from_slice(
                format!("old mode {old_mode:06o}\nnew mode {new_mode:06o}\n").as_bytes(),
            );
            must_show_header = true;
        }
        _ => {}
    }
    header.extend_from_slice(&meta);

    let old_label: &[u8] = if old.is_some() {
        &a_label
    } else {
        b"/dev/null"
    };
    let new_label: &[u8] = if new.is_some() {
        &b_label
    } else {
        b"/dev/null"
    };
    let binary = old.is_some_and(|s| s.binary) || new.is_some_and(|s| s.binary);
    if binary {
        if section.same_id {
            if must_show_header {
                out.extend_from_slice(&header);
            }
        } else {
            out.extend_from_slice(&header);
            out.extend_from_slice(b"Binary files ");
            out.extend_from_slice(old_label);
            out.extend_from_slice(b" and ");
            out.extend_from_slice(new_label);
            out.extend_from_slice(b" differ\n");
        }
        return Written {
            header_len: out.len() - begin,
            ..Written::default()
        };
    }

    let mut preamble = Vec::new();
    if must_show_header {
        out.extend_from_slice(&header);
    } else {
        preamble.extend_from_slice(&header);
    }
    push_label_line(&mut preamble, b"--- ", old_label);
    push_label_line(&mut preamble, b"+++ ", new_label);
    let old_content = old.map_or(&b""[..], |s| s.content);
    let new_content = new.map_or(&b""[..], |s| s.content);
    let hunks_begin = out.len();
    let hunks = write_hunks(old_content, new_content, &preamble, hunk_options, out);
    let header_len = match hunks.spans.first() {
        Some(first) => first.start - begin,
        None => out.len() - begin,
    };
    debug_assert!(hunks_begin >= begin);
    Written {
        header_len,
        hunks: hunks
            .spans
            .iter()
            .map(|span| HunkSpan {
                start: span.start - begin,
                end: span.end - begin,
                ..*span
            })
            .collect(),
        added: hunks.added,
        deleted: hunks.deleted,
    }
}

/// `--- a/x` / `+++ b/x`; git ends the line with a tab when the label contains a space.
fn push_label_line(out: &mut Vec<u8>, marker: &[u8], label: &[u8]) {
    out.extend_from_slice(marker);
    out.extend_from_slice(label);
    if label.contains(&b' ') {
        out.push(b'\t');
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side<'a>(path: &'a str, mode: u32, abbrev: &'a str, content: &'a str) -> SideView<'a> {
        SideView {
            path: path.as_bytes(),
            mode,
            abbrev,
            content: content.as_bytes(),
            binary: false,
        }
    }

    fn render(section: SectionView<'_>) -> String {
        let mut out = Vec::new();
        write_section(&section, &HunkOptions::default(), &mut out);
        String::from_utf8(out).expect("ASCII test data")
    }

    fn section<'a>(old: Option<SideView<'a>>, new: Option<SideView<'a>>) -> SectionView<'a> {
        SectionView {
            old,
            new,
            similarity: None,
            same_id: false,
            null_abbrev: "0000000",
            quote_path: true,
        }
    }

    // Expected texts below were produced by git 2.47 (`git diff` between two commits).
    #[test]
    fn added_file() {
        let got = render(section(
            None,
            Some(side("f", 0o100644, "ce01362", "hello\n")),
        ));
        assert_eq!(
            got,
            "diff --git a/f b/f\nnew file mode 100644\nindex 0000000..ce01362\n--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+hello\n"
        );
    }

    #[test]
    fn empty_added_file_has_no_hunks() {
        let got = render(section(None, Some(side("e", 0o100644, "e69de29", ""))));
        assert_eq!(
            got,
            "diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n"
        );
    }

    #[test]
    fn pure_rename_has_no_index_line() {
        let mut s = section(
            Some(side("e1", 0o100644, "e69de29", "")),
            Some(side("e2", 0o100644, "e69de29", "")),
        );
        s.similarity = Some(100);
        s.same_id = true;
        assert_eq!(
            render(s),
            "diff --git a/e1 b/e2\nsimilarity index 100%\nrename from e1\nrename to e2\n"
        );
    }

    #[test]
    fn mode_change_only() {
        let mut s = section(
            Some(side("run.sh", 0o100644, "1111111", "x\n")),
            Some(side("run.sh", 0o100755, "1111111", "x\n")),
        );
        s.same_id = true;
        assert_eq!(
            render(s),
            "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
        );
    }

    #[test]
    fn binary_deleted_file() {
        let mut old = side("bin", 0o100644, "abcdef0", "\0\x01");
        old.binary = true;
        assert_eq!(
            render(section(Some(old), None)),
            "diff --git a/bin b/bin\ndeleted file mode 100644\nindex abcdef0..0000000\nBinary files a/bin and /dev/null differ\n"
        );
    }

    #[test]
    fn labels_with_spaces_end_in_tab() {
        let got = render(section(
            Some(side("a b", 0o100644, "1111111", "x\n")),
            Some(side("a b", 0o100644, "2222222", "y\n")),
        ));
        assert_eq!(
            got,
            "diff --git a/a b b/a b\nindex 1111111..2222222 100644\n--- a/a b\t\n+++ b/a b\t\n@@ -1 +1 @@\n-x\n+y\n"
        );
    }
}
