// The echo tool of the reference tool sets as a JavaScript script, for
// bench/scripts.sh: the text back as text and as structured content {text}.
const { McpServer } = require("wasmcp");
const server = new McpServer({ name: "echo", version: "1.0.0" });
const text = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
server.registerTool("echo", { description: "Returns its text.", inputSchema: text, outputSchema: text },
	({ text }) => ({ content: [{ type: "text", text }], structuredContent: { text } }));
