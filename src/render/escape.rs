//! The one escaping of text from stored data for a terminal: control characters (C0 but for
//! newline and tab, DEL, C1) and the bidirectional-override characters are written the way
//! git writes them with `core.quotePath` (`\r`, `\033`, `\302\233`, …), so a task, a finding
//! or a check's output cannot move the cursor, set the title, write the clipboard (OSC 52),
//! hide text or overwrite a line. `--json` output is never escaped (it stays exact).

use std::borrow::Cow;

/// `s` for a terminal: every control character escaped except newline and tab.
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// `s` as one line of a terminal: [`text`], and newlines and tabs escaped too (a task or a
/// branch name cannot start a line of its own).
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// `s` for GitHub markdown (the PR body), inert: `&`, `<`, `>` HTML-escaped (no tag, no
/// comment, no `</details>`, no marker of the managed block), backticks escaped (no code span
/// opens or closes), `![` escaped (no image), `@` followed by a zero-width space (no
/// mention), and control characters escaped as for the terminal.
pub fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    let escaped = text(s);
    let mut chars = escaped.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '`' => out.push_str("\\`"),
            '@' => out.push_str("@\u{200b}"),
            '!' if chars.peek() == Some(&'[') => out.push_str("!\\"),
            _ => out.push(c),
        }
    }
    out
}

/// `s` as the content of a markdown code span (shown literally there, so not HTML-escaped):
/// one line, no backtick, and no `<!--`/`-->` (so no marker of the managed block).
pub fn code_span(s: &str) -> String {
    line(s)
        .replace('`', "'")
        .replace("<!--", "<!-\u{200b}-")
        .replace("-->", "-\u{200b}->")
}

fn escape(s: &str, one_line: bool) -> Cow<'_, str> {
    if !s.chars().any(|c| needs_escape(c, one_line)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !needs_escape(c, one_line) {
            out.push(c);
            continue;
        }
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            _ => {
                let mut bytes = [0; 4];
                for byte in c.encode_utf8(&mut bytes).bytes() {
                    out.push_str(&format!("\\{byte:03o}"));
                }
            }
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char, one_line: bool) -> bool {
    match c {
        '\n' | '\t' => one_line,
        // Bidirectional embeddings, overrides and isolates reorder what is shown.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => c.is_control(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_as_git_quotes_paths() {
        let cases = [
            ("plain text — ünïcode", "plain text — ünïcode"),
            ("two\nlines\tand a tab", "two\nlines\tand a tab"),
            ("\u{1b}]52;c;ZXZpbA==\u{7}", "\\033]52;c;ZXZpbA==\\a"),
            ("\u{1b}]0;title\u{1b}\\", "\\033]0;title\\033\\"),
            ("ok\rFAKE", "ok\\rFAKE"),
            ("\u{1b}[8mhidden", "\\033[8mhidden"),
            ("c1 \u{9b}31m", "c1 \\302\\23331m"),
            ("del \u{7f}", "del \\177"),
            ("rtl \u{202e}txt.exe", "rtl \\342\\200\\256txt.exe"),
            ("\u{0}\u{8}\u{b}\u{c}", "\\000\\b\\v\\f"),
        ];
        for (raw, shown) in cases {
            assert_eq!(text(raw), shown, "{raw:?}");
        }
        assert_eq!(line("a\nb\tc"), "a\\nb\\tc");
        assert!(matches!(text("nothing to do"), Cow::Borrowed(_)));
    }

    #[test]
    fn markdown_is_inert() {
        let raw = "<!-- x --> </details> <img src=x> ![t](http://e/p.gif) @team `a` & &lt;";
        let shown = markdown(raw);
        for bad in ["<", ">", "![", "@team", "`a`", "& "] {
            assert!(!shown.contains(bad), "{bad}: {shown}");
        }
        assert_eq!(
            markdown("a<b> @x ![i] `c`"),
            "a&lt;b&gt; @\u{200b}x !\\[i] \\`c\\`"
        );
        assert_eq!(
            code_span("a`b\n<!-- git-pair:end -->"),
            "a'b\\n<!-\u{200b}- git-pair:end -\u{200b}->"
        );
    }
}
