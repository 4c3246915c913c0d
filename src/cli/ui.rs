//! The only place that writes to stdout and stderr. `--json` vs human output is decided here:
//! data goes to stdout, messages and progress to stderr (progress only on a terminal).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal as _, Write as _};

use serde_json::Value;

use super::error::CommandError;
use crate::render::escape;

/// What a command produced: one JSON object and the human rendering of the same data.
#[derive(Debug, Default)]
pub struct Report {
    pub json: serde_json::Map<String, Value>,
    /// Printed to stdout without `--json`.
    pub human: String,
    /// Printed to stderr in both modes (notes, warnings, hints).
    pub notes: Vec<String>,
    /// A non-zero exit that is not an error (budget alert).
    pub exit: u8,
    /// Print nothing on stdout, in either mode (a hook whose silence is its answer).
    pub silent: bool,
    /// The human text is a patch: byte for byte when stdout is not a terminal (to a file or
    /// a pipe), escaped like all other text on one.
    pub raw: bool,
}

impl Report {
    /// A report from a JSON object and its human text.
    pub fn new(json: Value, human: impl Into<String>) -> Self {
        Report {
            json: match json {
                Value::Object(map) => map,
                other => {
                    let mut map = serde_json::Map::new();
                    map.insert("value".into(), other);
                    map
                }
            },
            human: human.into(),
            notes: Vec::new(),
            exit: 0,
            silent: false,
            raw: false,
        }
    }

    /// Marks the human text a patch (see [`Report::raw`]).
    pub fn raw(mut self) -> Self {
        self.raw = true;
        self
    }

    /// Adds a note for stderr.
    /// A command's report from an operation's report: its `--json` object is `report`
    /// serialized (the ops type IS the contract, field order = key order), its human text is
    /// what `human` (a renderer in [`crate::render`]) writes.
    pub fn rendered<T: serde::Serialize>(
        report: &T,
        human: fn(&T, &mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Self {
        let json = serde_json::to_value(report).expect("ops reports serialize to JSON");
        let mut text = Vec::new();
        human(report, &mut text).expect("writing to a Vec cannot fail");
        Report::new(json, String::from_utf8_lossy(&text).into_owned())
    }

    /// The report of a command that printed its output as it went ([`Ui::stream`]).
    pub fn streamed() -> Self {
        Report {
            silent: true,
            ..Report::default()
        }
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// Stdout for a command that prints as it goes (a listing of many runs), buffered. Human
/// text is escaped for the terminal as [`Ui::emit`] escapes it. Once the reader closed the
/// pipe, writes are dropped and the command ends quietly.
pub struct Stream {
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    closed: bool,
    failed: Option<std::io::Error>,
}

impl Stream {
    /// Writes data as it is (JSON). `false` once nothing more can be written.
    pub fn data(&mut self, bytes: &[u8]) -> bool {
        if self.closed {
            return false;
        }
        if let Err(e) = self.out.write_all(bytes) {
            self.closed = true;
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                self.failed = Some(e);
            }
        }
        !self.closed
    }

    /// Writes human text, escaped for the terminal. `false` once nothing more can be written.
    pub fn text(&mut self, text: &str) -> bool {
        self.data(escape::text(text).as_bytes())
    }

    /// Flushes what is buffered; a write that failed (other than a closed pipe) is an error.
    pub fn finish(mut self) -> Result<(), CommandError> {
        if !self.closed
            && let Err(e) = self.out.flush()
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            self.failed = Some(e);
        }
        match self.failed {
            Some(e) => Err(CommandError::failed(format!("cannot write output: {e}"))),
            None => Ok(()),
        }
    }
}

/// Terminal access for one command invocation.
pub struct Ui {
    json: bool,
    progress: bool,
    /// The caller keeps the reports instead of printing them (the demo's steps): nothing is
    /// printed straight away ([`Ui::print_rendered`]).
    capture: bool,
}

impl Ui {
    /// A Ui for `--json` or human output.
    pub fn new(json: bool) -> Self {
        Ui {
            json,
            progress: std::io::stderr().is_terminal(),
            capture: false,
        }
    }

    /// A Ui for a command whose report the caller keeps and shows itself (human text).
    pub fn capturing() -> Self {
        Ui {
            capture: true,
            ..Ui::new(false)
        }
    }

    /// Whether `--json` was asked for.
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// Stdout for printing as the output is produced (the command's [`Report`] is then
    /// [`Report::streamed`]: nothing more to print).
    pub fn stream(&self) -> Stream {
        Stream {
            out: std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock()),
            closed: false,
            failed: None,
        }
    }

    /// Prints a command's result straight away, building only the form that is printed: with
    /// `--json`, `report` serialized (field order = key order, as [`Report::rendered`]), else
    /// the text `human` writes, escaped as [`Ui::emit`] escapes it. The command then returns
    /// [`Report::streamed`] (with its notes and exit code): for a report too large to build
    /// twice (every commit `verify` checked). A capturing Ui gets the whole report back.
    pub fn print_rendered<T: serde::Serialize>(
        &self,
        report: &T,
        human: fn(&T, &mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Result<Report, CommandError> {
        if self.capture {
            return Ok(Report::rendered(report, human));
        }
        let mut out = self.stream();
        let mut bytes = Vec::with_capacity(64 << 10);
        if self.json {
            serde_json::to_writer(&mut bytes, report).expect("ops reports serialize to JSON");
            bytes.push(b'\n');
            out.data(&bytes);
        } else {
            human(report, &mut bytes).expect("writing to a Vec cannot fail");
            if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                bytes.push(b'\n');
            }
            out.text(&String::from_utf8_lossy(&bytes));
        }
        out.finish()?;
        Ok(Report::streamed())
    }

    /// Shows progress on a long wait; only when stderr is a terminal, never in `--json` data.
    pub fn progress(&self, message: &str) {
        if self.progress {
            eprintln!("{}", escape::text(message));
        }
    }

    /// Prints a command's result and returns its exit code. Human text and notes are
    /// escaped for the terminal ([`crate::render::escape`]): they hold stored data (tasks,
    /// findings, check output) that anyone with push access may have written.
    pub fn emit(&self, report: &Report) -> u8 {
        for note in &report.notes {
            eprintln!("{}", escape::text(note));
        }
        let result = if report.silent {
            Ok(())
        } else if self.json {
            let line = serde_json::to_string(&report.json).expect("JSON values serialize");
            writeln!(std::io::stdout().lock(), "{line}")
        } else if report.human.is_empty() {
            Ok(())
        } else {
            let mut out = std::io::stdout().lock();
            let human = if report.raw && !out.is_terminal() {
                std::borrow::Cow::Borrowed(report.human.as_str())
            } else {
                escape::text(&report.human)
            };
            out.write_all(human.as_bytes()).and_then(|()| {
                if report.human.ends_with('\n') {
                    Ok(())
                } else {
                    out.write_all(b"\n")
                }
            })
        };
        match result {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
            Err(e) => {
                eprintln!("error: cannot write output: {e}");
                super::error::EXIT_FAILURE
            }
            Ok(()) => report.exit,
        }
    }

    /// Prints a failure: one `error:` line (and a hint) on stderr, and with `--json` one
    /// object with an `error` key on stdout. Returns the exit code.
    pub fn emit_error(&self, err: &CommandError) -> u8 {
        if let (false, Some(text)) = (self.json, &err.human) {
            let _ = write!(std::io::stdout().lock(), "{}", escape::text(text));
        }
        eprintln!("error: {}", escape::line(&err.message));
        if let Some(hint) = &err.hint {
            eprintln!("hint: {}", escape::line(hint));
        }
        if self.json {
            let line = serde_json::to_string(&err.to_json()).expect("JSON values serialize");
            let _ = writeln!(std::io::stdout().lock(), "{line}");
        }
        err.exit
    }

    /// Prints clap's help text as clap formats it, or its usage error as every other failure
    /// is printed: one `error:` line and a hint (with `--json`, an object with `error` on
    /// stdout too). Returns the exit code.
    pub fn emit_clap(&self, err: &clap::Error) -> u8 {
        use clap::error::ErrorKind;
        match err.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                let _ = err.print();
                if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    super::error::EXIT_USAGE
                } else {
                    0
                }
            }
            _ => {
                let text = err.render().to_string();
                let first = text
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("invalid usage");
                let first = first.strip_prefix("error: ").unwrap_or(first);
                // What clap lists under its first line (the missing arguments, the possible
                // values) belongs to the message: one line, the items joined.
                let details: Vec<&str> = text
                    .lines()
                    .skip_while(|l| l.trim().is_empty())
                    .skip(1)
                    .take_while(|l| !l.trim().is_empty())
                    .map(str::trim)
                    .filter(|l| !l.starts_with("tip: "))
                    .collect();
                let message = if details.is_empty() {
                    first.to_owned()
                } else {
                    format!("{} {}", first, details.join(", "))
                };
                let tip = text
                    .lines()
                    .map(str::trim)
                    .find(|l| l.starts_with("tip: "))
                    .map(|l| l.trim_start_matches("tip: ").to_owned())
                    .unwrap_or_else(|| {
                        "git pair -h (or git pair COMMAND -h) shows the usage".to_owned()
                    });
                self.emit_error(
                    &super::error::CommandError::usage(super::error::single_line(&message))
                        .with_hint(tip),
                )
            }
        }
    }
}
