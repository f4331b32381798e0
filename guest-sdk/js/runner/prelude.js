// The JavaScript half of the wasmcp runner's API: module "wasmcp"
// (McpServer) and the globals a script may use (console, fetch, crypto,
// timers, TextEncoder/TextDecoder). `native` is the Go half (natives.go).
(function (native) {
	"use strict";
	const g = globalThis;
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
	function resourceContents(uri, v) {
		if (typeof v === "string") return [{ uri, text: v }];
		if (v && Array.isArray(v.contents)) return v.contents.map((c) => Object.assign({ uri }, c));
		if (v && (v.text !== undefined || v.blob !== undefined)) return [Object.assign({ uri }, v)];
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
			log(level, data) { native.log(String(level), JSON.stringify(data === undefined ? null : data)); },
			elicit(message, requestedSchema, options) {
				if (message && typeof message === "object") { options = message; message = options.message; requestedSchema = options.requestedSchema; }
				const key = options && options.key !== undefined ? String(options.key) : undefined;
				return new Promise((resolve) => resolve(JSON.parse(native.elicit(String(message), JSON.stringify(requestedSchema || { type: "object" }), key))));
			},
			sample(params, options) {
				return new Promise((resolve) => resolve(JSON.parse(native.sample(JSON.stringify(params), options && options.key))));
			},
			listRoots(options) {
				return new Promise((resolve) => resolve(JSON.parse(native.listRoots(options && options.key))));
			},
		};
		// The official SDK's names for the same things.
		ctx.sendProgress = ctx.progress;
		ctx.sendLog = ctx.log;
		ctx.signal = neverAborted;
		return ctx;
	}
	// A cancelled call ends the instance, so no handler ever sees its
	// signal fire; it is there for code that passes it on.
	const neverAborted = Object.freeze({ aborted: false, reason: undefined, addEventListener() {}, removeEventListener() {}, throwIfAborted() {} });

	// --- McpServer -------------------------------------------------------
	function check(fn, what) {
		if (typeof fn !== "function") throw new TypeError(what + ": the handler is not a function");
	}
	class McpServer {
		constructor(info, options) {
			info = info || {};
			native.newServer(String(info.name || native.scriptName().replace(/\.[^.]*$/, "")), String(info.version || "0.0.0"),
				options && options.instructions ? String(options.instructions) : "");
		}
		registerTool(name, config, handler) {
			if (typeof config === "function") { handler = config; config = {}; }
			name = String(name);
			check(handler, "tool " + name);
			config = config || {};
			native.addTool(name, JSON.stringify({
				title: config.title, description: config.description, inputSchema: config.inputSchema,
				outputSchema: config.outputSchema, annotations: config.annotations, _meta: config._meta,
			}), async (args) => JSON.stringify(toolResult(await handler(JSON.parse(args), makeContext()))));
			return this;
		}
		tool(name, config, handler) { return this.registerTool(name, config, handler); }
		registerResource(name, uri, config, handler) {
			if (typeof config === "function") { handler = config; config = {}; }
			name = String(name); uri = String(uri);
			check(handler, "resource " + uri);
			config = config || {};
			const def = JSON.stringify(Object.assign({}, config, { name }, uri.includes("{") ? { uriTemplate: uri } : { uri }));
			const fn = async (u, vars) => JSON.stringify(resourceContents(u, await (vars === undefined ? handler(u, makeContext()) : handler(u, vars, makeContext()))));
			if (uri.includes("{")) native.addTemplate(def, fn); else native.addResource(def, fn);
			return this;
		}
		resource(name, uri, config, handler) { return this.registerResource(name, uri, config, handler); }
		registerPrompt(name, config, handler) {
			if (typeof config === "function") { handler = config; config = {}; }
			name = String(name);
			check(handler, "prompt " + name);
			config = config || {};
			native.addPrompt(JSON.stringify({ name, title: config.title, description: config.description, arguments: config.arguments }),
				async (args) => JSON.stringify(promptResult(await handler(args, makeContext()))));
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

	hide("setTimeout", (fn, ms, ...args) => native.setTimer(() => fn(...args), Number(ms) || 0, false));
	hide("setInterval", (fn, ms, ...args) => native.setTimer(() => fn(...args), Number(ms) || 0, true));
	hide("clearTimeout", (id) => { if (id !== undefined) native.clearTimer(id); });
	hide("clearInterval", (id) => { if (id !== undefined) native.clearTimer(id); });
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
		encode(s) {
			s = String(s === undefined ? "" : s);
			const out = [];
			for (const ch of s) {
				let c = ch.codePointAt(0);
				if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
				if (c < 0x80) out.push(c);
				else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
				else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
				else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
			}
			return new Uint8Array(out);
		}
	}
	class TextDecoder {
		get encoding() { return "utf-8"; }
		decode(b) {
			if (b === undefined) return "";
			const u = b instanceof Uint8Array ? b : ArrayBuffer.isView(b) ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b);
			let s = "";
			for (let i = 0; i < u.length;) {
				const c = u[i];
				let cp = 0xfffd, n = 1;
				if (c < 0x80) cp = c;
				else if (c >= 0xc2 && c < 0xe0 && i + 1 < u.length) { cp = ((c & 31) << 6) | (u[i + 1] & 63); n = 2; }
				else if (c >= 0xe0 && c < 0xf0 && i + 2 < u.length) { cp = ((c & 15) << 12) | ((u[i + 1] & 63) << 6) | (u[i + 2] & 63); n = 3; }
				else if (c >= 0xf0 && c < 0xf5 && i + 3 < u.length) { cp = ((c & 7) << 18) | ((u[i + 1] & 63) << 12) | ((u[i + 2] & 63) << 6) | (u[i + 3] & 63); n = 4; }
				s += String.fromCodePoint(cp);
				i += n;
			}
			return s;
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
			this._body = r.bodyBase64 !== undefined && r.bodyBase64 !== "" ? unbase64(r.bodyBase64) : r.body || "";
		}
		async text() { return typeof this._body === "string" ? this._body : new TextDecoder().decode(this._body); }
		async json() { return JSON.parse(await this.text()); }
		async arrayBuffer() { const b = typeof this._body === "string" ? new TextEncoder().encode(this._body) : this._body; return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength); }
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
		const req = { method: String(init.method || "GET").toUpperCase(), url, headers };
		if (init.body !== undefined && init.body !== null) {
			if (typeof init.body === "string") req.body = init.body;
			else if (init.body instanceof ArrayBuffer || ArrayBuffer.isView(init.body)) {
				const u = init.body instanceof ArrayBuffer ? new Uint8Array(init.body) : new Uint8Array(init.body.buffer, init.body.byteOffset, init.body.byteLength);
				req.bodyBase64 = base64(u);
			} else req.body = String(init.body);
		}
		resolve(new Response(JSON.parse(native.http(JSON.stringify(req)))));
	}));

	// --- CommonJS: the script runs as a program (so positions in errors are
	// the file's) with module, exports and require as globals; esbuild's
	// CommonJS output (the host's TypeScript transform) runs unchanged.
	const api = Object.freeze({ McpServer });
	const module = { exports: {} };
	hide("module", module);
	hide("exports", module.exports);
	hide("require", (name) => {
		if (name === "wasmcp" || name === "@modelcontextprotocol/server" || name === "@modelcontextprotocol/sdk/server/mcp.js") return api;
		throw new Error("cannot find module '" + name + "': a wasmcp script can import only \"wasmcp\"");
	});
	return {
		// invoke calls fn and answers a Promise of its result, so that a
		// handler may be sync or async alike.
		invoke(fn, ...args) {
			try { return Promise.resolve(fn(...args)); } catch (e) { return Promise.reject(e); }
		},
	};
})
