//! The loopback model server the end-to-end tests point the real CLIs at: std only, one
//! thread per connection, hand-written HTTP/1.1. It speaks enough of the Anthropic Messages
//! API (`POST /v1/messages`, streaming SSE or plain JSON), the OpenAI Responses API
//! (`POST /v1/responses`, streaming SSE), OpenAI chat completions (`POST …/chat/completions`,
//! streaming SSE or plain JSON: Qwen Code, OpenCode, Copilot's BYOK provider) and Gemini's
//! `…:streamGenerateContent` / `…:generateContent` to play a scripted answer per request,
//! records every request, answers anything else harmlessly (a CLI's own side requests, such
//! as OpenCode's title generator, get a fixed text without using the script), and stops when
//! dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// Token counts an answer reports (set by the script so cost tests know the exact figure).
#[derive(Clone, Copy, Debug)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Usage {
            input: 1000,
            output: 100,
            cache_read: 0,
            cache_write: 0,
        }
    }
}

/// What the server does with one model request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A plain text answer.
    Text(String),
    /// A JSON answer: a `StructuredOutput` tool call for Claude when the request offers that
    /// tool (its text otherwise); the object as the message text for Codex.
    Json(Value),
    /// A call of a named tool with this input (Claude `tool_use`).
    Tool(String, Value),
    /// A tool call that runs a shell command: Claude `Bash`; Codex's offered shell tool.
    Shell(String),
    /// An HTTP error status with a vendor-shaped error body.
    Status(u16),
    /// Headers and one event, then the connection is closed mid-stream.
    Drop,
    /// Headers and one event, then nothing until the server is dropped.
    Stall,
    /// A completed answer with no text at all.
    Empty,
}

/// One scripted step: the reply, the usage it reports, and the model it claims to be.
#[derive(Clone, Debug)]
pub struct Step {
    pub reply: Reply,
    pub usage: Usage,
    pub model: Option<String>,
}

impl From<Reply> for Step {
    fn from(reply: Reply) -> Self {
        Step {
            reply,
            usage: Usage::default(),
            model: None,
        }
    }
}

impl Step {
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        self.usage.input = input;
        self.usage.output = output;
        self
    }

    pub fn model(mut self, model: &str) -> Self {
        self.model = Some(model.to_owned());
        self
    }
}

/// One recorded request.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The parsed JSON body (`Null` when there is none or it is not JSON).
    pub body: Value,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether this is a model turn (Messages, Responses, chat completions, Gemini), not a
    /// probe, telemetry or a CLI's side request ([`Self::is_side_call`]).
    pub fn is_model_call(&self) -> bool {
        self.method == "POST"
            && (self.path.starts_with("/v1/messages") && !self.path.contains("count_tokens")
                || self.path.starts_with("/v1/responses")
                || self.path.ends_with("/chat/completions")
                || self.path.contains(":generateContent")
                || self.path.contains(":streamGenerateContent"))
            && !self.is_side_call()
    }

    /// A request a CLI makes on its own besides the turn (OpenCode's session title, Qwen
    /// Code's memory extractor): answered with a fixed text, never from the script.
    pub fn is_side_call(&self) -> bool {
        let system = self.body["messages"][0]["content"].as_str().unwrap_or("");
        system.starts_with("You are a title generator")
            || self
                .all_text()
                .contains("Managed memory has TWO directories")
    }

    /// The model asked for: the body's `model`, or Gemini's `models/<model>:…` path.
    pub fn model(&self) -> Option<&str> {
        self.body["model"].as_str().or_else(|| {
            let rest = self.path.split("/models/").nth(1)?;
            rest.split(':').next()
        })
    }

    /// Every text the request carries (messages / input items / system), joined: what a
    /// test searches for the prompt and earlier turns.
    pub fn all_text(&self) -> String {
        let mut out = String::new();
        collect_text(&self.body["messages"], &mut out);
        collect_text(&self.body["input"], &mut out);
        collect_text(&self.body["contents"], &mut out);
        out
    }

    /// Names of the tools the request offers (Anthropic / Responses `name`, chat
    /// completions `function.name`, Gemini `functionDeclarations[].name`).
    pub fn tool_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for tool in self.body["tools"].as_array().into_iter().flatten() {
            if let Some(name) = tool["name"].as_str().or(tool["function"]["name"].as_str()) {
                names.push(name.to_owned());
            }
            for f in tool["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
            {
                names.extend(f["name"].as_str().map(str::to_owned));
            }
        }
        names
    }
}

fn collect_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|i| collect_text(i, out)),
        Value::Object(map) => {
            for (k, v) in map {
                if matches!(
                    k.as_str(),
                    "text" | "content" | "input" | "output" | "arguments" | "parts"
                ) {
                    collect_text(v, out);
                }
            }
        }
        _ => {}
    }
}

#[derive(Default)]
struct State {
    script: VecDeque<Step>,
    fallback: Option<Step>,
    requests: Vec<Request>,
    next_id: u64,
}

struct Shared {
    state: Mutex<State>,
    stop: AtomicBool,
    stopped: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The running server: loopback only, on a free port; stops when dropped (stalled
/// connections are released then).
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl ModelServer {
    /// Starts a server that plays `script` in order, then `fallback` for every later model
    /// request (none: HTTP 500).
    pub fn start(script: Vec<Step>, fallback: Option<Step>) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script: script.into(),
                fallback,
                ..State::default()
            }),
            stop: AtomicBool::new(false),
            stopped: Condvar::new(),
        });
        let for_thread = Arc::clone(&shared);
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if for_thread.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let shared = Arc::clone(&for_thread);
                std::thread::spawn(move || serve(conn, &shared));
            }
        });
        ModelServer {
            addr,
            shared,
            accept: Some(accept),
        }
    }

    /// Appends `steps` to the script (a test that knows a path only once the server runs).
    pub fn push_script(&self, steps: Vec<Step>) {
        self.shared.lock().script.extend(steps);
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.lock().requests.clone()
    }

    /// The model turns so far (Messages / Responses posts).
    pub fn model_calls(&self) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(Request::is_model_call)
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.stopped.notify_all();
        let _ = TcpStream::connect(self.addr);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// One connection: requests in turn (keep-alive) until the peer closes or a reply ends it.
fn serve(conn: TcpStream, shared: &Shared) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(120)));
    let Ok(write_half) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    let mut out = write_half;
    while !shared.stop.load(Ordering::SeqCst) {
        let Some(request) = read_request(&mut reader) else {
            return;
        };
        let keep = respond(&request, shared, &mut out);
        if !keep {
            let _ = out.shutdown(std::net::Shutdown::Both);
            return;
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _): &&(String, String)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(len) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(len, 0);
        reader.read_exact(&mut body).ok()?;
    }
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

/// Answers one request; false when the connection must end.
fn respond(request: &Request, shared: &Shared, out: &mut TcpStream) -> bool {
    let (step, id) = {
        let mut state = shared.lock();
        state.requests.push(request.clone());
        state.next_id += 1;
        let id = state.next_id;
        if request.is_model_call() {
            let step = state
                .script
                .pop_front()
                .or_else(|| state.fallback.clone())
                .unwrap_or_else(|| Reply::Status(500).into());
            (Some(step), id)
        } else {
            (None, id)
        }
    };
    let api = if request.path.starts_with("/v1/responses") {
        Api::Responses
    } else if request.path.ends_with("/chat/completions") {
        Api::Chat
    } else if request.path.contains(":generateContent")
        || request.path.contains(":streamGenerateContent")
    {
        Api::Gemini
    } else {
        Api::Messages
    };
    let step = match step {
        Some(step) => step,
        None if request.is_side_call() => Reply::Text("Side answer".to_owned()).into(),
        None => return harmless(request, out),
    };
    let streaming = request.body["stream"].as_bool().unwrap_or(false);
    if let Reply::Status(code) = step.reply {
        let body = match api {
            Api::Messages => json!({"type": "error", "error": {
                "type": error_type(code), "message": format!("scripted HTTP {code}")}}),
            Api::Responses | Api::Chat => json!({"error": {
                "type": error_type(code), "code": error_type(code),
                "message": format!("scripted HTTP {code}")}}),
            Api::Gemini => json!({"error": {"code": code,
                "message": format!("scripted HTTP {code}"), "status": gemini_status(code)}}),
        };
        return plain(out, code, &body.to_string());
    }
    let model = step
        .model
        .clone()
        .or_else(|| request.model().map(str::to_owned))
        .unwrap_or_else(|| "mock-model".to_owned());
    let events = match api {
        Api::Messages => messages_events(request, &step, &model, id),
        Api::Responses => responses_events(request, &step, &model, id),
        Api::Chat => chat_events(request, &step, &model, id),
        Api::Gemini => gemini_events(&step, &model),
    };
    // Gemini streams only when the path says so (`…:streamGenerateContent?alt=sse`).
    let streaming = match api {
        Api::Gemini => request.path.contains(":streamGenerateContent"),
        _ => streaming,
    };
    if !streaming && matches!(api, Api::Chat | Api::Gemini) {
        return match step.reply {
            Reply::Drop | Reply::Stall => {
                hang_or_drop(&step.reply, out, shared);
                false
            }
            Reply::Empty if api == Api::Gemini => plain(out, 200, &events[0].1.to_string()),
            _ => plain(out, 200, &fold_json(api, &events).to_string()),
        };
    }
    if api == Api::Messages && !streaming {
        return match step.reply {
            Reply::Drop | Reply::Stall => {
                hang_or_drop(&step.reply, out, shared);
                false
            }
            _ => plain(out, 200, &messages_object(&events).to_string()),
        };
    }
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
    if out.write_all(head.as_bytes()).is_err() {
        return false;
    }
    let cut = matches!(step.reply, Reply::Drop | Reply::Stall);
    let send = if cut { &events[..1] } else { &events[..] };
    for (name, data) in send {
        // Chat completions and Gemini streams are unnamed `data:` lines (chat: then [DONE]).
        let frame = match api {
            Api::Chat | Api::Gemini if name == "done" => "data: [DONE]\n\n".to_owned(),
            Api::Chat | Api::Gemini => format!("data: {data}\n\n"),
            _ => format!("event: {name}\ndata: {data}\n\n"),
        };
        let chunk = format!("{:x}\r\n{frame}\r\n", frame.len());
        if out
            .write_all(chunk.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return false;
        }
    }
    if cut {
        hang_or_drop(&step.reply, out, shared);
        return false;
    }
    out.write_all(b"0\r\n\r\n")
        .and_then(|()| out.flush())
        .is_ok()
}

fn hang_or_drop(reply: &Reply, out: &mut TcpStream, shared: &Shared) {
    let _ = out.flush();
    if matches!(reply, Reply::Stall) {
        let mut state = shared.lock();
        while !shared.stop.load(Ordering::SeqCst) {
            state = shared
                .stopped
                .wait_timeout(state, Duration::from_millis(200))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    Messages,
    Responses,
    Chat,
    Gemini,
}

fn gemini_status(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}

fn error_type(code: u16) -> &'static str {
    match code {
        401 => "authentication_error",
        403 => "permission_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        _ => "Internal Server Error",
    }
}

fn plain(out: &mut TcpStream, code: u16, body: &str) -> bool {
    let mut head = format!(
        "HTTP/1.1 {code} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        reason(code),
        body.len()
    );
    if code == 429 {
        head.push_str("retry-after: 0\r\n");
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())
        .and_then(|()| out.write_all(body.as_bytes()))
        .and_then(|()| out.flush())
        .is_ok()
}

/// Anything that is not a model turn: `HEAD /`, model lists, telemetry — an empty success.
fn harmless(request: &Request, out: &mut TcpStream) -> bool {
    if request.method == "HEAD" {
        return out
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .is_ok();
    }
    let body = if request.path.contains("/models") {
        r#"{"data":[],"models":[],"object":"list"}"#
    } else if request.path.contains("count_tokens") {
        r#"{"input_tokens":1000}"#
    } else {
        "{}"
    };
    plain(out, 200, body)
}

/// The Anthropic stream for a step: `(event name, data)` pairs.
fn messages_events(request: &Request, step: &Step, model: &str, id: u64) -> Vec<(String, Value)> {
    let u = step.usage;
    let offers_structured = request.tool_names().iter().any(|t| t == "StructuredOutput");
    // (block, stop_reason): a text block or a tool_use block.
    let block: Option<(Value, Value)> = match &step.reply {
        Reply::Text(text) => Some((
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
        )),
        Reply::Json(v) if offers_structured => Some(tool_block("StructuredOutput", v, id)),
        Reply::Json(v) => Some((
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": v.to_string()}),
        )),
        Reply::Tool(name, input) => Some(tool_block(name, input, id)),
        Reply::Shell(cmd) => Some(tool_block("Bash", &json!({"command": cmd}), id)),
        Reply::Drop | Reply::Stall => Some((
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "partial"}),
        )),
        Reply::Empty | Reply::Status(_) => None,
    };
    let tool = block.as_ref().is_some_and(|(b, _)| b["type"] == "tool_use");
    let mut events = vec![(
        "message_start".to_owned(),
        json!({"type": "message_start", "message": {
            "id": format!("msg_{id:04}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": u.input, "output_tokens": 1,
                "cache_read_input_tokens": u.cache_read,
                "cache_creation_input_tokens": u.cache_write}}}),
    )];
    if let Some((start, delta)) = block {
        events.push((
            "content_block_start".to_owned(),
            json!({"type": "content_block_start", "index": 0, "content_block": start}),
        ));
        events.push((
            "content_block_delta".to_owned(),
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ));
        events.push((
            "content_block_stop".to_owned(),
            json!({"type": "content_block_stop", "index": 0}),
        ));
    }
    events.push((
        "message_delta".to_owned(),
        json!({"type": "message_delta",
            "delta": {"stop_reason": if tool { "tool_use" } else { "end_turn" }, "stop_sequence": null},
            "usage": {"input_tokens": u.input, "output_tokens": u.output,
                "cache_read_input_tokens": u.cache_read,
                "cache_creation_input_tokens": u.cache_write}}),
    ));
    events.push(("message_stop".to_owned(), json!({"type": "message_stop"})));
    events
}

fn tool_block(name: &str, input: &Value, id: u64) -> (Value, Value) {
    (
        json!({"type": "tool_use", "id": format!("toolu_{id:04}"), "name": name, "input": {}}),
        json!({"type": "input_json_delta", "partial_json": input.to_string()}),
    )
}

/// The same answer as one non-streaming Messages object (folded from the stream).
fn messages_object(events: &[(String, Value)]) -> Value {
    let mut message = events
        .first()
        .map(|(_, d)| d["message"].clone())
        .unwrap_or(Value::Null);
    let mut content = Vec::new();
    let mut block = Value::Null;
    for (name, data) in events {
        match name.as_str() {
            "content_block_start" => block = data["content_block"].clone(),
            "content_block_delta" => {
                let delta = &data["delta"];
                if let Some(text) = delta["text"].as_str() {
                    block["text"] = Value::String(text.to_owned());
                }
                if let Some(partial) = delta["partial_json"].as_str() {
                    block["input"] = serde_json::from_str(partial).unwrap_or(Value::Null);
                }
            }
            "content_block_stop" => content.push(block.take()),
            "message_delta" => {
                message["stop_reason"] = data["delta"]["stop_reason"].clone();
                message["usage"] = data["usage"].clone();
            }
            _ => {}
        }
    }
    message["content"] = Value::Array(content);
    message
}

/// The Responses stream for a step.
fn responses_events(request: &Request, step: &Step, model: &str, id: u64) -> Vec<(String, Value)> {
    let u = step.usage;
    let resp_id = format!("resp_{id:04}");
    let text_item = |text: &str| {
        json!({"type": "message", "id": format!("msg_{id:04}"), "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]})
    };
    let item: Option<Value> = match &step.reply {
        Reply::Text(text) => Some(text_item(text)),
        Reply::Json(v) => Some(text_item(&v.to_string())),
        Reply::Drop | Reply::Stall => Some(text_item("partial")),
        Reply::Tool(name, input) => Some(json!({"type": "function_call",
            "id": format!("fc_{id:04}"), "call_id": format!("call_{id:04}"),
            "name": name, "arguments": input.to_string(), "status": "completed"})),
        Reply::Shell(cmd) => Some(codex_shell_item(request, cmd, id)),
        Reply::Empty | Reply::Status(_) => None,
    };
    let mut events = vec![(
        "response.created".to_owned(),
        json!({"type": "response.created", "response": {"id": resp_id, "model": model,
            "status": "in_progress", "output": []}}),
    )];
    if let Some(item) = &item {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        if added["type"] == "message" {
            added["content"] = json!([]);
        }
        events.push((
            "response.output_item.added".to_owned(),
            json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
        ));
        if let Some(text) = item["content"][0]["text"].as_str() {
            events.push((
                "response.output_text.delta".to_owned(),
                json!({"type": "response.output_text.delta", "output_index": 0,
                    "content_index": 0, "item_id": item["id"], "delta": text}),
            ));
        }
        events.push((
            "response.output_item.done".to_owned(),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ));
    }
    events.push((
        "response.completed".to_owned(),
        json!({"type": "response.completed", "response": {
            "id": resp_id, "model": model, "status": "completed",
            "output": item.iter().cloned().collect::<Vec<_>>(),
            "usage": {"input_tokens": u.input + u.cache_read,
                "input_tokens_details": {"cached_tokens": u.cache_read},
                "output_tokens": u.output,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": u.input + u.cache_read + u.output}}}),
    ));
    events
}

/// Codex's shell tool, as the request offers it: `exec_command` (`cmd`), `shell`
/// (`command` argv), or the built-in `local_shell`.
fn codex_shell_item(request: &Request, cmd: &str, id: u64) -> Value {
    let tools = request.tool_names();
    let call = |name: &str, args: Value| {
        json!({"type": "function_call", "id": format!("fc_{id:04}"),
            "call_id": format!("call_{id:04}"), "name": name,
            "arguments": args.to_string(), "status": "completed"})
    };
    if tools.iter().any(|t| t == "exec_command") {
        // Not a login shell: /etc/profile would reset the test's PATH.
        call("exec_command", json!({"cmd": cmd, "login": false}))
    } else if tools.iter().any(|t| t == "shell") {
        call("shell", json!({"command": ["bash", "-c", cmd]}))
    } else {
        json!({"type": "local_shell_call", "id": format!("lsh_{id:04}"),
            "call_id": format!("call_{id:04}"), "status": "completed",
            "action": {"type": "exec", "command": ["bash", "-c", cmd]}})
    }
}

/// The chat-completions stream for a step: one `chat.completion.chunk` per `data:` line, a
/// usage chunk, then `[DONE]`. A JSON answer is a `structured_output` tool call when the
/// request offers that tool (Qwen Code's `--json-schema`), its text otherwise.
fn chat_events(request: &Request, step: &Step, model: &str, id: u64) -> Vec<(String, Value)> {
    let u = step.usage;
    let chunk = |delta: Value, finish: Value| {
        json!({"id": format!("chatcmpl-{id:04}"), "object": "chat.completion.chunk",
            "created": 1_796_000_000, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let tool_call = |name: &str, args: &Value| {
        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
            "id": format!("call_{id:04}"), "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]})
    };
    let offers = |tool: &str| request.tool_names().iter().any(|t| t == tool);
    let (delta, finish) = match &step.reply {
        Reply::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Reply::Json(v) if offers("structured_output") => {
            (tool_call("structured_output", v), "tool_calls")
        }
        Reply::Json(v) => (
            json!({"role": "assistant", "content": v.to_string()}),
            "stop",
        ),
        Reply::Tool(name, input) => (tool_call(name, input), "tool_calls"),
        Reply::Shell(cmd) => (tool_call("bash", &json!({"command": cmd})), "tool_calls"),
        Reply::Drop | Reply::Stall => (json!({"role": "assistant", "content": "partial"}), "stop"),
        Reply::Empty | Reply::Status(_) => (json!({"role": "assistant", "content": ""}), "stop"),
    };
    let mut usage = chunk(json!({}), Value::Null);
    usage["choices"] = json!([]);
    usage["usage"] = json!({"prompt_tokens": u.input + u.cache_read,
        "completion_tokens": u.output, "total_tokens": u.input + u.cache_read + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read}});
    vec![
        ("chunk".to_owned(), chunk(delta, Value::Null)),
        ("chunk".to_owned(), chunk(json!({}), json!(finish))),
        ("usage".to_owned(), usage),
        ("done".to_owned(), Value::Null),
    ]
}

/// Gemini's answer for a step: one `GenerateContentResponse` (a stream of one chunk).
fn gemini_events(step: &Step, model: &str) -> Vec<(String, Value)> {
    let u = step.usage;
    let parts = match &step.reply {
        Reply::Text(text) => json!([{"text": text}]),
        Reply::Json(v) => json!([{"text": v.to_string()}]),
        Reply::Tool(name, input) => json!([{"functionCall": {"name": name, "args": input}}]),
        Reply::Shell(cmd) => {
            json!([{"functionCall": {"name": "run_shell_command", "args": {"command": cmd}}}])
        }
        Reply::Drop | Reply::Stall => json!([{"text": "partial"}]),
        Reply::Empty | Reply::Status(_) => json!([]),
    };
    vec![(
        "chunk".to_owned(),
        json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": u.input + u.cache_read,
                "cachedContentTokenCount": u.cache_read,
                "candidatesTokenCount": u.output,
                "totalTokenCount": u.input + u.cache_read + u.output},
            "modelVersion": model, "responseId": format!("resp-{model}")}),
    )]
}

/// The non-streaming object of a chat-completions or Gemini answer.
fn fold_json(api: Api, events: &[(String, Value)]) -> Value {
    let first = events
        .first()
        .map(|(_, d)| d.clone())
        .unwrap_or(Value::Null);
    if api == Api::Gemini {
        return first;
    }
    let mut message = first["choices"][0]["delta"].clone();
    if let Some(calls) = message.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for call in calls {
            if let Some(o) = call.as_object_mut() {
                o.remove("index");
            }
        }
    }
    let finish = events.get(1).map_or(Value::Null, |(_, d)| {
        d["choices"][0]["finish_reason"].clone()
    });
    let usage = events
        .get(2)
        .map_or(Value::Null, |(_, d)| d["usage"].clone());
    json!({"id": first["id"], "object": "chat.completion", "created": first["created"],
        "model": first["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage})
}
