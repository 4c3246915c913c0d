//! JSON-RPC 2.0 framing of the Agent Client Protocol over stdio: one message per line,
//! written by git pair, read from the agent by a reader thread that bounds every line. Knows
//! nothing of what a method means; the envelope types are the protocol's published ones
//! (`agent_client_protocol_schema::v1`).

use std::io::{BufRead, Write};
use std::sync::mpsc::{Receiver, Sender, channel};

use agent_client_protocol_schema::v1::{Error as RpcError, RequestId};
use serde::Serialize;
use serde_json::Value;

/// One message the agent sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to one of git pair's requests: its result, or the agent's error.
    Response {
        id: RequestId,
        result: Result<Value, RpcError>,
    },
    /// A request the agent makes of git pair (a file read, a permission), to be answered.
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    /// A notification (`session/update`).
    Notification { method: String, params: Value },
}

/// What the reader thread hands over.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// One complete line (without its newline).
    Line(Vec<u8>),
    /// A line went over the bound: the conversation cannot go on (what follows is unframed).
    TooLong { limit: usize },
    /// The agent closed its stdout (it exited, or will).
    Closed,
}

/// Reads `source` line by line on a thread of its own, each line at most `max_line` bytes,
/// into the returned channel; a longer line ends the reading with [`Event::TooLong`].
pub fn read_lines<R: std::io::Read + Send + 'static>(
    source: R,
    max_line: usize,
) -> Receiver<Event> {
    let (sender, receiver) = channel();
    std::thread::spawn(move || read_loop(std::io::BufReader::new(source), max_line, &sender));
    receiver
}

fn read_loop<R: BufRead>(mut source: R, max_line: usize, sender: &Sender<Event>) {
    let mut line = Vec::new();
    loop {
        let (done, used) = match source.fill_buf() {
            Ok([]) => {
                let _ = sender.send(Event::Closed);
                return;
            }
            Ok(buf) => match buf.iter().position(|b| *b == b'\n') {
                Some(end) => {
                    line.extend_from_slice(&buf[..end]);
                    (true, end + 1)
                }
                None => {
                    line.extend_from_slice(buf);
                    (false, buf.len())
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => {
                let _ = sender.send(Event::Closed);
                return;
            }
        };
        source.consume(used);
        if line.len() > max_line {
            let _ = sender.send(Event::TooLong { limit: max_line });
            return;
        }
        if done {
            let complete = std::mem::take(&mut line);
            if complete.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if sender.send(Event::Line(complete)).is_err() {
                return;
            }
        }
    }
}

/// Reads one line as a JSON-RPC message; why not, when it is none.
pub fn parse(line: &[u8]) -> Result<Incoming, String> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| format!("not a JSON-RPC message: {e}"))?;
    let Value::Object(mut object) = value else {
        return Err("not a JSON-RPC message: not an object".into());
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("not a JSON-RPC 2.0 message (no \"jsonrpc\": \"2.0\")".into());
    }
    let id = match object.remove("id") {
        Some(id) => Some(
            serde_json::from_value::<RequestId>(id).map_err(|e| format!("bad JSON-RPC id: {e}"))?,
        ),
        None => None,
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (Some(_), _) => Err("bad JSON-RPC method: not a string".into()),
        (None, Some(id)) => {
            let result = match (object.remove("result"), object.remove("error")) {
                (Some(result), None) => Ok(result),
                (None, Some(error)) => Err(serde_json::from_value::<RpcError>(error)
                    .map_err(|e| format!("bad JSON-RPC error object: {e}"))?),
                _ => return Err("a JSON-RPC response needs exactly one of result, error".into()),
            };
            Ok(Incoming::Response { id, result })
        }
        (None, None) => Err("a JSON-RPC message without method or id".into()),
    }
}

/// A request line (`{"jsonrpc":"2.0","id":…,"method":…,"params":…}` and a newline).
pub fn request(id: i64, method: &str, params: &impl Serialize) -> Vec<u8> {
    line(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// A notification line.
pub fn notification(method: &str, params: &impl Serialize) -> Vec<u8> {
    line(serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// The line answering request `id`: its result, or an error.
pub fn response(id: &RequestId, result: Result<Value, RpcError>) -> Vec<u8> {
    line(match result {
        Ok(result) => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}),
    })
}

fn line(value: Value) -> Vec<u8> {
    // serde_json escapes every control character, so a newline never appears inside.
    let mut bytes = serde_json::to_vec(&value).expect("a JSON value always serializes");
    bytes.push(b'\n');
    bytes
}

/// Writes one framed message and flushes it.
pub fn send(to: &mut impl Write, message: &[u8]) -> std::io::Result<()> {
    to.write_all(message)?;
    to.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol_schema::ProtocolVersion;
    use agent_client_protocol_schema::v1::InitializeRequest;

    fn lines(input: &[u8], max: usize) -> Vec<Event> {
        let (sender, receiver) = channel();
        read_loop(std::io::Cursor::new(input.to_vec()), max, &sender);
        drop(sender);
        receiver.iter().collect()
    }

    #[test]
    fn lines_are_split_bounded_and_blank_ones_skipped() {
        assert_eq!(
            lines(b"{\"a\":1}\n\n  \n{\"b\":2}\n", 100),
            vec![
                Event::Line(b"{\"a\":1}".to_vec()),
                Event::Line(b"{\"b\":2}".to_vec()),
                Event::Closed
            ]
        );
        // A last line without its newline is not a message: the agent died mid-line.
        assert_eq!(
            lines(b"{\"a\":1}\n{\"b\"", 100),
            vec![Event::Line(b"{\"a\":1}".to_vec()), Event::Closed]
        );
        // Over the bound: reading stops, whatever follows.
        let long = [b"{\"a\":1}\n".as_slice(), &[b'x'; 300], b"\n{\"c\":3}\n"].concat();
        assert_eq!(
            lines(&long, 100),
            vec![
                Event::Line(b"{\"a\":1}".to_vec()),
                Event::TooLong { limit: 100 }
            ]
        );
        // Exactly at the bound is fine.
        let exact = [&[b'y'; 100][..], b"\n"].concat();
        assert_eq!(
            lines(&exact, 100),
            vec![Event::Line(vec![b'y'; 100]), Event::Closed]
        );
    }

    #[test]
    fn messages_are_told_apart_by_method_and_id() {
        let cases: Vec<(&str, Result<Incoming, ()>)> = vec![
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{"x":1}}"#,
                Ok(Incoming::Response {
                    id: RequestId::Number(1),
                    result: Ok(serde_json::json!({"x": 1})),
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"fs/read_text_file","params":{"p":1}}"#,
                Ok(Incoming::Request {
                    id: RequestId::Str("a".into()),
                    method: "fs/read_text_file".into(),
                    params: serde_json::json!({"p": 1}),
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"session/update"}"#,
                Ok(Incoming::Notification {
                    method: "session/update".into(),
                    params: Value::Null,
                }),
            ),
            (r#"{"id":1,"result":{}}"#, Err(())),
            (r#"{"jsonrpc":"2.0","id":1}"#, Err(())),
            (r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#, Err(())),
            (r#"{"jsonrpc":"2.0","id":{"x":1},"result":1}"#, Err(())),
            (r#"{"jsonrpc":"2.0","method":7}"#, Err(())),
            (r#"[1,2]"#, Err(())),
            ("not json", Err(())),
        ];
        for (line, want) in cases {
            let got = parse(line.as_bytes()).map_err(|_| ());
            assert_eq!(got, want, "{line}");
        }
        let Ok(Incoming::Response { result: Err(e), .. }) = parse(
            br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"API Error: 500"}}"#,
        ) else {
            panic!("an error response");
        };
        assert_eq!(e.message, "API Error: 500");
    }

    #[test]
    fn what_git_pair_writes_is_one_line_of_the_protocol_types() {
        let init = InitializeRequest::new(ProtocolVersion::V1);
        let bytes = request(1, "initialize", &init);
        assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), 1);
        assert!(bytes.ends_with(b"\n"));
        let Ok(Incoming::Request { method, params, .. }) = parse(&bytes[..bytes.len() - 1]) else {
            panic!("a request");
        };
        assert_eq!(method, "initialize");
        assert_eq!(params["protocolVersion"], 1);
        // Text with newlines and control characters stays on one line.
        let note = notification("x", &serde_json::json!({"t": "a\nb\u{1}"}));
        assert_eq!(note.iter().filter(|b| **b == b'\n').count(), 1);
        let reply = response(&RequestId::Number(3), Err(RpcError::method_not_found()));
        let Ok(Incoming::Response { result: Err(e), .. }) = parse(&reply[..reply.len() - 1]) else {
            panic!("an error response");
        };
        assert_eq!(i32::from(e.code), -32601);
    }
}
