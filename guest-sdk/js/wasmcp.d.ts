// Types of the wasmcp JavaScript runner's API (guest-sdk/js/quickjs): the
// module "wasmcp" and the globals a script may use. Put this file beside
// your tools (or point "paths" in tsconfig.json at it) so that an editor
// type-checks `import { McpServer } from "wasmcp"`. A .d.ts file in the
// tools directory is not a tool.

declare module "wasmcp" {
	/** A JSON Schema object; tool input schemas have "type": "object". */
	export type JSONSchema = { [key: string]: unknown };

	export interface TextContent { type: "text"; text: string; annotations?: object; _meta?: object }
	export interface ImageContent { type: "image" | "audio"; data: string | Uint8Array; mimeType: string; annotations?: object }
	export interface ResourceLink { type: "resource_link"; uri: string; name: string; title?: string; description?: string; mimeType?: string }
	export interface EmbeddedResource { type: "resource"; resource: ResourceContents }
	export type Content = TextContent | ImageContent | ResourceLink | EmbeddedResource;

	/** A full tool result, as MCP's CallToolResult. */
	export interface CallToolResult {
		content: (Content | string)[];
		structuredContent?: unknown;
		isError?: boolean;
		_meta?: object;
	}
	/**
	 * What a tool handler returns (or its Promise resolves to): text, a
	 * full result, or any other value as structured content (its text is
	 * the value as JSON). Throwing (or rejecting) gives a tool error with
	 * the error's message.
	 */
	export type ToolReturn = string | CallToolResult | object | void;

	export interface ElicitResult<T = Record<string, unknown>> {
		action: "accept" | "decline" | "cancel";
		content?: T;
	}
	export interface Principal { name: string; scopes?: string[] }

	/** The context of one call. Every call runs in a fresh instance. */
	export interface ToolContext {
		/** The request's _meta as the client sent it (after the host's filtering). */
		readonly _meta: Record<string, unknown>;
		/** The caller, when the module's policy sets expose_principal. */
		readonly principal?: Principal;
		/** Sends a progress notification (when the client asked for progress). */
		progress(progress: number, total?: number, message?: string): void;
		sendProgress(progress: number, total?: number, message?: string): void;
		/** Sends a notifications/message log entry to the client. */
		log(level: "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency", data: unknown): void;
		sendLog(level: string, data: unknown): void;
		/**
		 * Asks the user through the client (elicitation/create). Under MCP
		 * 2026-07-28 the call is re-run with the answer: give a stable key,
		 * and keep everything before the elicitation free of side effects.
		 * A client's error answer rejects with its message.
		 */
		elicit<T = Record<string, unknown>>(message: string, requestedSchema: JSONSchema, options?: { key?: string }): Promise<ElicitResult<T>>;
		/** Asks the client's model (sampling/createMessage). */
		sample(params: { messages: { role: "user" | "assistant"; content: Content }[]; maxTokens: number; systemPrompt?: string }, options?: { key?: string }): Promise<{ role: string; content: Content; model: string; stopReason?: string }>;
		/** The client's roots. */
		listRoots(options?: { key?: string }): Promise<{ uri: string; name?: string }[]>;
		/** A cancelled call ends its instance, so this signal never fires. */
		readonly signal: { readonly aborted: false };
	}

	export interface ToolConfig {
		title?: string;
		description?: string;
		inputSchema?: JSONSchema;
		outputSchema?: JSONSchema;
		annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
		_meta?: object;
	}
	export interface ResourceContents { uri?: string; mimeType?: string; text?: string; blob?: string }
	export type ResourceReturn = string | ResourceContents | { contents: ResourceContents[] };
	export interface ResourceConfig { title?: string; description?: string; mimeType?: string }
	export interface PromptConfig {
		title?: string;
		description?: string;
		arguments?: { name: string; description?: string; required?: boolean }[];
	}
	export type PromptReturn = string | { description?: string; messages: { role: "user" | "assistant"; content: Content | string }[] };

	type Awaitable<T> = T | Promise<T>;

	/**
	 * How wasmcp's bundler hands a bundle's async top level to the load:
	 * the load waits for it and fails with its rejection. Not for scripts.
	 */
	export function topLevel(topLevel: Promise<unknown>): void;

	/** The script's server; create exactly one. */
	export class McpServer {
		constructor(info: { name: string; version?: string }, options?: { instructions?: string });
		registerTool<A = any>(name: string, config: ToolConfig, handler: (args: A, ctx: ToolContext) => Awaitable<ToolReturn>): this;
		tool<A = any>(name: string, config: ToolConfig, handler: (args: A, ctx: ToolContext) => Awaitable<ToolReturn>): this;
		/** A fixed URI, or a URI template with {variables} (the handler then gets them). */
		registerResource(name: string, uri: string, config: ResourceConfig,
			handler: ((uri: string, ctx: ToolContext) => Awaitable<ResourceReturn>) | ((uri: string, vars: Record<string, string>, ctx: ToolContext) => Awaitable<ResourceReturn>)): this;
		resource(name: string, uri: string, config: ResourceConfig, handler: (uri: string, ...rest: any[]) => Awaitable<ResourceReturn>): this;
		registerPrompt(name: string, config: PromptConfig, handler: (args: Record<string, string>, ctx: ToolContext) => Awaitable<PromptReturn>): this;
		prompt(name: string, config: PromptConfig, handler: (args: Record<string, string>, ctx: ToolContext) => Awaitable<PromptReturn>): this;
	}
}

// Globals. console writes to the host's log (never to the protocol);
// fetch goes through the host's outbound HTTP under the module's policy;
// crypto draws from the host on every call; timers fire while a call
// waits for its handler's promise.
declare const console: { log(...a: unknown[]): void; info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void; debug(...a: unknown[]): void };
declare const crypto: { getRandomValues<T extends Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array>(a: T): T; randomUUID(): string };
declare function fetch(input: string | { url: string }, init?: { method?: string; headers?: Record<string, string> | [string, string][]; body?: string | ArrayBuffer | Uint8Array }): Promise<Response>;
declare class Headers { constructor(init?: Record<string, string> | [string, string][]); get(name: string): string | null; has(name: string): boolean; set(name: string, value: string): void; append(name: string, value: string): void; delete(name: string): void; forEach(fn: (value: string, name: string) => void): void }
declare class Response { readonly status: number; readonly ok: boolean; readonly url: string; readonly headers: Headers; text(): Promise<string>; json(): Promise<any>; arrayBuffer(): Promise<ArrayBuffer> }
declare function setTimeout(fn: (...args: any[]) => void, ms?: number, ...args: any[]): number;
declare function setInterval(fn: (...args: any[]) => void, ms?: number, ...args: any[]): number;
declare function clearTimeout(id?: number): void;
declare function clearInterval(id?: number): void;
declare function queueMicrotask(fn: () => void): void;
declare class TextEncoder { readonly encoding: "utf-8"; encode(s?: string): Uint8Array }
declare class TextDecoder { readonly encoding: "utf-8"; decode(b?: ArrayBuffer | ArrayBufferView): string }
declare function btoa(s: string): string;
declare function atob(s: string): string;
declare const require: (name: "wasmcp") => typeof import("wasmcp");
