// An example tool as a TypeScript file: drop it into the tools directory
// (`wasmcp serve --tools DIR`) and it is a tool, with no build and no
// TypeScript compiler installed: wasmcp strips the types at load, in a
// sandboxed guest of its own. The types come from guest-sdk/js/wasmcp.d.ts.
import { McpServer, type ToolContext } from "wasmcp";

interface HelloArgs {
	name: string;
	times?: number;
}

const server = new McpServer({ name: "hello", version: "1.0.0" });

server.registerTool("hello", {
	description: "Greets someone, once or a few times.",
	inputSchema: {
		type: "object",
		properties: { name: { type: "string" }, times: { type: "integer", minimum: 1, maximum: 5 } },
		required: ["name"],
	},
}, ({ name, times = 1 }: HelloArgs, ctx: ToolContext): string => {
	ctx.log("info", `greeting ${name}`);
	return Array.from({ length: times }, () => `Hello, ${name}!`).join(" ");
});
