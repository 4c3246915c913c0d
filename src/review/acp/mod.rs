//! The `acp` realization: git pair as an Agent Client Protocol client of any ACP agent
//! (`pair.acpCommand`), over the agent's stdin and stdout, blocking, with a reader thread.
//! One attempt is `initialize` → `session/new` (or `session/load`, only when the agent
//! advertises `loadSession`) → one `session/prompt` carrying the review packet; the answer is
//! the text of the `agent_message_chunk` updates streamed during that prompt, read only when
//! the turn ended with `end_turn`. The agent may read files through git pair only inside the
//! reviewed snapshot ([`sandbox`]); writes, terminals and permissions are refused. A timeout
//! sends `session/cancel`, then ends the process group. The wire types are the protocol's
//! published ones (`agent_client_protocol_schema`); the framing is [`rpc`]. Prints nothing.

pub mod rpc;
pub mod sandbox;

use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1 as acp;
use agent_client_protocol_schema::{MethodDispatchError, ProtocolVersion};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::process::{self, Cancel, Duplex, Spawn};

/// The longest line (one JSON-RPC message) read from an agent; a longer one ends the attempt.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;
/// The most answer text kept; an answer that goes over is cut, and a cut answer is never read.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;
/// The largest file the agent may read whole through `fs/read_text_file`.
pub const MAX_READ_BYTES: u64 = 1024 * 1024;
/// How long a cancelled turn has to end before the agent is killed.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// How long an agent has to exit by itself once its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_millis(500);
/// The agent's words kept in a warning or message.
const WORDS: usize = 300;

/// What an agent said of itself in answer to `initialize` (what `git pair probe` shows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// Its name (`agentInfo.name`), when it gave one.
    pub name: Option<String>,
    /// Its version, when it gave one.
    pub version: Option<String>,
    /// The protocol version it answered with.
    pub protocol_version: u16,
    /// It can resume a session (`agentCapabilities.loadSession`).
    pub load_session: bool,
}

impl AgentInfo {
    /// `claude-agent-acp 0.23.1, ACP 1, loadSession`, for a probe line.
    pub fn describe(&self) -> String {
        let who = match (&self.name, &self.version) {
            (Some(n), Some(v)) => format!("{n} {v}"),
            (Some(n), None) => n.clone(),
            _ => "an unnamed agent".to_owned(),
        };
        let load = if self.load_session {
            ", loadSession"
        } else {
            ""
        };
        format!(
            "{}, ACP {}{load}",
            crate::util::first_line_clipped(&who, 120),
            self.protocol_version
        )
    }
}

/// The capabilities git pair advertises: it reads text files (from the reviewed snapshot
/// only), writes none, and offers no terminal.
fn client_capabilities() -> acp::ClientCapabilities {
    acp::ClientCapabilities::new()
        .fs(acp::FileSystemCapabilities::new()
            .read_text_file(true)
            .write_text_file(false))
        .terminal(false)
}

fn initialize_request() -> acp::InitializeRequest {
    acp::InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(client_capabilities())
        .client_info(acp::Implementation::new(
            "git-pair",
            env!("CARGO_PKG_VERSION"),
        ))
}

/// Why a conversation stopped before the answer it waited for.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    TimedOut,
    Cancelled,
    /// The agent closed its stdout (it exited).
    Closed,
    /// It sent a line over [`MAX_LINE_BYTES`].
    TooLong(usize),
    /// Its stdin could not be written (it exited).
    Write(String),
    /// An answer that is not what the protocol says it is.
    Protocol(String),
}

impl Stop {
    /// What happened, in words.
    pub fn says(&self) -> String {
        match self {
            Stop::TimedOut => "timed out".into(),
            Stop::Cancelled => "cancelled".into(),
            Stop::Closed => "the agent exited before answering".into(),
            Stop::TooLong(limit) => {
                format!("the agent sent a message over the {limit}-byte line limit")
            }
            Stop::Write(e) => format!("cannot write to the agent: {e}"),
            Stop::Protocol(e) => format!("the agent broke the protocol: {e}"),
        }
    }
}

/// How often to say the agent is still running, when it last was said, to whom, as whom.
type Heartbeat<'a> = (Duration, Instant, &'a (dyn Fn(&str) + Sync), String);

/// One conversation with a running agent.
struct Conversation<'a> {
    agent: Duplex,
    stdin: std::process::ChildStdin,
    events: Receiver<rpc::Event>,
    next_id: i64,
    deadline: Instant,
    sandbox: Option<sandbox::Sandbox>,
    /// Every line the agent sent, up to a cap: the attempt's raw material.
    transcript: Vec<u8>,
    transcript_bytes: u64,
    transcript_cap: usize,
    /// The session whose updates are the answer, while the prompt runs.
    collecting: Option<String>,
    answer: String,
    answer_cut: bool,
    cost_usd: Option<f64>,
    /// `session/cancel` was sent: permission requests are answered `cancelled`.
    cancel_sent: bool,
    warnings: Vec<String>,
    ignored_lines: usize,
    heartbeat: Option<Heartbeat<'a>>,
    started: Instant,
    session_id: Option<String>,
    session_id_refused: Option<String>,
    resumed: bool,
}

impl Conversation<'_> {
    /// Sends request `method` and waits for its answer, answering the agent's own requests
    /// and reading its notifications meanwhile.
    fn call(
        &mut self,
        method: &str,
        params: &impl Serialize,
    ) -> Result<Result<Value, acp::Error>, Stop> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&rpc::request(id, method, params))?;
        self.wait_for(id)
    }

    fn wait_for(&mut self, id: i64) -> Result<Result<Value, acp::Error>, Stop> {
        loop {
            match self.next_message()? {
                rpc::Incoming::Response {
                    id: acp::RequestId::Number(n),
                    result,
                } if n == id => return Ok(result),
                rpc::Incoming::Response { .. } => {}
                rpc::Incoming::Request { id, method, params } => {
                    let answer = self.answer_request(&method, &params);
                    self.send(&rpc::response(&id, answer))?;
                }
                rpc::Incoming::Notification { method, params } => self.notice(&method, &params),
            }
        }
    }

    fn send(&mut self, message: &[u8]) -> Result<(), Stop> {
        rpc::send(&mut self.stdin, message).map_err(|e| Stop::Write(e.to_string()))
    }

    fn next_message(&mut self) -> Result<rpc::Incoming, Stop> {
        loop {
            if self.agent.cancelled() {
                return Err(Stop::Cancelled);
            }
            let now = Instant::now();
            if now >= self.deadline {
                return Err(Stop::TimedOut);
            }
            if let Some((every, last, progress, label)) = &mut self.heartbeat
                && now.duration_since(*last) >= *every
            {
                *last = now;
                progress(&format!(
                    "{label}: still running ({} s)…",
                    now.duration_since(self.started).as_secs()
                ));
            }
            let wait = (self.deadline - now).min(Duration::from_millis(100));
            match self.events.recv_timeout(wait) {
                Ok(rpc::Event::Line(line)) => {
                    self.keep(&line);
                    match rpc::parse(&line) {
                        Ok(message) => return Ok(message),
                        // Not the protocol (a log line on stdout): kept in the transcript,
                        // never read as anything.
                        Err(_) => self.ignored_lines += 1,
                    }
                }
                Ok(rpc::Event::TooLong { limit }) => return Err(Stop::TooLong(limit)),
                Ok(rpc::Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(Stop::Closed);
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    fn keep(&mut self, line: &[u8]) {
        self.transcript_bytes += line.len() as u64 + 1;
        if self.transcript.len() + line.len() < self.transcript_cap {
            self.transcript.extend_from_slice(line);
            self.transcript.push(b'\n');
        }
    }

    /// The answer to a request the agent made of git pair.
    fn answer_request(&mut self, method: &str, params: &Value) -> Result<Value, acp::Error> {
        let request = match acp::AgentRequest::from_method_and_params(method, params) {
            Ok(request) => request,
            Err(MethodDispatchError::InvalidPayload { .. }) => {
                return Err(acp::Error::invalid_params());
            }
            Err(_) => return Err(acp::Error::method_not_found()),
        };
        match request {
            acp::AgentRequest::ReadTextFileRequest(read) => {
                let Some(sandbox) = &self.sandbox else {
                    return Err(refused("no reviewed snapshot to read from".into()));
                };
                match sandbox.read(&read.path, read.line, read.limit) {
                    Ok(text) => to_value(&acp::ReadTextFileResponse::new(text)),
                    Err(refusal) => {
                        self.warn(format!("refused the agent's fs/read_text_file: {refusal}"));
                        Err(refused(refusal.to_string()))
                    }
                }
            }
            acp::AgentRequest::WriteTextFileRequest(write) => {
                self.warn(format!(
                    "refused the agent's fs/write_text_file of {}: a reviewer writes nothing",
                    write.path.display()
                ));
                Err(refused(
                    "refused: this client is read-only (a reviewer writes nothing)".into(),
                ))
            }
            acp::AgentRequest::RequestPermissionRequest(ask) => {
                let what = ask
                    .tool_call
                    .fields
                    .title
                    .clone()
                    .unwrap_or_else(|| ask.tool_call.tool_call_id.to_string());
                self.warn(format!(
                    "rejected the agent's permission request: {}",
                    crate::util::first_line_clipped(&what, WORDS)
                ));
                to_value(&acp::RequestPermissionResponse::new(reject(
                    &ask.options,
                    self.cancel_sent,
                )))
            }
            // No terminal is offered, and nothing else is this client's to do.
            _ => Err(acp::Error::method_not_found()),
        }
    }

    /// A notification: during the prompt, the session's message chunks are the answer.
    fn notice(&mut self, method: &str, params: &Value) {
        let Ok(acp::AgentNotification::SessionNotification(update)) =
            acp::AgentNotification::from_method_and_params(method, params)
        else {
            return;
        };
        match update.update {
            acp::SessionUpdate::AgentMessageChunk(chunk)
                if self.collecting.as_deref() == Some(&*update.session_id.0) =>
            {
                if let acp::ContentBlock::Text(text) = chunk.content {
                    if self.answer.len() + text.text.len() > MAX_ANSWER_BYTES {
                        self.answer_cut = true;
                    } else if !self.answer_cut {
                        self.answer.push_str(&text.text);
                    }
                }
            }
            acp::SessionUpdate::UsageUpdate(usage) => {
                if let Some(cost) = usage.cost
                    && cost.currency.eq_ignore_ascii_case("USD")
                    && cost.amount.is_finite()
                    && cost.amount >= 0.0
                {
                    self.cost_usd = Some(cost.amount);
                }
            }
            _ => {}
        }
    }

    fn warn(&mut self, warning: String) {
        // Bounded: an agent asking a thousand times is told no a thousand times, once noted.
        if self.warnings.len() < 20 {
            self.warnings.push(warning);
        }
    }
}

/// The reject option the agent offered (once before always), else `cancelled`; always
/// `cancelled` once the turn was cancelled, as the protocol asks.
fn reject(options: &[acp::PermissionOption], cancel_sent: bool) -> acp::RequestPermissionOutcome {
    let pick = |kind| options.iter().find(|o| o.kind == kind);
    match pick(acp::PermissionOptionKind::RejectOnce)
        .or_else(|| pick(acp::PermissionOptionKind::RejectAlways))
    {
        Some(option) if !cancel_sent => acp::RequestPermissionOutcome::Selected(
            acp::SelectedPermissionOutcome::new(option.option_id.clone()),
        ),
        _ => acp::RequestPermissionOutcome::Cancelled,
    }
}

fn refused(message: String) -> acp::Error {
    let mut error = acp::Error::invalid_params();
    error.message = message;
    error
}

fn to_value(value: &impl Serialize) -> Result<Value, acp::Error> {
    serde_json::to_value(value).map_err(|_| acp::Error::internal_error())
}

/// One review through an ACP agent: what to run and what to ask.
pub struct Call<'a> {
    /// The agent's command line and environment; `cwd` is the reviewed snapshot, the one
    /// directory its file reads are answered from.
    pub spawn: Spawn,
    /// The review packet, sent as one text block.
    pub prompt: &'a str,
    /// The last round's session, loaded when the agent advertises `loadSession`.
    pub resume_session_id: Option<&'a str>,
    /// Whether a session id fits the realization's declared shape.
    pub session_id_fits: &'a dyn Fn(&str) -> bool,
    /// Bound on the whole conversation.
    pub timeout: Duration,
    /// SIGTERM → SIGKILL grace for the agent's process group.
    pub kill_grace: Duration,
    /// Stderr bytes kept from the end.
    pub stderr_tail: usize,
    /// Bytes of the agent's stdout kept as the attempt's raw material.
    pub transcript_cap: usize,
    /// A caller's flag and/or Ctrl-C.
    pub cancel: Cancel,
    /// Told the agent's pid once it started.
    pub on_start: &'a dyn Fn(process::Started),
    /// How often `progress` hears that the agent is still running, as `label`.
    pub heartbeat: Duration,
    pub label: String,
    pub progress: &'a (dyn Fn(&str) + Sync),
}

/// Everything one review conversation showed.
#[derive(Debug)]
pub struct Conversed {
    /// How the prompt turn ended.
    pub turn: Turn,
    /// The text streamed during the prompt turn (up to [`MAX_ANSWER_BYTES`]).
    pub answer: String,
    /// The answer went over [`MAX_ANSWER_BYTES`]: it is cut and must not be read.
    pub answer_cut: bool,
    /// The session reviewed in, when its id fits the declared shape.
    pub session_id: Option<String>,
    /// Why the agent's session id was not kept.
    pub session_id_refused: Option<String>,
    /// The last round's session was loaded.
    pub resumed: bool,
    /// The session's cost in USD, from the agent's last `usage_update`.
    pub cost_usd: Option<f64>,
    /// What git pair refused the agent, and other notes.
    pub warnings: Vec<String>,
    /// The agent's stdout lines (up to the cap), and how many bytes it wrote in all.
    pub transcript: Vec<u8>,
    pub transcript_bytes: u64,
    /// How the agent's process ended.
    pub status: Option<process::ExitInfo>,
    pub stderr_tail: Vec<u8>,
    pub stderr_bytes: u64,
    pub duration: Duration,
}

impl Conversed {
    fn not_started(message: String) -> Conversed {
        Conversed {
            turn: Turn::NotStarted(message),
            answer: String::new(),
            answer_cut: false,
            session_id: None,
            session_id_refused: None,
            resumed: false,
            cost_usd: None,
            warnings: Vec::new(),
            transcript: Vec::new(),
            transcript_bytes: 0,
            status: None,
            stderr_tail: Vec::new(),
            stderr_bytes: 0,
            duration: Duration::ZERO,
        }
    }
}

/// Runs one review conversation with an ACP agent. Never fails: how it ended is its
/// [`Turn`].
pub fn review(call: &Call<'_>) -> Conversed {
    let Some(root) = call.spawn.cwd.as_deref() else {
        return Conversed::not_started(
            "the ACP reviewer has no reviewed snapshot to run in".into(),
        );
    };
    let Some(sandbox) = sandbox::Sandbox::new(root, MAX_READ_BYTES) else {
        return Conversed::not_started(format!(
            "cannot resolve the reviewed snapshot directory {}",
            root.display()
        ));
    };
    let spawn = Spawn {
        cwd: Some(sandbox.root().to_path_buf()),
        ..call.spawn.clone()
    };
    let started = Instant::now();
    let mut agent =
        match process::spawn_duplex(&spawn, call.stderr_tail, &call.cancel, call.on_start) {
            Ok(agent) => agent,
            Err(message) => return Conversed::not_started(message),
        };
    let (Some(stdin), Some(stdout)) = (agent.stdin.take(), agent.stdout.take()) else {
        return Conversed::not_started("the agent's pipes could not be opened".into());
    };
    let mut talk = Conversation {
        agent,
        stdin,
        events: rpc::read_lines(stdout, MAX_LINE_BYTES),
        next_id: 1,
        deadline: started + call.timeout,
        sandbox: Some(sandbox),
        transcript: Vec::new(),
        transcript_bytes: 0,
        transcript_cap: call.transcript_cap,
        collecting: None,
        answer: String::new(),
        answer_cut: false,
        cost_usd: None,
        cancel_sent: false,
        warnings: Vec::new(),
        ignored_lines: 0,
        heartbeat: Some((call.heartbeat, started, call.progress, call.label.clone())),
        started,
        session_id: None,
        session_id_refused: None,
        resumed: false,
    };
    let turn = converse(&mut talk, call);
    finish(talk, turn, call.kill_grace, started)
}

/// How the prompt turn ended.
#[derive(Debug)]
pub enum Turn {
    /// The agent could not be started (or asked): why.
    NotStarted(String),
    /// The prompt was answered: its stop reason and the usage it reported.
    Answered {
        stop: acp::StopReason,
        usage: Option<Value>,
    },
    /// An ACP call was answered with an error.
    Refused {
        call: &'static str,
        error: acp::Error,
    },
    /// The conversation stopped.
    Stopped { during: &'static str, stop: Stop },
}

fn converse(talk: &mut Conversation<'_>, call: &Call<'_>) -> Turn {
    let init = match talk.call("initialize", &initialize_request()) {
        Ok(Ok(value)) => value,
        Ok(Err(error)) => {
            return Turn::Refused {
                call: "initialize",
                error,
            };
        }
        Err(stop) => {
            return Turn::Stopped {
                during: "initialize",
                stop,
            };
        }
    };
    let info = match agent_info(&init) {
        Ok(info) => info,
        Err(e) => {
            return Turn::Stopped {
                during: "initialize",
                stop: Stop::Protocol(e),
            };
        }
    };
    let cwd = talk
        .sandbox
        .as_ref()
        .map(|s| s.root().to_path_buf())
        .unwrap_or_default();
    let mut session = None;
    if let Some(id) = call.resume_session_id
        && (call.session_id_fits)(id)
    {
        if info.load_session {
            let load = acp::LoadSessionRequest::new(id.to_owned(), cwd.clone());
            match talk.call("session/load", &load) {
                Ok(Ok(_)) => {
                    session = Some(id.to_owned());
                    talk.resumed = true;
                }
                Ok(Err(error)) => talk.warn(format!(
                    "the agent could not load session {id} ({}); a new session reviews",
                    clip(&error.message)
                )),
                Err(stop) => {
                    return Turn::Stopped {
                        during: "session/load",
                        stop,
                    };
                }
            }
        } else {
            talk.warn("the agent does not advertise loadSession: a new session reviews".into());
        }
    }
    let session = match session {
        Some(id) => id,
        None => match talk.call("session/new", &acp::NewSessionRequest::new(cwd)) {
            Ok(Ok(value)) => match serde_json::from_value::<acp::NewSessionResponse>(value) {
                Ok(new) => new.session_id.0.to_string(),
                Err(e) => {
                    return Turn::Stopped {
                        during: "session/new",
                        stop: Stop::Protocol(format!("session/new answer: {e}")),
                    };
                }
            },
            Ok(Err(error)) => {
                return Turn::Refused {
                    call: "session/new",
                    error,
                };
            }
            Err(stop) => {
                return Turn::Stopped {
                    during: "session/new",
                    stop,
                };
            }
        },
    };
    if (call.session_id_fits)(&session) {
        talk.session_id = Some(session.clone());
    } else {
        talk.session_id_refused = Some(format!(
            "the agent's session id {:?} does not fit the acp session_id_shape",
            clip(&session)
        ));
    }
    talk.collecting = Some(session.clone());
    let prompt = acp::PromptRequest::new(
        session.clone(),
        vec![acp::ContentBlock::Text(acp::TextContent::new(call.prompt))],
    );
    let id = talk.next_id;
    let result = talk.call("session/prompt", &prompt);
    let result = match result {
        Err(stop @ (Stop::TimedOut | Stop::Cancelled)) => {
            // Ask the agent to stop, and give it a moment to say it did (answering its
            // permission requests `cancelled` meanwhile); whatever it says is no answer.
            talk.cancel_sent = true;
            let note = rpc::notification(
                "session/cancel",
                &acp::CancelNotification::new(session.clone()),
            );
            if talk.send(&note).is_ok() {
                talk.deadline = Instant::now() + CANCEL_GRACE;
                let _ = talk.wait_for(id);
            }
            return Turn::Stopped {
                during: "session/prompt",
                stop,
            };
        }
        other => other,
    };
    talk.collecting = None;
    match result {
        Ok(Ok(value)) => {
            let usage = value.get("usage").filter(|u| u.is_object()).cloned();
            match serde_json::from_value::<acp::PromptResponse>(value) {
                Ok(response) => Turn::Answered {
                    stop: response.stop_reason,
                    usage,
                },
                Err(e) => Turn::Stopped {
                    during: "session/prompt",
                    stop: Stop::Protocol(format!("session/prompt answer: {e}")),
                },
            }
        }
        Ok(Err(error)) => Turn::Refused {
            call: "session/prompt",
            error,
        },
        Err(stop) => Turn::Stopped {
            during: "session/prompt",
            stop,
        },
    }
}

/// Reads the `initialize` answer: the agent must speak protocol version 1.
fn agent_info(value: &Value) -> Result<AgentInfo, String> {
    let response: acp::InitializeResponse =
        serde_json::from_value(value.clone()).map_err(|e| format!("initialize answer: {e}"))?;
    let version = response.protocol_version.as_u16();
    if response.protocol_version != ProtocolVersion::V1 {
        return Err(format!(
            "the agent speaks ACP version {version}; git pair speaks version 1"
        ));
    }
    Ok(AgentInfo {
        name: response.agent_info.as_ref().map(|i| i.name.clone()),
        version: response.agent_info.as_ref().map(|i| i.version.clone()),
        protocol_version: version,
        load_session: response.agent_capabilities.load_session,
    })
}

/// `text`'s first line, clipped for a message.
pub fn clip(text: &str) -> String {
    crate::util::first_line_clipped(text, WORDS)
}

/// Ends the agent: what the conversation showed.
fn finish(talk: Conversation<'_>, turn: Turn, grace: Duration, started: Instant) -> Conversed {
    let Conversation {
        mut agent,
        stdin,
        transcript,
        transcript_bytes,
        answer,
        answer_cut,
        cost_usd,
        mut warnings,
        ignored_lines,
        session_id,
        session_id_refused,
        resumed,
        ..
    } = talk;
    drop(stdin);
    if matches!(turn, Turn::Answered { .. } | Turn::Refused { .. }) {
        agent.wait_exit(EXIT_GRACE);
    }
    let (status, stderr_tail, stderr_bytes, _) = agent.end(grace);
    if ignored_lines > 0 {
        warnings.push(format!(
            "ignored {ignored_lines} line(s) of the agent's stdout that were not JSON-RPC"
        ));
    }
    Conversed {
        turn,
        answer,
        answer_cut,
        session_id,
        session_id_refused,
        resumed,
        cost_usd,
        warnings,
        transcript,
        transcript_bytes,
        status,
        stderr_tail,
        stderr_bytes,
        duration: started.elapsed(),
    }
}

/// Starts the agent, asks `initialize`, and ends it: what `git pair probe` shows. `Err` says
/// why the agent could not be asked, or what it answered instead.
pub fn handshake(
    program: &Path,
    args: &[String],
    env_allow: Vec<String>,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    timeout: Duration,
) -> Result<AgentInfo, String> {
    let cwd = tempfile::Builder::new()
        .prefix("git-pair-acp-probe-")
        .tempdir()
        .map_err(|e| format!("cannot create a directory for the probe: {e}"))?;
    let mut agent = process::spawn_duplex(
        &Spawn {
            program: program.to_path_buf(),
            args: args.to_vec(),
            env,
            env_allow: Some(env_allow),
            cwd: Some(cwd.path().to_path_buf()),
            stdin: None,
            share_terminal: false,
        },
        64 * 1024,
        &Cancel::default(),
        &|_| {},
    )?;
    let (Some(mut stdin), Some(stdout)) = (agent.stdin.take(), agent.stdout.take()) else {
        return Err("the agent's pipes could not be opened".into());
    };
    let events = rpc::read_lines(stdout, MAX_LINE_BYTES);
    let deadline = Instant::now() + timeout;
    let sent = rpc::send(
        &mut stdin,
        &rpc::request(1, "initialize", &initialize_request()),
    );
    let answer = match sent {
        Err(e) => Err(format!("cannot write to the agent: {e}")),
        Ok(()) => loop {
            let now = Instant::now();
            if now >= deadline {
                break Err(format!(
                    "no initialize answer within {} s",
                    timeout.as_secs()
                ));
            }
            match events.recv_timeout(deadline - now) {
                Ok(rpc::Event::Line(line)) => match rpc::parse(&line) {
                    Ok(rpc::Incoming::Response {
                        id: acp::RequestId::Number(1),
                        result,
                    }) => {
                        break result.map_err(|e| {
                            format!("the agent refused initialize: {}", clip(&e.message))
                        });
                    }
                    Ok(rpc::Incoming::Request { id, .. }) => {
                        let _ = rpc::send(
                            &mut stdin,
                            &rpc::response(&id, Err(acp::Error::method_not_found())),
                        );
                    }
                    _ => {}
                },
                Ok(rpc::Event::TooLong { limit }) => {
                    break Err(format!("the agent sent a line over {limit} bytes"));
                }
                Ok(rpc::Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    break Err("the agent exited without answering initialize".into());
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        },
    };
    drop(stdin);
    let (status, stderr, _, _) = agent.end(Duration::from_millis(500));
    let info = answer.and_then(|value| agent_info(&value));
    info.map_err(|e| {
        let last = String::from_utf8_lossy(&stderr)
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| format!("; it said: {}", clip(l)))
            .unwrap_or_default();
        let exit = status.map(|s| format!(" ({s})")).unwrap_or_default();
        format!("{e}{exit}{last}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(id: &str, kind: acp::PermissionOptionKind) -> acp::PermissionOption {
        acp::PermissionOption::new(id.to_owned(), id.to_owned(), kind)
    }

    #[test]
    fn permission_requests_are_rejected() {
        use acp::PermissionOptionKind::*;
        let offered = vec![
            option("allow", AllowOnce),
            option("always", AllowAlways),
            option("no-always", RejectAlways),
            option("no", RejectOnce),
        ];
        let selected = |o: acp::RequestPermissionOutcome| match o {
            acp::RequestPermissionOutcome::Selected(s) => Some(s.option_id.to_string()),
            _ => None,
        };
        assert_eq!(selected(reject(&offered, false)).as_deref(), Some("no"));
        assert_eq!(
            selected(reject(&offered[..3], false)).as_deref(),
            Some("no-always")
        );
        assert_eq!(
            selected(reject(&offered[..2], false)),
            None,
            "no reject offered: cancelled"
        );
        assert_eq!(
            selected(reject(&offered, true)),
            None,
            "after session/cancel: cancelled"
        );
    }

    #[test]
    fn the_client_offers_reading_only() {
        let caps = serde_json::to_value(client_capabilities()).expect("json");
        assert_eq!(caps["fs"]["readTextFile"], true);
        assert_eq!(caps["fs"]["writeTextFile"], false);
        assert_eq!(caps["terminal"], false);
        let init = serde_json::to_value(initialize_request()).expect("json");
        assert_eq!(init["protocolVersion"], 1);
        assert_eq!(init["clientInfo"]["name"], "git-pair");
    }

    #[test]
    fn only_protocol_version_one_is_spoken() {
        let v1 = serde_json::json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": true}, "agentInfo": {"name": "a", "version": "2"}});
        let info = agent_info(&v1).expect("v1");
        assert!(info.load_session);
        assert_eq!(info.describe(), "a 2, ACP 1, loadSession");
        let v2 = serde_json::json!({"protocolVersion": 2});
        assert!(agent_info(&v2).is_err_and(|e| e.contains("version 2")));
        assert!(agent_info(&serde_json::json!({"x": 1})).is_err());
    }
}
