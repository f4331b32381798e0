// The echo tool of the reference tool sets as a TypeScript script, for
// bench/scripts.sh: the text back as text and as structured content {text}.
import { McpServer } from "wasmcp";
const server = new McpServer({ name: "echo", version: "1.0.0" });
const text = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
server.registerTool("echo", { description: "Returns its text.", inputSchema: text, outputSchema: text },
	({ text }: { text: string }) => ({ content: [{ type: "text", text }], structuredContent: { text } }));
