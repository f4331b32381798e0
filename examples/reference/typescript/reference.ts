// The wasmcp reference tool set in TypeScript, served straight from this
// file: wasmcp strips the types at load (in a sandboxed guest) and runs
// the JavaScript in its runner. echo (with an output schema), sum,
// progress, ask (elicitation), the resource ref://greeting and the prompt
// greet, with the same names, schemas and texts as every other SDK's
// examples/reference/<lang>. tests/reference_test.go drives it.
import { McpServer, type ToolContext } from "wasmcp";

const server = new McpServer({ name: "reference", version: "1.0.0" });

const text = { type: "object", properties: { text: { type: "string" } }, required: ["text"] } as const;

server.registerTool("echo", { description: "Returns its text.", inputSchema: text, outputSchema: text },
	({ text }: { text: string }) => ({ content: [{ type: "text", text }], structuredContent: { text } }));

server.registerTool("sum", {
	description: "Adds up an array of numbers.",
	inputSchema: { type: "object", properties: { numbers: { type: "array", items: { type: "number" } } }, required: ["numbers"] },
	outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
}, ({ numbers }: { numbers: number[] }) => {
	const sum = numbers.reduce((a, b) => a + b, 0);
	return { content: [{ type: "text", text: JSON.stringify(sum) }], structuredContent: { sum } };
});

server.registerTool("progress", {
	description: "Reports progress in the given number of steps.",
	inputSchema: { type: "object", properties: { steps: { type: "integer", minimum: 1, maximum: 20 } }, required: ["steps"] },
}, ({ steps }: { steps: number }, ctx: ToolContext): string => {
	for (let i = 1; i <= steps; i++) ctx.progress(i, steps);
	return "done " + steps;
});

interface NameAnswer { name?: string }

server.registerTool("ask", { description: "Asks the user for their name and greets them.", inputSchema: { type: "object" } },
	async (_args: object, ctx: ToolContext): Promise<string> => {
		const answer = await ctx.elicit<NameAnswer>("What is your name?",
			{ type: "object", properties: { name: { type: "string" } }, required: ["name"] }, { key: "name" });
		if (answer.action === "accept" && typeof answer.content?.name === "string") return "hello " + answer.content.name;
		return "no name given";
	});

server.registerResource("greeting", "ref://greeting", { mimeType: "text/plain" },
	(uri: string) => ({ contents: [{ uri, mimeType: "text/plain", text: "hello from the reference tools" }] }));

server.registerPrompt("greet", {
	description: "Asks the assistant to greet someone.",
	arguments: [{ name: "name", description: "who to greet", required: true }],
}, ({ name }: Record<string, string>) => ({ messages: [{ role: "user", content: { type: "text", text: "Say hello to " + name + "." } }] }));
