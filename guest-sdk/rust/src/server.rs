//! The module: what it registers, and how it serves its one request.

use crate::context::{Context, Incoming, Session};
use crate::error::{Error, RpcError, CODE_INTERNAL_ERROR, CODE_INVALID_PARAMS, CODE_INVALID_REQUEST, CODE_METHOD_NOT_FOUND, CODE_PARSE_ERROR};
use crate::schema;
use crate::types::{IntoToolResult, PromptResult, ResourceContents, ToolResult};
use crate::uritemplate::UriTemplate;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The wasmcp guest ABI version this SDK speaks.
pub const ABI_VERSION: u32 = 1;

type SchemaFn = fn() -> Result<Value, String>;
type ToolFn = Box<dyn Fn(&Context, Value) -> Result<ToolResult, Error>>;
type ResourceFn = Box<dyn Fn(&Context, &str) -> Result<Vec<ResourceContents>, Error>>;
type TemplateFn = Box<dyn Fn(&Context, &str, &HashMap<String, String>) -> Result<Vec<ResourceContents>, Error>>;
type PromptFn = Box<dyn Fn(&Context, &HashMap<String, String>) -> Result<PromptResult, Error>>;
type CompletionFn = Box<dyn Fn(&Context, &str, &HashMap<String, String>) -> Result<Vec<String>, Error>>;

/// A tool's declaration: name, description, schemas, annotations. Build it
/// with [`Tool::new`] and the builder methods.
#[derive(Clone, Debug, Default)]
pub struct Tool {
    name: String,
    title: Option<String>,
    description: Option<String>,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
    output_of: Option<SchemaFn>,
    properties: Vec<(String, Value)>,
    annotations: Option<Value>,
    task_support: Option<String>,
    meta: Option<Map<String, Value>>,
}

impl Tool {
    /// A tool named name: 1 to 128 characters from `A-Z a-z 0-9 _ . - /`.
    pub fn new(name: impl Into<String>) -> Tool {
        Tool { name: name.into(), ..Default::default() }
    }
    /// What the tool does and when to use it.
    pub fn description(mut self, text: impl Into<String>) -> Tool {
        self.description = Some(text.into());
        self
    }
    /// A human-readable display name.
    pub fn title(mut self, text: impl Into<String>) -> Tool {
        self.title = Some(text.into());
        self
    }
    /// Declares the input schema (a JSON object with `"type": "object"`)
    /// instead of deriving it from the handler's input type.
    pub fn input_schema(mut self, schema: Value) -> Tool {
        self.input_schema = Some(schema);
        self
    }
    /// Declares the output schema (a JSON object with `"type": "object"`).
    /// A typed tool returning [`crate::Structured`] derives one otherwise.
    pub fn output_schema(mut self, schema: Value) -> Tool {
        self.output_schema = Some(schema);
        self
    }
    /// Declares the output schema derived from `T` (see
    /// [`schema::derive`]), for a handler that builds its [`ToolResult`]
    /// itself. The schema is derived when the module is described.
    pub fn output_schema_of<T: DeserializeOwned>(mut self) -> Tool {
        self.output_of = Some(|| schema::derive::<T>(true));
        self
    }
    /// Adds keywords to one property of the input schema, derived or
    /// declared: `.property("steps", json!({"minimum": 1, "description":
    /// "How many"}))`. Objects merge key by key; other values replace.
    pub fn property(mut self, name: impl Into<String>, keywords: Value) -> Tool {
        self.properties.push((name.into(), keywords));
        self
    }
    /// MCP tool annotations (`readOnlyHint`, `destructiveHint`,
    /// `idempotentHint`, `openWorldHint`, `title`) as a JSON object.
    pub fn annotations(mut self, annotations: Value) -> Tool {
        self.annotations = Some(annotations);
        self
    }
    /// `"forbidden"` (the default), `"optional"` or `"required"`: whether
    /// clients may (or must) call the tool as an MCP task.
    pub fn task_support(mut self, mode: &str) -> Tool {
        self.task_support = Some(mode.to_string());
        self
    }
    /// The tool's `_meta`.
    pub fn meta(mut self, meta: Map<String, Value>) -> Tool {
        self.meta = Some(meta);
        self
    }
}

/// A resource with a fixed URI (an MCP Resource).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl Resource {
    /// A resource with this URI and name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Resource {
        Resource { uri: uri.into(), name: name.into(), ..Default::default() }
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Resource {
        self.mime_type = Some(mime_type.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Resource {
        self.description = Some(text.into());
        self
    }
}

/// A family of resources whose URIs match an RFC 6570 level-1 template
/// such as `notes://{folder}/{id}` (an MCP ResourceTemplate).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ResourceTemplate {
    /// The URI template.
    #[serde(rename = "uriTemplate")]
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What its resources hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Their MIME type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

impl ResourceTemplate {
    /// A template with this URI template and name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> ResourceTemplate {
        ResourceTemplate { uri_template: uri_template.into(), name: name.into(), ..Default::default() }
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> ResourceTemplate {
        self.mime_type = Some(mime_type.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> ResourceTemplate {
        self.description = Some(text.into());
        self
    }
}

/// One argument of a [`Prompt`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// What it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the client must send it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
}

/// A prompt (an MCP Prompt).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Prompt {
    /// The prompt's name.
    pub name: String,
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
}

impl Prompt {
    /// A prompt named name.
    pub fn new(name: impl Into<String>) -> Prompt {
        Prompt { name: name.into(), ..Default::default() }
    }
    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Prompt {
        self.description = Some(text.into());
        self
    }
    /// Adds an argument.
    pub fn argument(mut self, name: impl Into<String>, description: impl Into<String>, required: bool) -> Prompt {
        self.arguments.push(PromptArgument { name: name.into(), description: Some(description.into()), required });
        self
    }
}

/// What a completion is for: a prompt's argument or a template's variable.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CompletionRef {
    /// `ref/prompt` with the prompt's name.
    Prompt(String),
    /// `ref/resource` with the template's URI template, exactly as
    /// registered.
    Template(String),
}

/// An Agent Skill the module ships (the MCP Skills extension): its name,
/// equal to the `name` in its SKILL.md frontmatter, and its files. The host
/// serves them as `skill://` resources; the guest never runs for them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Skill {
    /// The skill's name.
    pub name: String,
    /// Its files, SKILL.md among them.
    pub files: Vec<SkillFile>,
}

/// One file of a [`Skill`]: a path relative to the skill's root, with its
/// content as `text` or `blob` (base64).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SkillFile {
    /// The path relative to the skill's root.
    pub path: String,
    /// UTF-8 content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Binary content, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Its MIME type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

struct ToolEntry {
    def: Tool,
    input: Option<SchemaFn>,
    output: Option<SchemaFn>,
    call: ToolFn,
}

/// A guest module: its name, version and what it registered. Register
/// everything in `main`, then call [`Server::run`].
pub struct Server {
    name: String,
    version: String,
    instructions: Option<String>,
    tools: Vec<ToolEntry>,
    resources: Vec<(Resource, ResourceFn)>,
    templates: Vec<(ResourceTemplate, UriTemplate, TemplateFn)>,
    prompts: Vec<(Prompt, PromptFn)>,
    completions: HashMap<(CompletionRef, String), CompletionFn>,
    skills: Vec<Skill>,
}

fn valid_tool_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 128 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-/".contains(&b))
}

impl Server {
    /// A module with this name and version. The name is also the logger
    /// name of [`Context::log`] messages.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Server {
        Server {
            name: name.into(),
            version: version.into(),
            instructions: None,
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            completions: HashMap::new(),
            skills: Vec::new(),
        }
    }

    /// Sets the instructions the module offers the client.
    pub fn instructions(&mut self, text: impl Into<String>) -> &mut Server {
        self.instructions = Some(text.into());
        self
    }

    /// Registers a typed tool. The call's arguments are decoded into `I`
    /// with serde; the input schema is derived from `I` (see
    /// [`schema::derive`]) unless the tool declares one. The handler's
    /// value decides the result (see [`IntoToolResult`]): a `String` is one
    /// text block, a [`crate::Structured`] value is structured content and
    /// gives the tool an output schema, a [`ToolResult`] is used as is.
    ///
    /// Arguments that do not decode into `I` never reach the handler: the
    /// result is an error result naming the problem. An error from the
    /// handler becomes an error result with its text (see [`Error`]); so
    /// does a panic.
    ///
    /// Panics if the tool's name is invalid or already registered, or its
    /// task support is not `forbidden`, `optional` or `required`.
    pub fn tool<I, R, F>(&mut self, tool: Tool, handler: F) -> &mut Server
    where
        I: DeserializeOwned + 'static,
        R: IntoToolResult + 'static,
        F: Fn(&Context, I) -> Result<R, Error> + 'static,
    {
        let input: SchemaFn = || schema::derive::<I>(false);
        let output: Option<SchemaFn> = if R::output_schema().is_some() {
            Some(|| R::output_schema().unwrap_or_else(|| Err("no output schema".into())))
        } else {
            None
        };
        let call: ToolFn = Box::new(move |cx, args| {
            let input: I = match serde_json::from_value(args) {
                Ok(v) => v,
                Err(e) => return Ok(ToolResult::error(format!("invalid arguments: {}", e))),
            };
            handler(cx, input)?.into_tool_result()
        });
        self.add_tool(ToolEntry { def: tool, input: Some(input), output, call })
    }

    /// Registers a tool whose handler takes the raw arguments (an object;
    /// `{}` when the client sent none) and builds the result itself. The
    /// input schema is the tool's declared one, `{"type": "object"}` (any
    /// object) if none; the output schema is the declared one, if any.
    pub fn raw_tool<F>(&mut self, tool: Tool, handler: F) -> &mut Server
    where
        F: Fn(&Context, Value) -> Result<ToolResult, Error> + 'static,
    {
        self.add_tool(ToolEntry { def: tool, input: None, output: None, call: Box::new(handler) })
    }

    fn add_tool(&mut self, e: ToolEntry) -> &mut Server {
        let name = &e.def.name;
        if !valid_tool_name(name) {
            panic!("wasmcp_guest: tool name {:?} must be 1 to 128 characters from A-Z a-z 0-9 _ . - /", name);
        }
        if self.tools.iter().any(|t| &t.def.name == name) {
            panic!("wasmcp_guest: duplicate tool {}", name);
        }
        if let Some(ts) = &e.def.task_support {
            if !["forbidden", "optional", "required"].contains(&ts.as_str()) {
                panic!("wasmcp_guest: tool {}: task support {:?} is not forbidden, optional or required", name, ts);
            }
        }
        self.tools.push(e);
        self
    }

    /// Registers a resource with a fixed URI. Panics if the URI or name is
    /// empty or the URI is already registered.
    pub fn resource<F>(&mut self, resource: Resource, handler: F) -> &mut Server
    where
        F: Fn(&Context, &str) -> Result<Vec<ResourceContents>, Error> + 'static,
    {
        if resource.uri.is_empty() || resource.name.is_empty() {
            panic!("wasmcp_guest: resource {:?}: URI and name are required", resource.uri);
        }
        if self.resources.iter().any(|(r, _)| r.uri == resource.uri) {
            panic!("wasmcp_guest: duplicate resource {}", resource.uri);
        }
        self.resources.push((resource, Box::new(handler)));
        self
    }

    /// Registers a resource template. A `resources/read` of a URI that is no
    /// fixed resource goes to the first template (in registration order)
    /// it matches; `{name}` stands for one or more characters other than
    /// `/`, `?` and `#`, percent-decoded into the handler's variables.
    /// Panics if the template is not RFC 6570 level 1, has no variable, is
    /// registered twice, or the name is empty.
    pub fn resource_template<F>(&mut self, template: ResourceTemplate, handler: F) -> &mut Server
    where
        F: Fn(&Context, &str, &HashMap<String, String>) -> Result<Vec<ResourceContents>, Error> + 'static,
    {
        if template.name.is_empty() {
            panic!("wasmcp_guest: resource template {:?}: name is required", template.uri_template);
        }
        let t = UriTemplate::parse(&template.uri_template).unwrap_or_else(|e| panic!("wasmcp_guest: {}", e));
        if !t.has_variables() {
            panic!("wasmcp_guest: uri template {:?} has no {{variable}}; use resource", template.uri_template);
        }
        if self.templates.iter().any(|(d, _, _)| d.uri_template == template.uri_template) {
            panic!("wasmcp_guest: duplicate resource template {}", template.uri_template);
        }
        self.templates.push((template, t, Box::new(handler)));
        self
    }

    /// Registers a prompt. Its handler gets the client's arguments; every
    /// argument the prompt declares as required is present and non-empty.
    /// Panics if the name is empty or already registered.
    pub fn prompt<F>(&mut self, prompt: Prompt, handler: F) -> &mut Server
    where
        F: Fn(&Context, &HashMap<String, String>) -> Result<PromptResult, Error> + 'static,
    {
        if prompt.name.is_empty() {
            panic!("wasmcp_guest: a prompt needs a name");
        }
        if self.prompts.iter().any(|(p, _)| p.name == prompt.name) {
            panic!("wasmcp_guest: duplicate prompt {}", prompt.name);
        }
        self.prompts.push((prompt, Box::new(handler)));
        self
    }

    /// Registers completions for the argument `arg` of a prompt or the
    /// variable `arg` of a resource template. The handler gets what the
    /// user typed so far and the other arguments already resolved; the SDK
    /// answers the first 100 values and reports the total. Once any
    /// completion exists the description says `"completions": true`.
    pub fn completion<F>(&mut self, reference: CompletionRef, arg: &str, handler: F) -> &mut Server
    where
        F: Fn(&Context, &str, &HashMap<String, String>) -> Result<Vec<String>, Error> + 'static,
    {
        if arg.is_empty() {
            panic!("wasmcp_guest: completion: the argument name is required");
        }
        let key = (reference, arg.to_string());
        if self.completions.contains_key(&key) {
            panic!("wasmcp_guest: duplicate completion for {:?} argument {}", key.0, arg);
        }
        self.completions.insert(key, Box::new(handler));
        self
    }

    /// Ships an Agent Skill. Panics on a skill without a name or a SKILL.md,
    /// or a name added twice (the host checks the rest at load).
    pub fn skill(&mut self, skill: Skill) -> &mut Server {
        if skill.name.is_empty() || !skill.files.iter().any(|f| f.path == "SKILL.md") {
            panic!("wasmcp_guest: skill {:?} needs a name and a SKILL.md", skill.name);
        }
        if self.skills.iter().any(|s| s.name == skill.name) {
            panic!("wasmcp_guest: skill {:?} added twice", skill.name);
        }
        self.skills.push(skill);
        self
    }

    /// What the module answers to `wasmcp/describe`. Schemas are derived
    /// here; an error says which tool's schema could not be.
    pub fn description(&self) -> Result<Value, String> {
        let mut tools = Vec::new();
        for t in &self.tools {
            tools.push(self.tool_def(t)?);
        }
        let mut d = Map::new();
        d.insert("abiVersion".into(), json!(ABI_VERSION));
        d.insert("name".into(), json!(self.name));
        d.insert("version".into(), json!(self.version));
        if let Some(i) = &self.instructions {
            d.insert("instructions".into(), json!(i));
        }
        if !tools.is_empty() {
            d.insert("tools".into(), Value::Array(tools));
        }
        let enc = |v: Result<Value, serde_json::Error>| v.map_err(|e| e.to_string());
        if !self.resources.is_empty() {
            d.insert("resources".into(), enc(serde_json::to_value(self.resources.iter().map(|r| &r.0).collect::<Vec<_>>()))?);
        }
        if !self.templates.is_empty() {
            d.insert("resourceTemplates".into(), enc(serde_json::to_value(self.templates.iter().map(|t| &t.0).collect::<Vec<_>>()))?);
        }
        if !self.prompts.is_empty() {
            d.insert("prompts".into(), enc(serde_json::to_value(self.prompts.iter().map(|p| &p.0).collect::<Vec<_>>()))?);
        }
        if !self.completions.is_empty() {
            d.insert("completions".into(), json!(true));
        }
        if !self.skills.is_empty() {
            d.insert("skills".into(), enc(serde_json::to_value(&self.skills))?);
        }
        Ok(Value::Object(d))
    }

    fn tool_def(&self, t: &ToolEntry) -> Result<Value, String> {
        let def = &t.def;
        let ctx = |what: &str, e: String| format!("tool {}: {}: {}", def.name, what, e);
        let mut input = match (&def.input_schema, t.input) {
            (Some(s), _) => s.clone(),
            (None, Some(f)) => {
                let mut s = f().map_err(|e| ctx("inputSchema", e))?;
                if let Some(o) = s.as_object_mut() {
                    o.entry("type").or_insert_with(|| json!("object"));
                }
                s
            }
            (None, None) => json!({"type": "object"}),
        };
        for (name, kw) in &def.properties {
            let props = input
                .as_object_mut()
                .ok_or_else(|| ctx("inputSchema", "not a JSON object".into()))?
                .entry("properties")
                .or_insert_with(|| json!({}));
            let slot = props
                .as_object_mut()
                .ok_or_else(|| ctx("inputSchema", "properties is not an object".into()))?
                .entry(name.clone())
                .or_insert_with(|| json!({}));
            schema::merge(slot, kw);
        }
        if input.get("type") != Some(&json!("object")) {
            return Err(ctx("inputSchema", format!("must be a JSON object with \"type\": \"object\", not {}", input)));
        }
        let mut m = Map::new();
        m.insert("name".into(), json!(def.name));
        if let Some(v) = &def.title {
            m.insert("title".into(), json!(v));
        }
        if let Some(v) = &def.description {
            m.insert("description".into(), json!(v));
        }
        m.insert("inputSchema".into(), input);
        let output = match (&def.output_schema, def.output_of.or(t.output)) {
            (Some(s), _) => Some(s.clone()),
            (None, Some(f)) => Some(f().map_err(|e| ctx("outputSchema", e))?),
            (None, None) => None,
        };
        if let Some(o) = output {
            if o.get("type") != Some(&json!("object")) {
                return Err(ctx("outputSchema", format!("must be a JSON object with \"type\": \"object\", not {}", o)));
            }
            m.insert("outputSchema".into(), o);
        }
        if let Some(v) = &def.annotations {
            m.insert("annotations".into(), v.clone());
        }
        if let Some(v) = &def.task_support {
            m.insert("execution".into(), json!({ "taskSupport": v }));
        }
        if let Some(v) = &def.meta {
            m.insert("_meta".into(), Value::Object(v.clone()));
        }
        Ok(Value::Object(m))
    }

    /// Serves the one request of this instance on stdin and stdout (see
    /// [`Server::serve`]) and returns; `main` should return right after it
    /// so the module exits 0. If no request could be read or the answer
    /// could not be written, it says so on stderr and exits with status 1.
    pub fn run(&self) {
        let stdin = std::io::stdin();
        let input = Box::new(std::io::BufReader::new(stdin));
        let output = Box::new(std::io::stdout());
        if let Err(e) = self.serve(input, output, Some(Box::new(std::io::stderr()))) {
            eprintln!("{}: {}", self.name, e);
            std::process::exit(1);
        }
    }

    /// Reads one JSON-RPC request line from input, handles it and writes
    /// the response line (after any notifications and requests the handler
    /// sends) to output; the answers to the handler's requests are read
    /// from input as further lines. diag, if any, gets free-text
    /// diagnostics (stderr in a module: the host's log).
    ///
    /// Protocol problems are answered on output, not returned: a line that
    /// is not JSON gets `-32700`, a message that is not a request `-32600`,
    /// an unknown method `-32601`. It returns an error only if no request
    /// could be read or writing failed. Tests feed it request lines.
    pub fn serve(&self, input: Box<dyn BufRead>, output: Box<dyn Write>, diag: Option<Box<dyn Write>>) -> Result<(), String> {
        let mut session = Session::new(input, output, diag);
        let line = match session.read_line() {
            Ok(Some(l)) => l,
            Ok(None) => return Err("no request on stdin".into()),
            Err(e) => return Err(format!("reading the request: {}", e)),
        };
        let req: Incoming = match serde_json::from_slice(&line) {
            Ok(r) => r,
            Err(e) => {
                session.respond(&response(&Value::Null, Err(rpc(CODE_PARSE_ERROR, format!("parse error: {}", e)))));
                return session.write_error().map_or(Ok(()), Err);
            }
        };
        let id = match req.id {
            Some(id) if !id.is_null() => id,
            _ => {
                if req.method.is_some() {
                    return Ok(()); // a notification: nothing to answer
                }
                session.respond(&response(&Value::Null, Err(rpc(CODE_INVALID_REQUEST, "invalid request: no method and no id".into()))));
                return session.write_error().map_or(Ok(()), Err);
            }
        };
        let method = match req.method {
            Some(m) if !m.is_empty() => m,
            _ => {
                session.respond(&response(&id, Err(rpc(CODE_INVALID_REQUEST, "invalid request: no method".into()))));
                return session.write_error().map_or(Ok(()), Err);
            }
        };
        let params = req.params.unwrap_or(Value::Null);
        let meta = params.get("_meta").cloned();
        let cx = Context { session: RefCell::new(session), method: method.clone(), meta, module: self.name.clone() };
        let result = match params {
            Value::Object(_) | Value::Null => self.handle(&cx, &method, params),
            _ => Err(rpc(CODE_INVALID_PARAMS, "invalid params: not a JSON object".into())),
        };
        let mut session = cx.session.into_inner();
        session.respond(&response(&id, result));
        session.write_error().map_or(Ok(()), Err)
    }

    fn handle(&self, cx: &Context, method: &str, params: Value) -> Result<Value, RpcError> {
        match method {
            "wasmcp/describe" => self.describe(&params),
            "tools/call" => self.call_tool(cx, params),
            "resources/read" => self.read_resource(cx, &params),
            "prompts/get" => self.get_prompt(cx, &params),
            "completion/complete" => self.complete(cx, &params),
            _ => Err(rpc(CODE_METHOD_NOT_FOUND, format!("method not found: {}", method))),
        }
    }

    fn describe(&self, params: &Value) -> Result<Value, RpcError> {
        // A host that lists no versions at all is taken to speak v1.
        if let Some(vs) = params.get("abiVersions").and_then(Value::as_array) {
            if !vs.iter().any(|v| v.as_u64() == Some(ABI_VERSION as u64)) {
                return Err(RpcError {
                    code: CODE_INVALID_PARAMS,
                    message: format!("module {} speaks wasmcp ABI v{}; the host speaks {}", self.name, ABI_VERSION, Value::Array(vs.clone())),
                    data: Some(json!({ "abiVersion": ABI_VERSION })),
                });
            }
        }
        self.description().map_err(|e| rpc(CODE_INTERNAL_ERROR, e))
    }

    fn call_tool(&self, cx: &Context, params: Value) -> Result<Value, RpcError> {
        let mut params = match params {
            Value::Object(m) => m,
            _ => return Err(rpc(CODE_INVALID_PARAMS, "missing params".into())),
        };
        let name = match params.get("name") {
            Some(Value::String(s)) => s.clone(),
            _ => return Err(rpc(CODE_INVALID_PARAMS, "invalid params: name must be a string".into())),
        };
        let t = match self.tools.iter().find(|t| t.def.name == name) {
            Some(t) => t,
            None => {
                return Err(RpcError { code: CODE_INVALID_PARAMS, message: format!("unknown tool: {}", name), data: Some(json!({ "name": name })) })
            }
        };
        let args = match params.remove("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(a @ Value::Object(_)) => a,
            Some(_) => return Ok(to_value(&ToolResult::error("invalid arguments: not a JSON object"))),
        };
        let res = match self.protect(cx, &format!("tool {}", name), || (t.call)(cx, args)) {
            Ok(r) => r,
            Err(e) => match e.tool_rpc_error() {
                Some(r) => return Err(r),
                None => ToolResult::error(e.to_string()),
            },
        };
        Ok(to_value(&res))
    }

    fn read_resource(&self, cx: &Context, params: &Value) -> Result<Value, RpcError> {
        let uri = match params.get("uri") {
            Some(Value::String(s)) => s.as_str(),
            _ => return Err(rpc(CODE_INVALID_PARAMS, "invalid params: uri must be a string".into())),
        };
        let (mime, res) = if let Some((r, h)) = self.resources.iter().find(|(r, _)| r.uri == uri) {
            (r.mime_type.clone(), self.protect(cx, &format!("resource {}", uri), || h(cx, uri)))
        } else {
            let found = self.templates.iter().find_map(|(d, t, h)| t.matches(uri).map(|vars| (d, vars, h)));
            match found {
                None => return Err(Error::resource_not_found(uri).into_rpc_error()),
                Some((d, vars, h)) => (d.mime_type.clone(), self.protect(cx, &format!("resource {}", uri), || h(cx, uri, &vars))),
            }
        };
        let mut contents = res.map_err(Error::into_rpc_error)?;
        for c in contents.iter_mut() {
            if c.uri.is_empty() {
                c.uri = uri.to_string();
            }
            if c.mime_type.is_none() {
                c.mime_type = mime.clone();
            }
            if c.text.is_none() && c.blob.is_none() {
                c.text = Some(String::new());
            }
        }
        Ok(json!({ "contents": to_value(&contents) }))
    }

    fn get_prompt(&self, cx: &Context, params: &Value) -> Result<Value, RpcError> {
        let name = match params.get("name") {
            Some(Value::String(s)) => s.as_str(),
            _ => return Err(rpc(CODE_INVALID_PARAMS, "invalid params: name must be a string".into())),
        };
        let (p, h) = match self.prompts.iter().find(|(p, _)| p.name == name) {
            Some(e) => e,
            None => {
                return Err(RpcError { code: CODE_INVALID_PARAMS, message: format!("unknown prompt: {}", name), data: Some(json!({ "name": name })) })
            }
        };
        let args = string_map(params.get("arguments")).map_err(|e| rpc(CODE_INVALID_PARAMS, format!("invalid params: arguments: {}", e)))?;
        for a in &p.arguments {
            if a.required && args.get(&a.name).map_or(true, |v| v.is_empty()) {
                return Err(RpcError {
                    code: CODE_INVALID_PARAMS,
                    message: format!("prompt {}: missing required argument {:?}", name, a.name),
                    data: Some(json!({ "argument": a.name })),
                });
            }
        }
        let mut res = self.protect(cx, &format!("prompt {}", name), || h(cx, &args)).map_err(Error::into_rpc_error)?;
        if res.description.is_none() {
            res.description = p.description.clone();
        }
        Ok(to_value(&res))
    }

    fn complete(&self, cx: &Context, params: &Value) -> Result<Value, RpcError> {
        let r = params.get("ref").ok_or_else(|| rpc(CODE_INVALID_PARAMS, "invalid params: no ref".into()))?;
        let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let reference = match r.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => CompletionRef::Prompt(str_of(r, "name")),
            Some("ref/resource") => CompletionRef::Template(str_of(r, "uri")),
            _ => return Err(rpc(CODE_INVALID_PARAMS, "invalid params: ref.type must be ref/prompt or ref/resource".into())),
        };
        let arg = params.get("argument").cloned().unwrap_or(Value::Null);
        let (name, value) = (str_of(&arg, "name"), str_of(&arg, "value"));
        let mut values = Vec::new();
        if let Some(h) = self.completions.get(&(reference, name)) {
            let context = string_map(params.get("context").and_then(|c| c.get("arguments")))
                .map_err(|e| rpc(CODE_INVALID_PARAMS, format!("invalid params: context.arguments: {}", e)))?;
            values = self.protect(cx, "completion", || h(cx, &value, &context)).map_err(Error::into_rpc_error)?;
        }
        let total = values.len();
        values.truncate(100);
        Ok(json!({"completion": {"values": values, "total": total, "hasMore": total > 100}}))
    }

    /// Runs a handler and turns a panic into an error (the panic message
    /// itself goes to stderr through the default hook).
    fn protect<T>(&self, cx: &Context, what: &str, f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(r) => r,
            Err(p) => {
                let msg = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                if let Ok(mut s) = cx.session.try_borrow_mut() {
                    s.log(&format!("{}: {} panicked: {}", self.name, what, msg));
                }
                Err(Error::msg(format!("{} panicked: {}", what, msg)))
            }
        }
    }
}

fn rpc(code: i64, message: String) -> RpcError {
    RpcError { code, message, data: None }
}

fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_else(|e| json!({"content": [{"type": "text", "text": format!("cannot encode the result: {}", e)}], "isError": true}))
}

/// A JSON object of strings (prompt and completion arguments).
fn string_map(v: Option<&Value>) -> Result<HashMap<String, String>, String> {
    match v {
        None | Some(Value::Null) => Ok(HashMap::new()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| e.to_string()),
    }
}

fn response(id: &Value, result: Result<Value, RpcError>) -> Value {
    match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err(e) => {
            let mut err = json!({"code": e.code, "message": e.message});
            if let Some(d) = e.data {
                err["data"] = d;
            }
            json!({"jsonrpc": "2.0", "id": id, "error": err})
        }
    }
}
