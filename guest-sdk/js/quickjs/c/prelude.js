// The JavaScript half of the wasmcp runner's API: module "wasmcp"
// (McpServer) and the globals a script may use (console, fetch, crypto,
// timers, TextEncoder/TextDecoder). `native` is the C half (runner.c).
// It answers the functions runner.c calls: finish (after the script's
// top level), start (a handler, as a state the C side waits on),
// runTimer and describeError.
(function (native) {
	"use strict";
	const g = globalThis;
	// Math.random draws from the host on every call: a generator seeded
	// at start-up would repeat its sequence in every call's instance.
	Object.defineProperty(Math, "random", { value: native.random, writable: true, configurable: true, enumerable: false });
	const hide = (name, value) => Object.defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });

	// --- results -----------------------------------------------------
	function textBlock(text) { return { type: "text", text: String(text) }; }
	function toolResult(v) {
		if (typeof v === "string") return { content: [textBlock(v)] };
		if (v === undefined || v === null) return { content: [] };
		if (typeof v === "object" && Array.isArray(v.content)) {
			const out = { content: v.content.map(contentBlock) };
			if (v.structuredContent !== undefined) out.structuredContent = v.structuredContent;
			if (v.isError) out.isError = true;
			if (v._meta) out._meta = v._meta;
			return out;
		}
		// Any other value is the tool's structured result; its text is
		// the value as JSON, as the MCP spec recommends.
		return { content: [textBlock(JSON.stringify(v))], structuredContent: v };
	}
	function contentBlock(c) {
		if (typeof c === "string") return textBlock(c);
		if (c && (c.type === "image" || c.type === "audio") && c.data instanceof Uint8Array) {
			return Object.assign({}, c, { data: base64(c.data) });
		}
		return c;
	}
	function resourceContents(uri, mimeType, v) {
		const base = mimeType === undefined ? { uri } : { uri, mimeType };
		if (typeof v === "string") return { contents: [Object.assign(base, { text: v })] };
		if (v && Array.isArray(v.contents)) return { contents: v.contents.map((c) => Object.assign({}, base, c)) };
		if (v && (v.text !== undefined || v.blob !== undefined)) return { contents: [Object.assign(base, v)] };
		throw new TypeError("a resource handler returns a string, { text }, { blob } or { contents: [...] }");
	}
	function promptResult(v) {
		if (typeof v === "string") return { messages: [{ role: "user", content: textBlock(v) }] };
		if (v && Array.isArray(v.messages)) {
			return Object.assign({}, v, {
				messages: v.messages.map((m) => ({ role: m.role || "user", content: typeof m.content === "string" ? textBlock(m.content) : contentBlock(m.content) })),
			});
		}
		throw new TypeError("a prompt handler returns a string or { messages: [...] }");
	}

	// --- the call context ----------------------------------------------
	function principal(meta) {
		const p = meta["wasmcp/principal"];
		return p && typeof p === "object" ? p : undefined;
	}
	function makeContext() {
		const meta = JSON.parse(native.meta());
		const ctx = {
			_meta: meta,
			principal: principal(meta),
			progress(progress, total, message) { native.progress(Number(progress), total === undefined ? undefined : Number(total), message); },
			log(level, data) { native.notify("notifications/message", JSON.stringify({ level: String(level), data: logData(data) })); },
			elicit(message, requestedSchema, options) {
				if (message && typeof message === "object") { options = message; message = options.message; requestedSchema = options.requestedSchema; }
				const params = { message: String(message), requestedSchema: requestedSchema || { type: "object" } };
				return ask("elicitation/create", params, options, (r) => r);
			},
			sample(params, options) { return ask("sampling/createMessage", params, options, (r) => r); },
			listRoots(options) { return ask("roots/list", {}, options, (r) => r.roots || []); },
		};
		// The official SDK's names for the same things.
		ctx.sendProgress = ctx.progress;
		ctx.sendLog = ctx.log;
		ctx.signal = neverAborted;
		return ctx;
	}
	// ask sends a request to the client under options.key (or the SDK's
	// next number) and answers a Promise of its result.
	function ask(method, params, options, pick) {
		const key = options && options.key !== undefined ? String(options.key) : undefined;
		return new Promise((resolve) => resolve(pick(JSON.parse(native.ask(method, JSON.stringify(params), key)))));
	}
	// logData is what a log notification carries: the value as JSON, or
	// its text when JSON has no form for it (a function, a symbol, a
	// BigInt, a cycle).
	function logData(data) {
		if (data === undefined) return null;
		try {
			const s = JSON.stringify(data);
			if (s !== undefined) return JSON.parse(s);
		} catch (e) { /* below */ }
		return String(data);
	}
	// A cancelled call ends the instance, so no handler ever sees its
	// signal fire; it is there for code that passes it on.
	const neverAborted = Object.freeze({ aborted: false, reason: undefined, addEventListener() {}, removeEventListener() {}, throwIfAborted() {} });

	// --- McpServer -------------------------------------------------------
	function check(fn, what) {
		if (typeof fn !== "function") throw new TypeError(what + ": the handler is not a function");
	}
	const toolNameRe = /^[A-Za-z0-9_.\-\/]{1,128}$/;
	const reg = { server: null, tools: new Map(), resources: new Map(), templates: [], prompts: new Map(), desc: null };
	function server() {
		if (!reg.server) throw new TypeError("create the server with `new McpServer({name, version})` before registering on it");
		return reg.server;
	}
	function plain(o) { return o === undefined ? undefined : JSON.parse(JSON.stringify(o)); }
	function schema(v, what, input) {
		if (v === undefined || v === null) return input ? { type: "object" } : undefined;
		if (typeof v !== "object" || Array.isArray(v)) throw new TypeError(what + " is not a JSON Schema object");
		const out = plain(v);
		if (!input && out.type !== "object") throw new TypeError(what + ": an outputSchema must say \"type\": \"object\" at its root");
		return out;
	}
	function templateRe(t) {
		const names = [];
		const re = t.split(/(\{[^}]*\})/).map((part) => {
			if (part.startsWith("{") && part.endsWith("}")) { names.push(part.slice(1, -1)); return "([^/?#]+)"; }
			return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
		}).join("");
		return { re: new RegExp("^" + re + "$"), names };
	}
	class McpServer {
		constructor(info, options) {
			if (reg.server) throw new TypeError("a script creates one McpServer");
			info = info || {};
			reg.server = {
				name: String(info.name || native.scriptName().replace(/\.[^.]*$/, "")), version: String(info.version || "0.0.0"),
				instructions: options && options.instructions ? String(options.instructions) : undefined,
			};
		}
		registerTool(name, config, handler) {
			if (typeof config === "function") { handler = config; config = {}; }
			name = String(name);
			check(handler, "tool " + name);
			config = config || {};
			server();
			if (!toolNameRe.test(name)) throw new TypeError("tool name " + JSON.stringify(name) + " must be 1 to 128 characters from A-Z a-z 0-9 _ . - /");
			if (reg.tools.has(name)) throw new TypeError("duplicate tool " + name);
			const def = {
				name, title: config.title, description: config.description,
				inputSchema: schema(config.inputSchema, "tool " + name + ": inputSchema", true),
				outputSchema: schema(config.outputSchema, "tool " + name + ": outputSchema", false),
				annotations: plain(config.annotations), _meta: plain(config._meta),
			};
			reg.tools.set(name, { def, fn: async (args, ctx) => toolResult(await handler(args, ctx)) });
			native.register(0, name);
			return this;
		}
		tool(name, config, handler) { return this.registerTool(name, config, handler); }
		registerResource(name, uri, config, handler) {
			if (typeof config === "function") { handler = config; config = {}; }
			name = String(name); uri = String(uri);
			check(handler, "resource " + uri);
			config = config || {};
			server();
			const def = Object.assign(plain(config), { name }, uri.includes("{") ? { uriTemplate: uri } : { uri });
			if (uri.includes("{")) {
				if (reg.templates.some((t) => t.def.uriTemplate === uri)) throw new TypeError("duplicate resource template " + uri);
				reg.templates.push(Object.assign({ def, fn: async (u, vars, ctx) => resourceContents(u, def.mimeType, await handler(u, vars, ctx)) }, templateRe(uri)));
			} else {
				if (reg.resources.has(uri)) throw new TypeError("duplicate resource " + uri);
				reg.resources.set(uri, { def, fn: async (u, vars, ctx) => resourceContents(u, def.mimeType, await handler(u, ctx)) });
			}
			native.register(1, uri);
			return this;
		}
		resource(name, uri, config, handler) { return this.registerResource(name, uri, config, handler); }
		registerPrompt(name, config, handler) {
			if (typeof config === "function") { handler = config; config = {}; }
			name = String(name);
			check(handler, "prompt " + name);
			config = config || {};
			server();
			if (reg.prompts.has(name)) throw new TypeError("duplicate prompt " + name);
			const def = { name, title: config.title, description: config.description, arguments: plain(config.arguments) };
			reg.prompts.set(name, { def, fn: async (args, ctx) => promptResult(await handler(args, ctx)) });
			native.register(2, name);
			return this;
		}
		prompt(name, config, handler) { return this.registerPrompt(name, config, handler); }
	}

	// --- globals ---------------------------------------------------------
	function format(args) {
		return args.map((a) => {
			if (typeof a === "string") return a;
			if (a instanceof Error) return a.stack || String(a);
			try { const s = JSON.stringify(a); return s === undefined ? String(a) : s; } catch (e) { return String(a); }
		}).join(" ");
	}
	const console = {};
	for (const level of ["log", "info", "warn", "error", "debug", "trace"]) {
		console[level] = (...args) => native.write(format(args));
	}
	hide("console", console);

	// Timers fire only while a call waits for its handler's promise,
	// earliest first, in real time (the host's deadline still ends the
	// call): runTimer, called by runner.c, runs the next one.
	const timers = { next: 0, queue: [] };
	function setTimer(fn, ms, interval) {
		if (typeof fn !== "function") throw new TypeError("setTimeout: the callback is not a function");
		ms = Number(ms) || 0;
		if (!(ms > 0)) ms = 0;
		const id = ++timers.next;
		timers.queue.push({ id, due: native.now() + ms, every: ms, fn, interval, seq: id });
		return id;
	}
	function clearTimer(id) {
		const i = timers.queue.findIndex((t) => t.id === id);
		if (i >= 0) timers.queue.splice(i, 1);
	}
	function runTimer() {
		if (timers.queue.length === 0) return false;
		timers.queue.sort((a, b) => a.due - b.due || a.seq - b.seq);
		const t = timers.queue[0];
		const wait = t.due - native.now();
		if (wait > 0) native.sleep(wait);
		if (t.interval) { t.due += Math.max(t.every, 1); t.seq = ++timers.next; } else timers.queue.shift();
		t.fn();
		return true;
	}
	hide("setTimeout", (fn, ms, ...args) => setTimer(typeof fn === "function" ? () => fn(...args) : fn, ms, false));
	hide("setInterval", (fn, ms, ...args) => setTimer(typeof fn === "function" ? () => fn(...args) : fn, ms, true));
	hide("clearTimeout", (id) => { if (id !== undefined) clearTimer(id); });
	hide("clearInterval", (id) => { if (id !== undefined) clearTimer(id); });
	hide("queueMicrotask", (fn) => { Promise.resolve().then(fn); });

	const crypto = {
		getRandomValues(ta) {
			if (!ArrayBuffer.isView(ta) || ta instanceof Float32Array || ta instanceof Float64Array) throw new TypeError("crypto.getRandomValues: an integer typed array is required");
			new Uint8Array(ta.buffer, ta.byteOffset, ta.byteLength).set(new Uint8Array(native.randomBytes(ta.byteLength)));
			return ta;
		},
		randomUUID() {
			const b = crypto.getRandomValues(new Uint8Array(16));
			b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
			const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
			return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
		},
	};
	hide("crypto", crypto);

	class TextEncoder {
		get encoding() { return "utf-8"; }
		encode(s) { return new Uint8Array(native.utf8Encode(String(s === undefined ? "" : s).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD"))); }
	}
	class TextDecoder {
		get encoding() { return "utf-8"; }
		decode(b) {
			if (b === undefined) return "";
			const u = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
			return native.utf8Decode(u.slice().buffer);
		}
	}
	hide("TextEncoder", TextEncoder);
	hide("TextDecoder", TextDecoder);

	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	function base64(u) {
		let s = "";
		for (let i = 0; i < u.length; i += 3) {
			const n = (u[i] << 16) | ((u[i + 1] || 0) << 8) | (u[i + 2] || 0);
			s += b64[(n >> 18) & 63] + b64[(n >> 12) & 63] + (i + 1 < u.length ? b64[(n >> 6) & 63] : "=") + (i + 2 < u.length ? b64[n & 63] : "=");
		}
		return s;
	}
	function unbase64(s) {
		s = s.replace(/[^A-Za-z0-9+/]/g, "");
		const out = [];
		for (let i = 0; i < s.length; i += 4) {
			const n = (b64.indexOf(s[i]) << 18) | (b64.indexOf(s[i + 1]) << 12) | ((b64.indexOf(s[i + 2]) & 63) << 6) | (b64.indexOf(s[i + 3]) & 63);
			out.push((n >> 16) & 255);
			if (i + 2 < s.length) out.push((n >> 8) & 255);
			if (i + 3 < s.length) out.push(n & 255);
		}
		return new Uint8Array(out);
	}
	hide("btoa", (s) => base64(Uint8Array.from(String(s), (c) => c.charCodeAt(0) & 255)));
	hide("atob", (s) => String.fromCharCode(...unbase64(String(s))));

	class Headers {
		constructor(init) {
			this._h = {};
			if (init instanceof Headers) init = init._h;
			if (Array.isArray(init)) for (const [k, v] of init) this.append(k, v);
			else if (init) for (const k of Object.keys(init)) this.append(k, init[k]);
		}
		append(k, v) { k = String(k).toLowerCase(); (this._h[k] = this._h[k] || []).push(String(v)); }
		set(k, v) { this._h[String(k).toLowerCase()] = [String(v)]; }
		get(k) { const v = this._h[String(k).toLowerCase()]; return v ? v.join(", ") : null; }
		has(k) { return String(k).toLowerCase() in this._h; }
		delete(k) { delete this._h[String(k).toLowerCase()]; }
		forEach(fn) { for (const k of Object.keys(this._h)) fn(this.get(k), k, this); }
		*entries() { for (const k of Object.keys(this._h)) yield [k, this.get(k)]; }
		[Symbol.iterator]() { return this.entries(); }
	}
	class Response {
		constructor(r) {
			this.status = r.status; this.statusText = ""; this.ok = r.status >= 200 && r.status < 300;
			this.url = r.url || ""; this.headers = new Headers(); this.redirected = false;
			for (const k of Object.keys(r.headers || {})) for (const v of r.headers[k]) this.headers.append(k, v);
			this._body = new Uint8Array(r.body);
		}
		async text() { return new TextDecoder().decode(this._body); }
		async json() { return JSON.parse(await this.text()); }
		async arrayBuffer() { return this._body.slice().buffer; }
	}
	hide("Headers", Headers);
	hide("Response", Response);
	// fetch sends the request through the host (wasmcp/http): the
	// module's policy decides where it may go and adds its secrets.
	hide("fetch", (input, init) => new Promise((resolve) => {
		init = init || {};
		const url = typeof input === "string" ? input : input && input.url ? String(input.url) : String(input);
		const headers = {};
		new Headers(init.headers).forEach((v, k) => { headers[k] = [v]; });
		let body = init.body;
		if (body === undefined || body === null) body = undefined;
		else if (body instanceof ArrayBuffer) body = body.slice(0);
		else if (ArrayBuffer.isView(body)) body = new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice().buffer;
		else body = String(body);
		const r = native.http(String(init.method || "GET").toUpperCase(), url, JSON.stringify(headers), body);
		resolve(new Response(Object.assign(r, { url, headers: JSON.parse(r.headers) })));
	}));

	// --- CommonJS: the script runs as a program (so positions in errors are
	// the file's) with module, exports and require as globals; esbuild's
	// CommonJS output (the host's TypeScript transform) runs unchanged.
	// topLevel(promise) is how a bundle whose top level awaits (an
	// official-SDK server's `await server.connect(...)`) hands that top
	// level to the load: the host's bundler wraps it in an async function
	// and passes its promise here. The load waits for it (the job queue
	// is drained first); a rejection is the script's error.
	const top = { p: undefined, s: 1, e: undefined };
	function topLevel(p) {
		if (top.p !== undefined) throw new TypeError("topLevel: the top level is handed over once");
		top.p = p; top.s = 0;
		Promise.resolve(p).then(() => { top.s = 1; }, (e) => { top.s = 2; top.e = e; });
	}
	const api = Object.freeze({ McpServer, topLevel });
	const module = { exports: {} };
	hide("module", module);
	hide("exports", module.exports);
	hide("require", (name) => {
		if (name === "wasmcp" || name === "@modelcontextprotocol/server" || name === "@modelcontextprotocol/sdk/server/mcp.js") return api;
		throw new Error("cannot find module '" + name + "': a wasmcp script can import only \"wasmcp\"");
	});
	// describeError is the text of a thrown value: "Name: message" (the
	// name only when it is not plain "Error"), after the script's file and
	// line when its stack names them.
	function errorText(e) {
		if (e === undefined || e === null) return "the handler failed without a reason";
		if (typeof e === "object" && e.message !== undefined) {
			const name = e.name !== undefined ? String(e.name) : "";
			return (name !== "" && name !== "Error" ? name + ": " : "") + String(e.message);
		}
		return String(e);
	}
	function where(e) {
		const name = native.scriptName();
		const stack = e && typeof e === "object" && typeof e.stack === "string" ? e.stack : "";
		for (const line of stack.split("\n")) {
			const i = line.lastIndexOf(name + ":");
			if (i >= 0) {
				const m = /^(\d+)/.exec(line.slice(i + name.length + 1));
				if (m) return name + ":" + m[1] + ": ";
			}
		}
		return "";
	}
	function describeError(e) {
		const text = e && typeof e === "object" && e.name !== undefined && e.message !== undefined
			? String(e.name) + ": " + String(e.message) : errorText(e);
		return where(e) + text;
	}
	return {
		describeError,
		runTimer,
		// syntaxError formats an error the script's compilation threw.
		syntaxError(e) { return where(e) + "syntax error: " + (e && e.message !== undefined ? String(e.message) : String(e)); },
		// finish ends the load: timers the top level set are dropped (they
		// would fire in whichever call first waits), and the description
		// is built once.
		finish() {
			if (top.s === 2) throw new Error("the script's top level threw: " + describeError(top.e));
			if (top.s === 0) throw new Error("the script's top level never finished: it awaits something nothing can settle at load (a call's context, a timer)");
			if (!reg.server) throw new TypeError(native.scriptName() + ": the script registers nothing: create the server with `new McpServer({name, version})` and register tools on it");
			if (timers.queue.length > 0) {
				native.write(native.scriptName() + ": " + timers.queue.length + " timer(s) set at the top level were dropped: timers run only while a call waits");
				timers.queue.length = 0;
			}
			const s = reg.server;
			const d = { abiVersion: 1, name: s.name, version: s.version };
			if (s.instructions) d.instructions = s.instructions;
			if (reg.tools.size) d.tools = Array.from(reg.tools.values(), (t) => t.def);
			if (reg.resources.size) d.resources = Array.from(reg.resources.values(), (r) => r.def);
			if (reg.templates.length) d.resourceTemplates = reg.templates.map((t) => t.def);
			if (reg.prompts.size) d.prompts = Array.from(reg.prompts.values(), (p) => p.def);
			return JSON.stringify(d);
		},
		// start runs a handler — kind 0 a tool (key its name, a the
		// arguments as JSON), 1 a resource (key the URI, a the template's
		// variables as JSON), 2 a prompt (key its name, a the arguments) —
		// and answers the state runner.c waits on: s 0 pending, 1 done (v
		// the result as JSON), 2 failed (v the error's text).
		start(kind, key, a) {
			const st = { s: 0, v: undefined };
			let p;
			try {
				let entry, vars;
				if (kind === 0) entry = reg.tools.get(key);
				else if (kind === 2) entry = reg.prompts.get(key);
				else {
					entry = reg.resources.get(key);
					if (!entry) {
						vars = JSON.parse(a);
						for (const t of reg.templates) {
							const m = t.re.exec(key);
							if (m) {
								const v = {};
								t.names.forEach((n, i) => { v[n] = decodeURIComponent(m[i + 1]); });
								entry = t; vars = v;
								break;
							}
						}
					}
				}
				if (!entry) throw new TypeError("nothing is registered for " + key);
				const args = kind === 1 ? vars : JSON.parse(a);
				const ctx = makeContext();
				p = Promise.resolve(kind === 1 ? entry.fn(key, args, ctx) : entry.fn(args, ctx));
			} catch (e) {
				p = Promise.reject(e);
			}
			// A result JSON cannot carry (a cycle, a BigInt, a getter or
			// toJSON that throws) or an error with no text of its own (a
			// toString that throws, a Proxy) fails the call with what
			// happened: left pending, it read "never settled".
			const failed = (e) => {
				try { st.v = errorText(e); } catch (_) { st.v = "the handler failed with a value that has no text"; }
				st.s = 2;
			};
			p.then((v) => {
				let s;
				try { s = JSON.stringify(v); } catch (e) {
					failed(e);
					st.v = "the handler's result cannot be sent as JSON: " + st.v;
					return;
				}
				st.v = s; st.s = 1;
			}, failed);
			return st;
		},
	};
})
