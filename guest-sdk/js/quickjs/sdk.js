// wasmcp's stand-in for the server API of the official TypeScript SDK
// (@modelcontextprotocol/sdk): what a server written for it uses to
// declare its tools, resources and prompts, mapped onto the runner's own
// McpServer (module "wasmcp", c/prelude.js). The host's bundler serves
// this file for the SDK's import paths (sdk.go, SDKPaths), so a server
// written for the SDK runs as a script with its import lines unchanged.
//
// It runs where the script runs: its top level (every registration, and
// each zod schema turned into JSON Schema) at load, in the snapshot; a
// call only validates its arguments with the tool's zod schema and runs
// the handler. There is no transport and no session: connect() and
// close() do nothing, the host serves the protocol.
import { McpServer as Native } from "wasmcp";
import * as z from "zod";

// --- zod ---------------------------------------------------------------
// The user's own zod (node_modules beside the script; an empty module
// when there is none) turns schemas into JSON Schema, as the SDK does
// (draft-7, the input side of pipes).
function isZodSchema(v) {
	return v !== null && typeof v === "object" &&
		("_zod" in v || "_def" in v || (typeof v.parse === "function" && typeof v.safeParse === "function"));
}
function isRawShape(v) {
	if (v === null || typeof v !== "object" || isZodSchema(v)) return false;
	const values = Object.values(v);
	return values.length === 0 || values.some(isZodSchema);
}
function needZod(what) {
	if (typeof z.toJSONSchema !== "function" || typeof z.object !== "function") {
		throw new Error(what + ": zod schemas need zod 4 installed beside the script (npm install zod)");
	}
}
// zodObject is a schema argument as a zod schema: a raw shape becomes an
// object of it; undefined stays undefined.
function zodObject(v, what) {
	if (v === undefined || v === null) return undefined;
	if (isRawShape(v)) {
		needZod(what);
		return z.object(v);
	}
	if (!isZodSchema(v)) throw new Error(what + " must be a zod schema or a raw shape of zod schemas");
	if (!("_zod" in v)) throw new Error(what + ": only zod 4 schemas are supported (this one is zod 3)");
	return v;
}
function jsonSchema(schema, io, what) {
	needZod(what);
	return z.toJSONSchema(schema, { target: "draft-7", io });
}
// parseErrorMessage is the SDK's text of a failed parse: each issue's
// message, "at" its path when it has one, one per line.
function parseErrorMessage(error) {
	if (error && Array.isArray(error.issues) && error.issues.length > 0) {
		return error.issues.map((i) => (i.path && i.path.length ? i.message + " at " + i.path.map(String).join(".") : i.message)).join("\n");
	}
	return error && typeof error.message === "string" ? error.message : String(error);
}
async function safeParse(schema, data) {
	return typeof schema.safeParseAsync === "function" ? schema.safeParseAsync(data) : z.safeParseAsync(schema, data);
}

// --- errors --------------------------------------------------------------
export const ErrorCode = Object.freeze({
	ConnectionClosed: -32000, RequestTimeout: -32001, UrlElicitationRequired: -32042,
	ParseError: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602, InternalError: -32603,
});
export class McpError extends Error {
	constructor(code, message, data) {
		super("MCP error " + code + ": " + message);
		this.code = code;
		this.data = data;
		this.name = "McpError";
	}
}
function toolError(message) {
	return { content: [{ type: "text", text: message }], isError: true };
}
function messageOf(e) {
	return e instanceof Error ? e.message : String(e);
}

// --- a call's `extra` ----------------------------------------------------
// current is the context of the call this instance serves (one call per
// instance), for server.sendLoggingMessage.
let current;
function notify(ctx, n) {
	const method = n && n.method;
	const p = (n && n.params) || {};
	if (method === "notifications/progress") ctx.progress(p.progress, p.total, p.message);
	else if (method === "notifications/message") ctx.log(p.level, p.data);
	else throw new Error("wasmcp: a script cannot send " + String(method));
}
function request(ctx, r) {
	const method = r && r.method;
	const p = (r && r.params) || {};
	if (method === "elicitation/create") return ctx.elicit(p);
	if (method === "sampling/createMessage") return ctx.sample(p);
	if (method === "roots/list") return ctx.listRoots().then((roots) => ({ roots }));
	return Promise.reject(new Error("wasmcp: a script cannot send the request " + String(method)));
}
// extra is the SDK's RequestHandlerExtra over the runner's context: the
// caller (authInfo: its name and scopes, never a token), _meta,
// notifications (progress, log) and requests to the client.
function extraOf(ctx) {
	current = ctx;
	const p = ctx.principal;
	return {
		signal: ctx.signal,
		_meta: ctx._meta,
		authInfo: p ? { token: "", clientId: String(p.name), scopes: Array.isArray(p.scopes) ? p.scopes.slice() : [], extra: { principal: p } } : undefined,
		sendNotification: (n) => { notify(ctx, n); return Promise.resolve(); },
		sendRequest: (r) => request(ctx, r),
	};
}

// --- URLs ----------------------------------------------------------------
// A resource handler of the SDK gets a URL; the runner has none, so it
// gets the parts handlers read.
function urlOf(s) {
	if (typeof URL === "function") {
		try { return new URL(s); } catch (_) { /* below */ }
	}
	const m = /^([A-Za-z][A-Za-z0-9+.-]*:)(?:\/\/([^/?#]*))?([^?#]*)(\?[^#]*)?(#.*)?$/.exec(s) || [];
	const host = m[2] || "";
	return {
		href: s, protocol: m[1] || "", host, hostname: host.replace(/:\d*$/, ""), port: (/:(\d*)$/.exec(host) || [])[1] || "",
		pathname: m[3] || "", search: m[4] || "", hash: m[5] || "",
		toString() { return s; }, toJSON() { return s; },
	};
}

// --- registrations -------------------------------------------------------
// What registerTool and friends answer: the SDK's handle. A script's
// tools are fixed when it loads, so changing one is an error that says so.
function fixed(kind, name) {
	const no = () => { throw new Error("wasmcp: " + kind + " " + name + " is fixed when the script loads: it cannot be enabled, disabled, updated or removed"); };
	return { enabled: true, enable: no, disable: no, update: no, remove: no };
}

export class ResourceTemplate {
	constructor(uriTemplate, callbacks) {
		this._uriTemplate = String(uriTemplate);
		this._callbacks = callbacks || {};
	}
	get uriTemplate() { return { toString: () => this._uriTemplate }; }
	get listCallback() { return this._callbacks.list; }
	completeCallback(variable) { return this._callbacks.complete && this._callbacks.complete[variable]; }
}

class Server {
	constructor(owner) { this._owner = owner; }
	// sendLoggingMessage sends notifications/message in a call; at the top
	// level (no client yet) it goes to the server's log.
	sendLoggingMessage(params) {
		if (current) current.log(params.level, params.data);
		else console.log("[" + String(params && params.level) + "]", params && params.data);
		return Promise.resolve();
	}
	notification(n) {
		if (current) notify(current, n);
		return Promise.resolve();
	}
	getClientCapabilities() { return undefined; }
	getClientVersion() { return undefined; }
	registerCapabilities() {}
	connect() { return Promise.resolve(); }
	close() { return Promise.resolve(); }
	setRequestHandler(schema) {
		throw new Error("wasmcp: a script declares tools, resources and prompts through McpServer; low-level request handlers are not served");
	}
}

export class McpServer {
	constructor(serverInfo, options) {
		this._native = new Native(serverInfo, options && options.instructions ? { instructions: options.instructions } : undefined);
		this.server = new Server(this);
		this._names = { tool: new Set(), prompt: new Set() };
	}
	// connect and close do nothing: wasmcp serves the protocol.
	connect() { return Promise.resolve(); }
	close() { return Promise.resolve(); }
	isConnected() { return true; }
	sendLoggingMessage(params) { return this.server.sendLoggingMessage(params); }
	sendToolListChanged() {}
	sendResourceListChanged() {}
	sendPromptListChanged() {}

	registerTool(name, config, cb) {
		config = config || {};
		return this._tool(String(name), config.title, config.description, config.inputSchema, config.outputSchema, config.annotations, config._meta, cb);
	}
	// tool is the SDK's older form: tool(name, [description], [paramsSchema, [annotations]] | [annotations], cb).
	tool(name, ...rest) {
		let description, inputSchema, annotations;
		if (typeof rest[0] === "string") description = rest.shift();
		if (rest.length > 1) {
			const first = rest[0];
			if (isRawShape(first)) {
				inputSchema = rest.shift();
				if (rest.length > 1 && typeof rest[0] === "object" && rest[0] !== null && !isRawShape(rest[0])) annotations = rest.shift();
			} else if (typeof first === "object" && first !== null) {
				if (Object.values(first).some((v) => typeof v === "object" && v !== null)) {
					throw new Error("Tool " + name + " expected a Zod schema or ToolAnnotations, but received an unrecognized object");
				}
				annotations = rest.shift();
			}
		}
		return this._tool(String(name), undefined, description, inputSchema, undefined, annotations, undefined, rest[0]);
	}
	_tool(name, title, description, inputSchema, outputSchema, annotations, _meta, cb) {
		if (this._names.tool.has(name)) throw new Error("Tool " + name + " is already registered");
		if (typeof cb !== "function") throw new TypeError("tool " + name + ": the callback is not a function");
		const input = zodObject(inputSchema, "tool " + name + ": inputSchema");
		const output = zodObject(outputSchema, "tool " + name + ": outputSchema");
		const config = {
			title, description, annotations, _meta,
			inputSchema: input ? jsonSchema(input, "input", "tool " + name) : { type: "object", properties: {} },
			outputSchema: output ? jsonSchema(output, "output", "tool " + name) : undefined,
		};
		this._native.registerTool(name, config, async (args, ctx) => {
			const extra = extraOf(ctx);
			try {
				let result;
				if (input) {
					const parsed = await safeParse(input, args === undefined || args === null ? {} : args);
					if (!parsed.success) {
						return toolError(new McpError(ErrorCode.InvalidParams, "Input validation error: Invalid arguments for tool " + name + ": " + parseErrorMessage(parsed.error)).message);
					}
					result = await cb(parsed.data, extra);
				} else {
					result = await cb(extra);
				}
				if (output && result && typeof result === "object" && "content" in result && !result.isError) {
					if (!result.structuredContent) {
						return toolError(new McpError(ErrorCode.InvalidParams, "Output validation error: Tool " + name + " has an output schema but no structured content was provided").message);
					}
					const checked = await safeParse(output, result.structuredContent);
					if (!checked.success) {
						return toolError(new McpError(ErrorCode.InvalidParams, "Output validation error: Invalid structured content for tool " + name + ": " + parseErrorMessage(checked.error)).message);
					}
				}
				return result;
			} catch (e) {
				return toolError(messageOf(e));
			}
		});
		this._names.tool.add(name);
		return fixed("tool", name);
	}

	registerResource(name, uriOrTemplate, config, cb) {
		return this._resource(String(name), uriOrTemplate, config || {}, cb);
	}
	// resource is the SDK's older form: resource(name, uriOrTemplate, [metadata], cb).
	resource(name, uriOrTemplate, ...rest) {
		const metadata = rest.length > 1 && typeof rest[0] === "object" && rest[0] !== null ? rest.shift() : {};
		return this._resource(String(name), uriOrTemplate, metadata, rest[0]);
	}
	_resource(name, uriOrTemplate, config, cb) {
		if (typeof cb !== "function") throw new TypeError("resource " + name + ": the callback is not a function");
		const template = uriOrTemplate instanceof ResourceTemplate;
		const uri = template ? uriOrTemplate.uriTemplate.toString() : String(uriOrTemplate);
		if (template && uriOrTemplate.listCallback) {
			console.warn("resource template " + name + ": its list callback is not served (a script's resources are listed as declared)");
		}
		if (template || uri.includes("{")) {
			this._native.registerResource(name, uri, config, (u, vars, ctx) => cb(urlOf(u), vars, extraOf(ctx)));
		} else {
			this._native.registerResource(name, uri, config, (u, ctx) => cb(urlOf(u), extraOf(ctx)));
		}
		return fixed("resource", name);
	}

	registerPrompt(name, config, cb) {
		config = config || {};
		return this._prompt(String(name), config.title, config.description, config.argsSchema, cb);
	}
	// prompt is the SDK's older form: prompt(name, [description], [argsSchema], cb).
	prompt(name, ...rest) {
		const description = typeof rest[0] === "string" ? rest.shift() : undefined;
		const argsSchema = rest.length > 1 ? rest.shift() : undefined;
		return this._prompt(String(name), undefined, description, argsSchema, rest[0]);
	}
	_prompt(name, title, description, argsSchema, cb) {
		if (this._names.prompt.has(name)) throw new Error("Prompt " + name + " is already registered");
		if (typeof cb !== "function") throw new TypeError("prompt " + name + ": the callback is not a function");
		const args = zodObject(argsSchema, "prompt " + name + ": argsSchema");
		const shape = args && args._zod && args._zod.def && args._zod.def.shape;
		const declared = shape ? Object.keys(shape).map((k) => {
			const f = shape[k];
			const optional = f && f._zod && f._zod.optin === "optional";
			return { name: k, description: f && f.description, required: !optional };
		}) : undefined;
		this._native.registerPrompt(name, { title, description, arguments: declared }, async (a, ctx) => {
			const extra = extraOf(ctx);
			if (!args) return cb(extra);
			const parsed = await safeParse(args, a === undefined || a === null ? {} : a);
			if (!parsed.success) {
				throw new McpError(ErrorCode.InvalidParams, "Invalid arguments for prompt " + name + ": " + parseErrorMessage(parsed.error));
			}
			return cb(parsed.data, extra);
		});
		this._names.prompt.add(name);
		return fixed("prompt", name);
	}
}

// --- transports ------------------------------------------------------------
// The SDK's server transports: wasmcp serves the protocol (stdio, HTTP),
// so a script's transport is never started.
export class StdioServerTransport {
	constructor() {}
	start() { return Promise.resolve(); }
	close() { return Promise.resolve(); }
	send() { return Promise.resolve(); }
}
