// The official MCP TypeScript SDK's own server (v2: @modelcontextprotocol/server
// with the @modelcontextprotocol/node adapter) serving the echo tool over
// Streamable HTTP on Node, for bench/scripts.sh. It answers the same echo as
// every reference tool set (examples/reference/*): the text back as text
// content and as structured content {text}.
//
// createMcpHandler builds a server per request (the factory) and serves the
// 2026-07-28 era per request and 2025-era traffic through its stateless
// legacy fallback: a legacy initialize gets no Mcp-Session-Id, which
// cmd/mcpload accepts (it sends the session header only when given one).
//
// Usage: node server.mjs [-addr 127.0.0.1:0]. Logs "url=http://ADDR/mcp" on
// stderr once it listens.
import { createServer } from "node:http";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { toNodeHandler } from "@modelcontextprotocol/node";
import * as z from "zod";

let addr = "127.0.0.1:0";
const i = process.argv.indexOf("-addr");
if (i > 0 && process.argv[i + 1]) addr = process.argv[i + 1];
const cut = addr.lastIndexOf(":");
const host = addr.slice(0, cut), port = Number(addr.slice(cut + 1));

const text = z.object({ text: z.string() });

function factory() {
	const server = new McpServer({ name: "node-sdk-echo", version: "1.0.0" });
	server.registerTool("echo", { description: "Returns its text.", inputSchema: text, outputSchema: text },
		async ({ text }) => ({ content: [{ type: "text", text }], structuredContent: { text } }));
	return server;
}

const handler = toNodeHandler(createMcpHandler(factory));
const srv = createServer((req, res) => {
	if (new URL(req.url, "http://x").pathname !== "/mcp") {
		res.writeHead(404).end();
		return;
	}
	handler(req, res);
});
srv.listen(port, host, () => {
	const a = srv.address();
	console.error(`node-sdk listening url=http://${a.address}:${a.port}/mcp`);
});
