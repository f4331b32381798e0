// The wasmcp guest SDK for AssemblyScript: a tool module reads one
// JSON-RPC request line from stdin, answers it with one response line on
// stdout, and exits (the wasmcp guest ABI v1, abi/README.md). A module
// registers its tools, resources, resource templates, prompts and
// completions on a Server and calls run(); the SDK answers
// wasmcp/describe from what was registered and dispatches tools/call,
// resources/read, prompts/get and completion/complete to the handlers.
// Handlers may send progress, log and other notifications and ask the
// client for input (elicitation, sampling, roots) before they answer.

import { Kind, Value, parse, parseResult, stringify, quote } from "./json";
import { readLine, writeLine, writeStderr } from "./io";
import { decodeBase64, encodeBase64 } from "./base64";

export { decodeBase64, encodeBase64 } from "./base64";
export { Kind, Value, parse, parseResult, stringify, quote, ParseResult, formatNumber, MAX_DEPTH } from "./json";

/** The wasmcp guest ABI version this SDK speaks. */
export const ABI_VERSION: i32 = 1;

/** JSON-RPC error codes the SDK uses. */
export const CODE_METHOD_NOT_FOUND: i32 = -32601;
export const CODE_INVALID_PARAMS: i32 = -32602;
export const CODE_INTERNAL_ERROR: i32 = -32603;
/** The client did not declare the capability a request needs; data is {"requiredCapabilities": {…}}. */
export const CODE_MISSING_CAPABILITY: i32 = -32021;

/** A JSON-RPC error a handler answers with. */
export class RPCError {
  constructor(public code: i32, public message: string, public data: Value | null = null) {}

  toValue(): Value {
    const e = Value.object().setNumber("code", this.code).setString("message", this.message);
    const d = this.data;
    if (d != null) e.set("data", d);
    return e;
  }
}

// ---------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------

/** The result of a tool call (an MCP CallToolResult), or a JSON-RPC error. */
export class ToolResult {
  /** The content blocks (an array of MCP content objects). */
  content: Value = Value.array();
  /** structuredContent: an object matching the tool's outputSchema, or null. */
  structured: Value | null = null;
  /** Whether the tool failed (the model sees the text). */
  isError: bool = false;
  /** When set, the call is answered with this JSON-RPC error instead. */
  rpcError: RPCError | null = null;

  /** A result with one text block. */
  static text(text: string): ToolResult {
    return new ToolResult().addText(text);
  }

  /** A result whose structuredContent is value and whose one text block is text. */
  static structured(text: string, value: Value): ToolResult {
    const r = ToolResult.text(text);
    r.structured = value;
    return r;
  }

  /** A result whose structuredContent is value and whose text block is value's JSON. */
  static json(value: Value): ToolResult {
    return ToolResult.structured(stringify(value), value);
  }

  /** A failed result (isError: true) saying why. */
  static error(message: string): ToolResult {
    const r = ToolResult.text(message);
    r.isError = true;
    return r;
  }

  /** An answer with a JSON-RPC error: for errors about the request itself. */
  static rpc(code: i32, message: string, data: Value | null = null): ToolResult {
    const r = new ToolResult();
    r.rpcError = new RPCError(code, message, data);
    return r;
  }

  /**
   * The answer for a request to the client that failed: a missing
   * capability is passed on as the JSON-RPC error MCP prescribes, any
   * other error becomes a failed result with its message.
   */
  static fromAnswer(a: Answer): ToolResult {
    if (a.code == CODE_MISSING_CAPABILITY) return ToolResult.rpc(a.code, a.message, a.data);
    return ToolResult.error(a.message);
  }

  /** Appends a text block. */
  addText(text: string): ToolResult {
    this.content.push(Value.object().setString("type", "text").setString("text", text));
    return this;
  }

  /** Appends an image block (data is base64). */
  addImage(base64: string, mimeType: string): ToolResult {
    this.content.push(Value.object().setString("type", "image").setString("data", base64).setString("mimeType", mimeType));
    return this;
  }

  /** Appends any content block (an MCP content object). */
  addContent(block: Value): ToolResult {
    this.content.push(block);
    return this;
  }

  toValue(): Value {
    const v = Value.object().set("content", this.content);
    const s = this.structured;
    if (s != null) v.set("structuredContent", s);
    if (this.isError) v.setBool("isError", true);
    return v;
  }
}

/** The result of a resources/read (an MCP ReadResourceResult), or a JSON-RPC error. */
export class ResourceResult {
  /** The contents (MCP resource contents; uri and mimeType filled in when left empty). */
  contents: Value = Value.array();
  rpcError: RPCError | null = null;

  /** One text content. */
  static text(text: string, mimeType: string = ""): ResourceResult {
    const r = new ResourceResult();
    const c = Value.object().setString("text", text);
    if (mimeType.length > 0) c.setString("mimeType", mimeType);
    r.contents.push(c);
    return r;
  }

  /** One binary content (base64). */
  static blob(base64: string, mimeType: string = ""): ResourceResult {
    const r = new ResourceResult();
    const c = Value.object().setString("blob", base64);
    if (mimeType.length > 0) c.setString("mimeType", mimeType);
    r.contents.push(c);
    return r;
  }

  /** The error the ABI prescribes for an unknown resource: -32602 with data {"uri"}. */
  static notFound(uri: string): ResourceResult {
    return ResourceResult.rpc(CODE_INVALID_PARAMS, "resource not found: " + uri, Value.object().setString("uri", uri));
  }

  /** An answer with a JSON-RPC error. */
  static rpc(code: i32, message: string, data: Value | null = null): ResourceResult {
    const r = new ResourceResult();
    r.rpcError = new RPCError(code, message, data);
    return r;
  }
}

/** The result of a prompts/get (an MCP GetPromptResult), or a JSON-RPC error. */
export class PromptResult {
  description: string = "";
  messages: Value = Value.array();
  rpcError: RPCError | null = null;

  /** Appends a message with one text content; role is "user" or "assistant". */
  add(role: string, text: string): PromptResult {
    this.messages.push(
      Value.object().setString("role", role).set("content", Value.object().setString("type", "text").setString("text", text)),
    );
    return this;
  }

  /** add("user", text) */
  user(text: string): PromptResult {
    return this.add("user", text);
  }

  /** add("assistant", text) */
  assistant(text: string): PromptResult {
    return this.add("assistant", text);
  }

  /** An answer with a JSON-RPC error. */
  static rpc(code: i32, message: string, data: Value | null = null): PromptResult {
    const r = new PromptResult();
    r.rpcError = new RPCError(code, message, data);
    return r;
  }
}

// ---------------------------------------------------------------------
// Declarations and handlers
// ---------------------------------------------------------------------

/** A tool handler: args is params.arguments ({} when none), already validated by the host against inputSchema. */
export type ToolHandler = (ctx: Context, args: Value) => ToolResult;
/** A resource handler: uri as requested; vars holds a template's variables (empty for a fixed URI). */
export type ResourceHandler = (ctx: Context, uri: string, vars: Map<string, string>) => ResourceResult;
/** A prompt handler: args are the prompt's arguments (strings). */
export type PromptHandler = (ctx: Context, args: Map<string, string>) => PromptResult;
/** A completion handler: the values completing argument's value (at most 100 are sent). */
export type CompletionHandler = (ctx: Context, ref: Value, argument: string, value: string) => Array<string>;

/** A tool's declaration; set optional fields on what Server.tool returns. */
export class Tool {
  title: string = "";
  /** MCP tool annotations (readOnlyHint, destructiveHint, …), an object, or null. */
  annotations: Value | null = null;
  constructor(
    public name: string,
    public description: string,
    public inputSchema: Value,
    public outputSchema: Value | null,
    public handler: ToolHandler,
  ) {}

  toValue(): Value {
    const v = Value.object().setString("name", this.name);
    if (this.title.length > 0) v.setString("title", this.title);
    if (this.description.length > 0) v.setString("description", this.description);
    v.set("inputSchema", this.inputSchema);
    const o = this.outputSchema;
    if (o != null) v.set("outputSchema", o);
    const a = this.annotations;
    if (a != null) v.set("annotations", a);
    return v;
  }
}

class ResourceEntry {
  constructor(
    public uri: string, // a URI or a URI template
    public template: bool,
    public decl: Value,
    public handler: ResourceHandler,
  ) {}
}

/** One argument of a prompt. */
export class PromptArgument {
  constructor(public name: string, public description: string = "", public required: bool = false) {}
}

class PromptEntry {
  constructor(public name: string, public args: Array<PromptArgument>, public decl: Value, public handler: PromptHandler) {}
}

// parseSchema parses a schema given as JSON text; a schema that is not a
// JSON object is the author's mistake and stops the module with a message.
function parseSchema(what: string, text: string): Value {
  const r = parseResult(text);
  const v = r.value;
  if (v == null) {
    abort(what + " is not valid JSON: " + r.error);
    return Value.null();
  }
  if (!v.isObject()) abort(what + " is not a JSON object");
  return v;
}

// ---------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------

/**
 * Server holds what a module serves. Register everything at the top level
 * of the module's entry file, then call run(): it serves the instance's one
 * request and returns.
 */
export class Server {
  /** Optional instructions for the client (sent in initialize). */
  instructions: string = "";
  private tools: Array<Tool> = [];
  private resources: Array<ResourceEntry> = [];
  private prompts: Array<PromptEntry> = [];
  private completer: CompletionHandler | null = null;

  constructor(public name: string, public version: string) {}

  /**
   * Registers a tool. inputSchema and outputSchema are JSON Schema texts
   * with an object root ("" for no output schema); an invalid one stops the
   * module with a message when it loads. Returns the declaration, for
   * optional fields (title, annotations).
   */
  tool(name: string, description: string, inputSchema: string, handler: ToolHandler, outputSchema: string = ""): Tool {
    const input = parseSchema("tool " + name + ": inputSchema", inputSchema);
    const output: Value | null = outputSchema.length > 0 ? parseSchema("tool " + name + ": outputSchema", outputSchema) : null;
    const t = new Tool(name, description, input, output, handler);
    this.tools.push(t);
    return t;
  }

  /** Registers a resource with a fixed URI. */
  resource(uri: string, name: string, mimeType: string, handler: ResourceHandler, description: string = ""): void {
    const d = Value.object().setString("uri", uri).setString("name", name);
    if (description.length > 0) d.setString("description", description);
    if (mimeType.length > 0) d.setString("mimeType", mimeType);
    this.resources.push(new ResourceEntry(uri, false, d, handler));
  }

  /**
   * Registers a resource template: an RFC 6570 level-1 template such as
   * "notes://{folder}/{id}", each variable matching one or more characters
   * other than '/', '?' and '#' (percent-decoded for the handler).
   */
  resourceTemplate(uriTemplate: string, name: string, mimeType: string, handler: ResourceHandler, description: string = ""): void {
    const d = Value.object().setString("uriTemplate", uriTemplate).setString("name", name);
    if (description.length > 0) d.setString("description", description);
    if (mimeType.length > 0) d.setString("mimeType", mimeType);
    this.resources.push(new ResourceEntry(uriTemplate, true, d, handler));
  }

  /** Registers a prompt; required arguments are checked before the handler runs. */
  prompt(name: string, description: string, args: Array<PromptArgument>, handler: PromptHandler): void {
    const d = Value.object().setString("name", name);
    if (description.length > 0) d.setString("description", description);
    if (args.length > 0) {
      const a = Value.array();
      for (let i = 0; i < args.length; i++) {
        const x = Value.object().setString("name", args[i].name);
        if (args[i].description.length > 0) x.setString("description", args[i].description);
        if (args[i].required) x.setBool("required", true);
        a.push(x);
      }
      d.set("arguments", a);
    }
    this.prompts.push(new PromptEntry(name, args, d, handler));
  }

  /** Registers the handler of completion/complete (for every prompt and template argument). */
  completion(handler: CompletionHandler): void {
    this.completer = handler;
  }

  /** The description this module answers to wasmcp/describe. */
  description(): Value {
    const d = Value.object().setNumber("abiVersion", ABI_VERSION).setString("name", this.name).setString("version", this.version);
    if (this.instructions.length > 0) d.setString("instructions", this.instructions);
    const tools = Value.array();
    for (let i = 0; i < this.tools.length; i++) tools.push(this.tools[i].toValue());
    d.set("tools", tools);
    const res = Value.array();
    const tmpl = Value.array();
    for (let i = 0; i < this.resources.length; i++) {
      const r = this.resources[i];
      if (r.template) tmpl.push(r.decl);
      else res.push(r.decl);
    }
    if (res.length > 0) d.set("resources", res);
    if (tmpl.length > 0) d.set("resourceTemplates", tmpl);
    if (this.prompts.length > 0) {
      const p = Value.array();
      for (let i = 0; i < this.prompts.length; i++) p.push(this.prompts[i].decl);
      d.set("prompts", p);
    }
    if (this.completer != null) d.setBool("completions", true);
    return d;
  }

  /**
   * run serves the one request of this instance: it reads the request line
   * from stdin and writes the response line (and whatever the handler sends
   * before it) to stdout. A request line that cannot be read gets no answer
   * (a message goes to stderr).
   */
  run(): void {
    const line = readLine();
    if (line == null) {
      writeStderr("wasmcp: no request on stdin");
      return;
    }
    const req = parse(line);
    if (req == null || !req.isObject()) {
      writeStderr("wasmcp: the request line is not a JSON object");
      return;
    }
    const id = req.get("id");
    const method = req.get("method");
    if (id == null || !(id.isNumber() || id.isString()) || method == null || !method.isString() || req.getString("jsonrpc") != "2.0") {
      writeStderr("wasmcp: the request line is not a JSON-RPC 2.0 request");
      return;
    }
    let params = req.get("params");
    if (params == null || !params.isObject()) params = Value.object();
    const ctx = new Context(method.string, params);
    const m = method.string;
    let result: Value | null = null;
    let err: RPCError | null = null;
    if (m == "wasmcp/describe") {
      const versions = params.get("abiVersions");
      let speaks = versions == null || !versions.isArray();
      if (!speaks && versions != null) {
        for (let i = 0; i < versions.length; i++) {
          if (versions.items[i].isNumber() && versions.items[i].number == ABI_VERSION) speaks = true;
        }
      }
      if (speaks) result = this.description();
      else
        err = new RPCError(
          CODE_INVALID_PARAMS,
          "module " + this.name + " speaks wasmcp ABI v1; the host speaks " + stringify(versions as Value),
          Value.object().setNumber("abiVersion", ABI_VERSION),
        );
    } else if (m == "tools/call") {
      const name = params.getString("name");
      let t: Tool | null = null;
      for (let i = 0; i < this.tools.length; i++) if (this.tools[i].name == name) t = this.tools[i];
      let args = params.get("arguments");
      if (args == null || args.isNull()) args = Value.object();
      if (t == null) err = new RPCError(CODE_INVALID_PARAMS, "unknown tool: " + name, Value.object().setString("name", name));
      else if (!args.isObject()) err = new RPCError(CODE_INVALID_PARAMS, "params.arguments must be an object");
      else {
        const r = t.handler(ctx, args);
        if (r.rpcError != null) err = r.rpcError;
        else result = r.toValue();
      }
    } else if (m == "resources/read" && this.resources.length > 0) {
      const uri = params.getString("uri");
      let entry: ResourceEntry | null = null;
      let vars = new Map<string, string>();
      for (let i = 0; i < this.resources.length && entry == null; i++) {
        if (!this.resources[i].template && this.resources[i].uri == uri) entry = this.resources[i];
      }
      for (let i = 0; i < this.resources.length && entry == null; i++) {
        const r = this.resources[i];
        if (!r.template) continue;
        const v = matchTemplate(r.uri, uri);
        if (v != null) {
          entry = r;
          vars = v;
        }
      }
      if (entry == null) err = ResourceResult.notFound(uri).rpcError;
      else {
        const r = entry.handler(ctx, uri, vars);
        if (r.rpcError != null) err = r.rpcError;
        else {
          const mime = entry.decl.getString("mimeType");
          for (let i = 0; i < r.contents.length; i++) {
            const c = r.contents.items[i];
            if (c.isObject() && !c.has("uri")) c.setString("uri", uri);
            if (c.isObject() && !c.has("mimeType") && mime.length > 0) c.setString("mimeType", mime);
          }
          result = Value.object().set("contents", r.contents);
        }
      }
    } else if (m == "prompts/get" && this.prompts.length > 0) {
      const name = params.getString("name");
      let p: PromptEntry | null = null;
      for (let i = 0; i < this.prompts.length; i++) if (this.prompts[i].name == name) p = this.prompts[i];
      const args = new Map<string, string>();
      const given = params.get("arguments");
      if (given != null && given.isObject()) {
        for (let i = 0; i < given.keys.length; i++) {
          if (!given.values[i].isString()) err = new RPCError(CODE_INVALID_PARAMS, "prompt arguments must be strings");
          else args.set(given.keys[i], given.values[i].string);
        }
      }
      if (p == null) err = new RPCError(CODE_INVALID_PARAMS, "unknown prompt: " + name, Value.object().setString("name", name));
      if (err == null && p != null) {
        for (let i = 0; i < p.args.length && err == null; i++) {
          const a = p.args[i];
          if (a.required && (!args.has(a.name) || args.get(a.name).length == 0)) {
            err = new RPCError(
              CODE_INVALID_PARAMS,
              "prompt " + name + ': missing required argument "' + a.name + '"',
              Value.object().setString("argument", a.name),
            );
          }
        }
        if (err == null) {
          const r = p.handler(ctx, args);
          if (r.rpcError != null) err = r.rpcError;
          else {
            const v = Value.object();
            const desc = r.description.length > 0 ? r.description : p.decl.getString("description");
            if (desc.length > 0) v.setString("description", desc);
            result = v.set("messages", r.messages);
          }
        }
      }
    } else if (m == "completion/complete" && this.completer != null) {
      let ref = params.get("ref");
      if (ref == null) ref = Value.object();
      const arg = params.get("argument");
      const argName = arg != null ? arg.getString("name") : "";
      const argValue = arg != null ? arg.getString("value") : "";
      const complete = this.completer as CompletionHandler;
      const values = complete(ctx, ref, argName, argValue);
      const out = Value.array();
      for (let i = 0; i < values.length && i < 100; i++) out.push(Value.str(values[i]));
      result = Value.object().set(
        "completion",
        Value.object().set("values", out).setNumber("total", values.length).setBool("hasMore", values.length > 100),
      );
    } else {
      err = new RPCError(CODE_METHOD_NOT_FOUND, "method not found: " + m);
    }
    const resp = Value.object().setString("jsonrpc", "2.0").set("id", id);
    if (err != null) resp.set("error", err.toValue());
    else resp.set("result", result != null ? result : Value.object());
    send(resp);
    answered = true;
  }
}

// ---------------------------------------------------------------------
// URI templates
// ---------------------------------------------------------------------

function varChar(c: i32): bool {
  return c != 0x2f && c != 0x3f && c != 0x23; // not '/', '?', '#'
}

function percentDecode(s: string): string {
  if (s.indexOf("%") < 0) return s;
  const bytes = new Array<u8>();
  const raw = String.UTF8.encode(s);
  const b = Uint8Array.wrap(raw);
  for (let i = 0; i < b.length; i++) {
    if (b[i] == 0x25 && i + 2 < b.length) {
      const h = hexDigit(b[i + 1]);
      const l = hexDigit(b[i + 2]);
      if (h >= 0 && l >= 0) {
        bytes.push(<u8>((h << 4) | l));
        i += 2;
        continue;
      }
    }
    bytes.push(b[i]);
  }
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = bytes[i];
  return String.UTF8.decode(out.buffer);
}

function hexDigit(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/** matchTemplate matches uri against a level-1 URI template; the variables, or null. */
export function matchTemplate(template: string, uri: string): Map<string, string> | null {
  const vars = new Map<string, string>();
  return matchFrom(template, 0, uri, 0, vars) ? vars : null;
}

function matchFrom(t: string, ti: i32, u: string, ui: i32, vars: Map<string, string>): bool {
  while (ti < t.length && t.charCodeAt(ti) != 0x7b) {
    if (ui >= u.length || t.charCodeAt(ti) != u.charCodeAt(ui)) return false;
    ti++;
    ui++;
  }
  if (ti >= t.length) return ui == u.length;
  const close = t.indexOf("}", ti);
  if (close < 0) return false;
  const name = t.substring(ti + 1, close);
  let max = 0;
  while (ui + max < u.length && varChar(u.charCodeAt(ui + max))) max++;
  for (let n = max; n >= 1; n--) {
    vars.set(name, percentDecode(u.substring(ui, ui + n)));
    if (matchFrom(t, close + 1, u, ui + n, vars)) return true;
  }
  vars.delete(name);
  return false;
}

// ---------------------------------------------------------------------
// The context: notifications and requests to the client
// ---------------------------------------------------------------------

// Set once the response is written: later messages are dropped.
let answered = false;
// The SDK's numbering of requests whose key the guest left empty.
let requestSeq = 0;
// Answers read while waiting for another one, by id key.
const stash = new Map<string, Value>();

function send(m: Value): void {
  if (answered) return;
  if (!writeLine(stringify(m))) writeStderr("wasmcp: writing to stdout failed");
}

function notification(method: string, params: Value): Value {
  return Value.object().setString("jsonrpc", "2.0").setString("method", method).set("params", params);
}

// idKey is the normal form of a JSON-RPC id: "s:" and a string, "n:" and a number.
function idKey(id: Value): string {
  if (id.isString()) return "s:" + id.string;
  if (id.isNumber()) return "n:" + stringify(id);
  return "?:" + stringify(id);
}

function isDigits(s: string): bool {
  if (s.length == 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

function keyID(key: string): Value {
  return isDigits(key) ? Value.num(<f64>I64.parseInt(key)) : Value.str(key);
}

/** The host's answer to Context.http (ABI section 8). */
export class HTTPResponse {
  /** Whether the host made the request (any status); when false, reason and message say why. */
  ok: bool = false;
  /** The final HTTP status, after redirects. */
  status: i32 = 0;
  /** Where the response came from, after redirects. */
  url: string = "";
  /** The response headers: {"Name": ["value", …]}. */
  headers: Value = Value.object();
  /** The body, decoded (binary safe). */
  body: Uint8Array = new Uint8Array(0);
  /** On failure: "policy_refused", "invalid_request", "dns", "connect", "timeout", "too_large", "tls", "protocol", or "sdk". */
  reason: string = "";
  /** On failure: what happened. */
  message: string = "";

  /** The body as UTF-8 text. */
  text(): string {
    return String.UTF8.decode(this.body.buffer.slice(this.body.byteOffset, this.body.byteOffset + this.body.byteLength));
  }

  /** The first value of a response header (names compared case-insensitively), or "". */
  header(name: string): string {
    const want = name.toLowerCase();
    for (let i = 0; i < this.headers.keys.length; i++) {
      if (this.headers.keys[i].toLowerCase() == want) {
        const v = this.headers.values[i];
        if (v.isArray() && v.length > 0 && v.items[0].isString()) return v.items[0].string;
      }
    }
    return "";
  }
}

/** The client's answer to a request (Context.wait, elicit, sample, listRoots). */
export class Answer {
  /** Whether the client answered with a result. */
  ok: bool = false;
  /** The result (an object) when ok. */
  result: Value = Value.object();
  /** The error's code when not ok (CODE_MISSING_CAPABILITY: the client cannot answer this kind of request). */
  code: i32 = 0;
  /** The error's message when not ok. */
  message: string = "";
  /** The error's data, if any. */
  data: Value | null = null;

  /** For an elicitation: "accept", "decline" or "cancel" ("" when not ok). */
  get action(): string {
    return this.ok ? this.result.getString("action") : "";
  }

  /** For an accepted elicitation: the submitted content (an object; empty otherwise). */
  get content(): Value {
    const c = this.result.get("content");
    return c != null && c.isObject() ? c : Value.object();
  }

  static failed(code: i32, message: string): Answer {
    const a = new Answer();
    a.code = code;
    a.message = message;
    return a;
  }
}

/**
 * Context is the request a handler serves and its channel to the client:
 * notifications before the answer, and requests whose answers the host
 * writes back on stdin.
 */
export class Context {
  /** params._meta (an object; empty when the request has none). */
  meta: Value;

  constructor(public method: string, public params: Value) {
    const m = params.get("_meta");
    this.meta = m != null && m.isObject() ? m : Value.object();
  }

  /** The request's progress token, or null when the client asked for no progress. */
  progressToken(): Value | null {
    const t = this.meta.get("progressToken");
    if (t == null || t.isNull()) return null;
    return t;
  }

  /**
   * Sends notifications/progress when the client asked for progress.
   * total <= 0 (unknown) and an empty message are left out.
   */
  progress(progress: f64, total: f64 = 0, message: string = ""): void {
    const tok = this.progressToken();
    if (tok == null) return;
    const p = Value.object().set("progressToken", tok).setNumber("progress", progress);
    if (total > 0) p.setNumber("total", total);
    if (message.length > 0) p.setString("message", message);
    send(notification("notifications/progress", p));
  }

  /** Sends notifications/message: an MCP log level ("debug" … "emergency") and a text. */
  log(level: string, text: string, logger: string = ""): void {
    this.logValue(level, Value.str(text), logger);
  }

  /** log with any JSON value as data. */
  logValue(level: string, data: Value, logger: string = ""): void {
    const p = Value.object().setString("level", level);
    if (logger.length > 0) p.setString("logger", logger);
    send(notification("notifications/message", p.set("data", data)));
  }

  /** Sends any notification (params: an object). */
  notify(method: string, params: Value = Value.object()): void {
    send(notification(method, params));
  }

  /** notifications/tools/list_changed */
  toolsListChanged(): void {
    this.notify("notifications/tools/list_changed");
  }
  /** notifications/prompts/list_changed */
  promptsListChanged(): void {
    this.notify("notifications/prompts/list_changed");
  }
  /** notifications/resources/list_changed */
  resourcesListChanged(): void {
    this.notify("notifications/resources/list_changed");
  }
  /** notifications/resources/updated for uri (forwarded only for a URI the module serves). */
  resourceUpdated(uri: string): void {
    this.notify("notifications/resources/updated", Value.object().setString("uri", uri));
  }

  /** The capabilities the client declared (MCP 2026-07-28 requests carry them), or null. */
  clientCapabilities(): Value | null {
    const c = this.meta.get("io.modelcontextprotocol/clientCapabilities");
    return c != null && c.isObject() ? c : null;
  }

  /** The state this call left with setState in its previous run, or null on a first run. */
  state(): Value | null {
    const s = this.meta.get("wasmcp/state");
    return s != null && !s.isNull() ? s : null;
  }

  /** Leaves state for the call's next run (signed by the host, not encrypted: no secrets). */
  setState(state: Value): void {
    send(notification("wasmcp/state", Value.object().set("state", state)));
  }

  /**
   * Sends a request to the client under key without waiting, and returns
   * the key. Under MCP 2026-07-28 the key is what the client answers: ask
   * the same questions under the same keys on every run. A key chosen by
   * the guest must not be all digits; "" takes the SDK's next number.
   */
  start(key: string, method: string, params: Value): string {
    if (key.length == 0) {
      requestSeq++;
      key = requestSeq.toString();
    } else if (isDigits(key)) {
      abort("wasmcp: request key " + key + " must not be all digits (the SDK numbers its own requests)");
    }
    send(Value.object().setString("jsonrpc", "2.0").set("id", keyID(key)).setString("method", method).set("params", params));
    return key;
  }

  /**
   * Waits for the answer to the request sent under key; answers to other
   * requests that arrive first are kept for their own wait.
   */
  wait(key: string): Answer {
    const want = idKey(keyID(key));
    let msg: Value | null = null;
    if (stash.has(want)) {
      msg = stash.get(want);
      stash.delete(want);
    }
    while (msg == null) {
      const line = readLine();
      if (line == null) return Answer.failed(CODE_INTERNAL_ERROR, "stdin closed before the answer arrived");
      if (line.length == 0) continue;
      const m = parse(line);
      if (m == null || !m.isObject() || m.has("method") || !m.has("id") || !(m.has("result") || m.has("error"))) {
        writeStderr("wasmcp: ignoring a line on stdin that is not an answer");
        continue;
      }
      const k = idKey(m.get("id") as Value);
      if (k == want) msg = m;
      else stash.set(k, m);
    }
    const got = msg as Value;
    const a = new Answer();
    const e = got.get("error");
    if (e != null) {
      a.code = <i32>e.getNumber("code");
      a.message = e.getString("message");
      a.data = e.get("data");
      return a;
    }
    const r = got.get("result");
    if (r == null || !r.isObject()) return Answer.failed(CODE_INTERNAL_ERROR, "the answer's result is not an object");
    a.ok = true;
    a.result = r;
    return a;
  }

  /** start then wait. */
  request(key: string, method: string, params: Value): Answer {
    return this.wait(this.start(key, method, params));
  }

  /**
   * Asks the user for a form (elicitation/create): requestedSchema is a JSON
   * Schema text of an object with flat primitive properties. On success
   * Answer.action is accept, decline or cancel, and Answer.content the form.
   */
  elicit(key: string, message: string, requestedSchema: string): Answer {
    return this.wait(this.startElicit(key, message, requestedSchema));
  }

  /** Sends elicitation/create without waiting; returns the key. */
  startElicit(key: string, message: string, requestedSchema: string): string {
    const schema = parseSchema("elicit: requestedSchema", requestedSchema);
    return this.start(key, "elicitation/create", Value.object().setString("message", message).set("requestedSchema", schema));
  }

  /**
   * Asks the client's model for a completion (sampling/createMessage);
   * params are MCP's (messages, maxTokens, systemPrompt, …). On success
   * the result has role, content, model and stopReason.
   */
  sample(key: string, params: Value): Answer {
    return this.request(key, "sampling/createMessage", params);
  }

  /** A sampling request with one user text message. */
  sampleText(key: string, prompt: string, maxTokens: i32): Answer {
    const msg = Value.object().setString("role", "user").set("content", Value.object().setString("type", "text").setString("text", prompt));
    return this.sample(key, Value.object().set("messages", Value.array().push(msg)).setNumber("maxTokens", maxTokens));
  }

  /**
   * Makes one outbound HTTP request through the host (the ABI's section 8,
   * ABI 1.1), which checks it against the module's policy ([http] in
   * NAME.policy.toml; without it every request is refused) and follows
   * redirects. headers is null or {"Name": ["value"]}; body may be empty;
   * timeoutMs <= 0 means the policy's. The requests share the SDK's
   * numbering with requests to the client left without a key.
   */
  http(method: string, url: string, headers: Value | null = null, body: Uint8Array | null = null, timeoutMs: i32 = 0): HTTPResponse {
    const p = Value.object().setString("method", method.length > 0 ? method : "GET").setString("url", url);
    if (headers != null) p.set("headers", headers);
    if (body != null && body.length > 0) p.setString("bodyBase64", encodeBase64(body));
    if (timeoutMs > 0) p.setNumber("timeoutMs", timeoutMs);
    const a = this.request("", "wasmcp/http", p);
    const r = new HTTPResponse();
    if (!a.ok) {
      const d = a.data;
      r.reason = d != null && d.isObject() && d.has("reason") ? d.getString("reason") : a.code == CODE_METHOD_NOT_FOUND ? "unknown" : "sdk";
      r.message = a.message;
      return r;
    }
    r.status = <i32>a.result.getNumber("status");
    r.url = a.result.getString("url");
    const h = a.result.get("headers");
    if (h != null && h.isObject()) r.headers = h;
    const b64 = a.result.get("bodyBase64");
    if (b64 != null && b64.isString()) {
      const decoded = decodeBase64(b64.string);
      if (decoded == null) {
        r.reason = "sdk";
        r.message = "the host's bodyBase64 is not base64";
        return r;
      }
      r.body = decoded;
    } else {
      r.body = Uint8Array.wrap(String.UTF8.encode(a.result.getString("body")));
    }
    r.ok = true;
    return r;
  }

  /** Asks the client for its roots (roots/list); on success the result is {"roots":[{uri,name?}]}. */
  listRoots(key: string): Answer {
    return this.request(key, "roots/list", Value.object());
  }
}
