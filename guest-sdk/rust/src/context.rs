//! The request a handler serves and its channel to the client.

use crate::error::{ClientError, Error, CODE_HTTP_FAILED};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{BufRead, Write};

/// A message read from stdin: a request, a notification or a response.
#[derive(Deserialize)]
pub(crate) struct Incoming {
    #[serde(default, deserialize_with = "present")]
    pub id: Option<Value>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub result: Option<Value>,
    #[serde(default)]
    pub error: Option<WireError>,
}

/// A member that is present counts even when it is null.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A JSON-RPC error object as read from stdin.
#[derive(Deserialize)]
pub(crate) struct WireError {
    #[serde(default)]
    pub code: i64,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub data: Option<Value>,
}

/// The guest's side of one instance's stdin and stdout.
pub(crate) struct Session {
    input: Box<dyn BufRead>,
    output: Box<dyn Write>,
    diag: Option<Box<dyn Write>>,
    write_err: Option<String>,
    read_err: Option<String>,
    closed: bool,
    stash: HashMap<String, Incoming>,
    next_id: u64,
}

impl Session {
    pub(crate) fn new(input: Box<dyn BufRead>, output: Box<dyn Write>, diag: Option<Box<dyn Write>>) -> Session {
        Session { input, output, diag, write_err: None, read_err: None, closed: false, stash: HashMap::new(), next_id: 0 }
    }

    /// Reads the next non-blank line; None at end of input.
    pub(crate) fn read_line(&mut self) -> Result<Option<Vec<u8>>, String> {
        loop {
            let mut line = Vec::new();
            match self.input.read_until(b'\n', &mut line) {
                Ok(0) => return Ok(None),
                Ok(_) => {
                    if line.iter().any(|b| !b.is_ascii_whitespace()) {
                        return Ok(Some(line));
                    }
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// Writes one message as one line and flushes it.
    pub(crate) fn write(&mut self, msg: &Value) -> Result<(), String> {
        if self.closed {
            return Err("the response was already sent".into());
        }
        if let Some(e) = &self.write_err {
            return Err(e.clone());
        }
        let mut line = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        line.push(b'\n');
        if let Err(e) = self.output.write_all(&line).and_then(|_| self.output.flush()) {
            self.write_err = Some(format!("writing to stdout: {}", e));
            return Err(e.to_string());
        }
        Ok(())
    }

    pub(crate) fn notify(&mut self, method: &str, params: Value) {
        let _ = self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Writes the final response and closes the output.
    pub(crate) fn respond(&mut self, msg: &Value) {
        let _ = self.write(msg);
        self.closed = true;
    }

    pub(crate) fn write_error(&self) -> Option<String> {
        self.write_err.clone()
    }

    pub(crate) fn log(&mut self, text: &str) {
        if let Some(d) = self.diag.as_mut() {
            let _ = writeln!(d, "{}", text);
        }
    }

    fn next_id(&mut self) -> String {
        self.next_id += 1;
        self.next_id.to_string()
    }

    /// Reads stdin until the response with the given id key arrives
    /// (responses to other requests are kept for their waiters). Lines that
    /// are not responses are ignored.
    fn await_response(&mut self, key: &str) -> Result<Incoming, String> {
        loop {
            if let Some(m) = self.stash.remove(key) {
                return Ok(m);
            }
            if let Some(e) = &self.read_err {
                return Err(e.clone());
            }
            match self.read_line() {
                Ok(Some(line)) => match serde_json::from_slice::<Incoming>(&line) {
                    Err(_) => self.log("ignoring a malformed line on stdin"),
                    Ok(m) if m.method.is_some() || m.id.is_none() || (m.result.is_none() && m.error.is_none()) => {
                        self.log("ignoring a message on stdin that is not a response")
                    }
                    Ok(m) => {
                        let k = id_key(m.id.as_ref().expect("checked"));
                        self.stash.insert(k, m);
                    }
                },
                Ok(None) => self.read_err = Some("stdin closed before the answer arrived".into()),
                Err(e) => self.read_err = Some(e),
            }
        }
    }
}

/// A map key for a JSON-RPC id: equal ids give equal keys whether written
/// as 1, 1.0 or 1e0.
pub(crate) fn id_key(id: &Value) -> String {
    match id {
        Value::Number(n) => match n.as_f64() {
            Some(f) => format!("n:{}", f),
            None => format!("n:{}", n),
        },
        Value::String(s) => format!("s:{}", s),
        other => format!("?{}", other),
    }
}

/// MCP log levels, from least to most severe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Detailed debugging information.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl Level {
    /// The level's MCP name.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Notice => "notice",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
            Level::Alert => "alert",
            Level::Emergency => "emergency",
        }
    }
}

/// The client's answer to an elicitation.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ElicitResult {
    /// `"accept"` (the user submitted the form), `"decline"` (the user
    /// refused) or `"cancel"` (the user dismissed the request).
    pub action: String,
    /// The submitted values when the action is `"accept"`.
    #[serde(default)]
    pub content: Option<Map<String, Value>>,
}

impl ElicitResult {
    /// Whether the user submitted the form.
    pub fn accepted(&self) -> bool {
        self.action == "accept"
    }
    /// The submitted value of one field, as a string.
    pub fn get_str(&self, field: &str) -> Option<&str> {
        self.content.as_ref()?.get(field)?.as_str()
    }
    /// Decodes the submitted content into T.
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, Error> {
        let v = Value::Object(self.content.clone().unwrap_or_default());
        Ok(serde_json::from_value(v)?)
    }
}

/// One message of a sampling request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// `"user"` or `"assistant"`.
    pub role: String,
    /// An MCP content block (text, image, audio).
    pub content: Value,
}

impl SamplingMessage {
    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage { role: "user".into(), content: json!({"type": "text", "text": text.into()}) }
    }
    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> SamplingMessage {
        SamplingMessage { role: "assistant".into(), content: json!({"type": "text", "text": text.into()}) }
    }
}

/// The params of a `sampling/createMessage` request. `messages` and
/// `max_tokens` are required.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SampleParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// A system prompt the client may use.
    #[serde(rename = "systemPrompt", skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The most tokens to sample.
    #[serde(rename = "maxTokens")]
    pub max_tokens: u32,
    /// The sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sequences that stop sampling.
    #[serde(rename = "stopSequences", skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// MCP model preferences (hints, priorities), as JSON.
    #[serde(rename = "modelPreferences", skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    /// `"none"`, `"thisServer"` or `"allServers"`.
    #[serde(rename = "includeContext", skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    /// Provider-specific metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// The client's answer to a sampling request.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SampleResult {
    /// `"assistant"`, usually.
    pub role: String,
    /// The sampled content block.
    pub content: Value,
    /// The model that answered.
    #[serde(default)]
    pub model: String,
    /// Why sampling stopped, e.g. `"endTurn"`.
    #[serde(rename = "stopReason", default)]
    pub stop_reason: Option<String>,
}

impl SampleResult {
    /// The text of a text answer.
    pub fn text(&self) -> Option<&str> {
        if self.content.get("type")?.as_str()? == "text" {
            return self.content.get("text")?.as_str();
        }
        None
    }
}

/// One of the client's roots: a `file://` URI and an optional name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// The root's URI.
    pub uri: String,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// An outbound HTTP request made through the host (`wasmcp/http`, ABI
/// 1.1). Only destinations the module's policy grants are reachable.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HttpRequest {
    /// The HTTP method; `GET` when empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub method: String,
    /// An absolute http or https URL.
    pub url: String,
    /// Header names with their values.
    #[serde(skip_serializing_if = "HashMap::is_empty")]
    pub headers: HashMap<String, Vec<String>>,
    /// A UTF-8 body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A binary body, base64 (at most one of body and body_base64).
    #[serde(rename = "bodyBase64", skip_serializing_if = "Option::is_none")]
    pub body_base64: Option<String>,
    /// A timeout in milliseconds, redirects included.
    #[serde(rename = "timeoutMs", skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// The host's answer to an [`HttpRequest`], after the redirects it
/// followed.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct HttpResponse {
    /// The final status code.
    pub status: u16,
    /// Where the response came from after redirects.
    #[serde(default)]
    pub url: String,
    /// The final response's headers.
    #[serde(default)]
    pub headers: HashMap<String, Vec<String>>,
    /// The body when it is UTF-8 text.
    #[serde(default)]
    pub body: Option<String>,
    /// The body, base64, when it is not.
    #[serde(rename = "bodyBase64", default)]
    pub body_base64: Option<String>,
}

impl HttpResponse {
    /// The body's bytes, whichever way it came.
    pub fn bytes(&self) -> Vec<u8> {
        if let Some(b) = &self.body {
            return b.clone().into_bytes();
        }
        self.body_base64.as_deref().and_then(crate::types::base64_decode).unwrap_or_default()
    }
}

/// What the client declared it can do, as the request's `_meta` carries it
/// (MCP 2026-07-28 puts it on every request). Before that revision the guest
/// does not see the capabilities: `known` is false, and the way to find out
/// is to make the request — a client that cannot answer it gets the guest
/// an error for which [`Error::is_missing_capability`] is true.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientCapabilities {
    /// The request carried the client's capabilities.
    pub known: bool,
    /// `sampling/createMessage`.
    pub sampling: bool,
    /// Sampling with tools.
    pub sampling_tools: bool,
    /// Sampling with includeContext other than "none".
    pub sampling_context: bool,
    /// `elicitation/create` in form mode.
    pub elicitation: bool,
    /// URL-mode elicitation.
    pub elicitation_url: bool,
    /// `roots/list`.
    pub roots: bool,
    /// The capabilities object as the client sent it.
    pub raw: Option<Value>,
}

const METHOD_ELICIT: &str = "elicitation/create";
const METHOD_SAMPLE: &str = "sampling/createMessage";
const METHOD_ROOTS: &str = "roots/list";
const METHOD_HTTP: &str = "wasmcp/http";

/// The request a handler is serving and its channel to the client:
/// progress, log messages, and requests (elicitation, sampling, roots,
/// outbound HTTP) that the host forwards and answers on stdin.
pub struct Context {
    pub(crate) session: RefCell<Session>,
    pub(crate) method: String,
    pub(crate) meta: Option<Value>,
    pub(crate) module: String,
}

impl Context {
    /// The request's method, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The request's `params._meta`, if any.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()?.as_object()
    }

    /// The request's `_meta.progressToken`, if the client wants progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta()?.get("progressToken").filter(|t| !t.is_null())
    }

    /// Sends a `notifications/progress` for the request's progress token;
    /// without a token (the client asked for no progress) it does nothing.
    /// `progress` should increase with every call; `total` is left out when
    /// unknown, as is the message.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let token = match self.progress_token() {
            Some(t) => t.clone(),
            None => return,
        };
        let mut p = Map::new();
        p.insert("progressToken".into(), token);
        p.insert("progress".into(), json!(progress));
        if let Some(t) = total {
            p.insert("total".into(), json!(t));
        }
        if let Some(m) = message {
            p.insert("message".into(), json!(m));
        }
        self.session.borrow_mut().notify("notifications/progress", Value::Object(p));
    }

    /// Sends a `notifications/message` with the level, the module's name as
    /// logger, and data (any JSON value). The host drops messages below the
    /// level the client set. Free text for the host's log only goes to
    /// stderr instead (`eprintln!`).
    pub fn log<T: Serialize>(&self, level: Level, data: T) {
        let data = serde_json::to_value(data).unwrap_or_else(|e| json!(format!("(unencodable log data: {})", e)));
        let p = json!({"level": level.as_str(), "logger": self.module, "data": data});
        self.session.borrow_mut().notify("notifications/message", p);
    }

    /// Tells listening clients that the tool list changed.
    pub fn tools_list_changed(&self) {
        self.session.borrow_mut().notify("notifications/tools/list_changed", json!({}));
    }
    /// Tells listening clients that the prompt list changed.
    pub fn prompts_list_changed(&self) {
        self.session.borrow_mut().notify("notifications/prompts/list_changed", json!({}));
    }
    /// Tells listening clients that the resource list changed.
    pub fn resources_list_changed(&self) {
        self.session.borrow_mut().notify("notifications/resources/list_changed", json!({}));
    }
    /// Tells the clients subscribed to uri that the resource changed; the
    /// host forwards it only for a URI this module serves.
    pub fn resource_updated(&self, uri: &str) {
        self.session.borrow_mut().notify("notifications/resources/updated", json!({ "uri": uri }));
    }

    /// The capabilities in the request's
    /// `_meta["io.modelcontextprotocol/clientCapabilities"]`.
    pub fn client_capabilities(&self) -> ClientCapabilities {
        let caps = match self.meta().and_then(|m| m.get("io.modelcontextprotocol/clientCapabilities")) {
            Some(c @ Value::Object(_)) => c,
            _ => return ClientCapabilities::default(),
        };
        let mut cc = ClientCapabilities { known: true, raw: Some(caps.clone()), ..Default::default() };
        cc.roots = caps.get("roots").is_some();
        if let Some(s) = caps.get("sampling") {
            cc.sampling = true;
            cc.sampling_tools = s.get("tools").is_some();
            cc.sampling_context = s.get("context").is_some();
        }
        if let Some(e) = caps.get("elicitation") {
            cc.elicitation_url = e.get("url").is_some();
            cc.elicitation = e.get("form").is_some() || e.get("url").is_none();
        }
        cc
    }

    /// The state this call left with [`Context::set_state`] in its previous
    /// run; None on a first run. Under MCP 2026-07-28 a call whose requests
    /// must be answered by the client's retry runs again from the start in
    /// a fresh instance; the host keeps the state, sealed against
    /// tampering, and hands it back here.
    pub fn state(&self) -> Option<&Value> {
        self.meta()?.get("wasmcp/state").filter(|v| !v.is_null())
    }

    /// Leaves value for the call's next run, should it end waiting for the
    /// client's input (see [`Context::state`]). The last value set counts.
    /// The state is signed, not encrypted: no secrets.
    pub fn set_state<T: Serialize>(&self, value: &T) -> Result<(), Error> {
        let v = serde_json::to_value(value)?;
        self.session
            .borrow_mut()
            .write(&json!({"jsonrpc": "2.0", "method": "wasmcp/state", "params": {"state": v}}))
            .map_err(Error::msg)
    }

    /// Sends a request under key (None: the SDK's next number).
    fn start(&self, key: Option<&str>, method: &'static str, params: Value) -> Pending<'_> {
        let mut s = self.session.borrow_mut();
        let key = match key {
            None => s.next_id(),
            Some(k) if k.is_empty() || k.bytes().all(|b| b.is_ascii_digit()) => {
                return Pending::failed(self, method, k, format!("request key {:?}: must be non-empty and not all digits (the SDK numbers its own requests)", k));
            }
            Some(k) => k.to_string(),
        };
        let id = if key.bytes().all(|b| b.is_ascii_digit()) { json!(key.parse::<u64>().unwrap_or(0)) } else { json!(key) };
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let send_err = s.write(&msg).err().map(|e| Error::msg(format!("sending {}: {}", method, e)));
        Pending { cx: self, method, key, id, answer: RefCell::new(send_err.map(Err)) }
    }

    /// Sends an `elicitation/create` under key (see [`Context::elicit`])
    /// without waiting for the answer. The key names the request: under
    /// MCP 2026-07-28 it is the key of the client's `inputResponses`, so it
    /// must stay the same from one run of the call to the next.
    pub fn start_elicit(&self, key: &str, message: &str, requested_schema: Value) -> Pending<'_> {
        self.start(Some(key), METHOD_ELICIT, json!({"message": message, "requestedSchema": requested_schema}))
    }

    /// Sends a `sampling/createMessage` under key without waiting.
    pub fn start_sample(&self, key: &str, params: &SampleParams) -> Pending<'_> {
        self.start(Some(key), METHOD_SAMPLE, serde_json::to_value(params).unwrap_or(Value::Null))
    }

    /// Sends a `roots/list` under key without waiting.
    pub fn start_list_roots(&self, key: &str) -> Pending<'_> {
        self.start(Some(key), METHOD_ROOTS, json!({}))
    }

    /// Asks the user, through the client, to fill in a form
    /// (`elicitation/create`) and waits for the answer. requested_schema is
    /// the form's schema, a flat object of primitive properties (or derive
    /// one: `schema::derive::<T>(false)`). A client that cannot elicit
    /// answers with an error ([`Error::client_error`]). The SDK numbers the
    /// request; [`Context::elicit_key`] names it.
    pub fn elicit(&self, message: &str, requested_schema: Value) -> Result<ElicitResult, Error> {
        self.start(None, METHOD_ELICIT, json!({"message": message, "requestedSchema": requested_schema})).elicit()
    }

    /// [`Context::elicit`] under a key the guest chooses.
    pub fn elicit_key(&self, key: &str, message: &str, requested_schema: Value) -> Result<ElicitResult, Error> {
        self.start_elicit(key, message, requested_schema).elicit()
    }

    /// Asks the client's language model for a completion
    /// (`sampling/createMessage`) and waits for the answer.
    pub fn sample(&self, params: &SampleParams) -> Result<SampleResult, Error> {
        self.start(None, METHOD_SAMPLE, serde_json::to_value(params)?).sample()
    }

    /// [`Context::sample`] under a key the guest chooses.
    pub fn sample_key(&self, key: &str, params: &SampleParams) -> Result<SampleResult, Error> {
        self.start_sample(key, params).sample()
    }

    /// Asks the client for its roots (`roots/list`) and waits for them.
    pub fn list_roots(&self) -> Result<Vec<Root>, Error> {
        self.start(None, METHOD_ROOTS, json!({})).roots()
    }

    /// [`Context::list_roots`] under a key the guest chooses.
    pub fn list_roots_key(&self, key: &str) -> Result<Vec<Root>, Error> {
        self.start_list_roots(key).roots()
    }

    /// Makes an outbound HTTP request through the host (ABI 1.1). A
    /// destination the module's policy does not grant fails with an error
    /// whose client error has code [`CODE_HTTP_FAILED`] and data
    /// `{"reason": ...}`; a host without ABI 1.1 answers `-32601`. Under
    /// MCP 2026-07-28, a request made before a question to the client is
    /// made again on every round (abi/README.md, "Outbound HTTP").
    pub fn http(&self, req: &HttpRequest) -> Result<HttpResponse, Error> {
        self.start(None, METHOD_HTTP, serde_json::to_value(req)?).decode(METHOD_HTTP)
    }

    /// Waits until every request has its answer and returns the first
    /// error among them. The answers are then read with each request's
    /// `elicit`, `sample` or `roots`.
    pub fn wait_all(&self, requests: &[&Pending<'_>]) -> Result<(), Error> {
        let mut first = None;
        for p in requests {
            if let Err(e) = p.wait() {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// Whether an HTTP failure's reason is known, for callers that match on it.
pub fn http_failure_reason(err: &Error) -> Option<&str> {
    let c = err.client_error()?;
    if c.code != CODE_HTTP_FAILED {
        return None;
    }
    c.data.as_ref()?.get("reason")?.as_str()
}

/// A request to the client that was sent and whose answer may not have
/// been read yet. Start several, then read their answers in any order (or
/// [`Context::wait_all`]): under MCP 2026-07-28 the host hands the client
/// every question a guest waits for at once, so a guest that starts all it
/// needs before waiting gets one round trip instead of one per question.
pub struct Pending<'c> {
    cx: &'c Context,
    method: &'static str,
    key: String,
    id: Value,
    answer: RefCell<Option<Result<Value, Error>>>,
}

impl<'c> Pending<'c> {
    fn failed(cx: &'c Context, method: &'static str, key: &str, err: String) -> Pending<'c> {
        Pending { cx, method, key: key.to_string(), id: Value::Null, answer: RefCell::new(Some(Err(Error::msg(err)))) }
    }

    /// The request's key (its JSON-RPC id as text).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Reads the answer once: the result, or the client's error.
    fn wait(&self) -> Result<Value, Error> {
        if let Some(a) = self.answer.borrow().as_ref() {
            return a.clone();
        }
        let got = self.cx.session.borrow_mut().await_response(&id_key(&self.id));
        let a = match got {
            Err(e) => Err(Error::msg(format!("waiting for the answer to {}: {}", self.method, e))),
            Ok(m) => match (m.error, m.result) {
                (Some(e), _) => Err(ClientError { method: self.method.to_string(), code: e.code, message: e.message, data: e.data }.into()),
                (None, Some(r)) => Ok(r),
                (None, None) => Err(Error::msg(format!("the answer to {} has no result", self.method))),
            },
        };
        *self.answer.borrow_mut() = Some(a.clone());
        a
    }

    fn decode<T: serde::de::DeserializeOwned>(&self, method: &str) -> Result<T, Error> {
        if self.method != method {
            return Err(Error::msg(format!("the request {:?} is a {}, not a {}", self.key, self.method, method)));
        }
        let v = self.wait()?;
        serde_json::from_value(v).map_err(|e| Error::msg(format!("decoding the answer to {}: {}", method, e)))
    }

    /// Waits for the answer to a request started with
    /// [`Context::start_elicit`].
    pub fn elicit(&self) -> Result<ElicitResult, Error> {
        self.decode(METHOD_ELICIT)
    }

    /// Waits for the answer to a request started with
    /// [`Context::start_sample`].
    pub fn sample(&self) -> Result<SampleResult, Error> {
        self.decode(METHOD_SAMPLE)
    }

    /// Waits for the answer to a request started with
    /// [`Context::start_list_roots`].
    pub fn roots(&self) -> Result<Vec<Root>, Error> {
        #[derive(Deserialize)]
        struct Roots {
            #[serde(default)]
            roots: Vec<Root>,
        }
        Ok(self.decode::<Roots>(METHOD_ROOTS)?.roots)
    }
}
