//! An error and its causes as one line of plain words: what a user reads after `error:`.

/// `err`, then each of its sources, joined by `: `; a cause whose words the line already holds
/// is left out (wrappers often repeat their source), and each is written with `Display`
/// only, never `Debug`. Line breaks inside a message become spaces.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut line = one_line(&err.to_string());
    let mut source = err.source();
    while let Some(cause) = source {
        let words = one_line(&cause.to_string());
        if !words.is_empty() && !line.contains(&words) {
            line.push_str(": ");
            line.push_str(&words);
        }
        source = cause.source();
    }
    line
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("could not create temporary object file")]
    struct Outer {
        #[source]
        source: std::io::Error,
    }

    #[test]
    fn causes_are_words_once_each_never_debug() {
        let err = Outer {
            source: std::io::Error::from_raw_os_error(13),
        };
        let line = error_chain(&err);
        assert_eq!(
            line,
            "could not create temporary object file: Permission denied (os error 13)"
        );
        assert!(!line.contains("Os {"));
    }
}
