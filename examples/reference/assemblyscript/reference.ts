// The wasmcp reference tool set, written with the AssemblyScript guest SDK:
// echo (with an output schema), sum, progress, ask (elicitation), the
// resource ref://greeting and the prompt greet. Every SDK implements the
// same set; tests/reference_test.go drives them all.
import {
  Context,
  PromptArgument,
  PromptResult,
  ResourceResult,
  Server,
  ToolResult,
  Value,
  formatNumber,
} from "../../../guest-sdk/assemblyscript/assembly/index";

function echo(ctx: Context, args: Value): ToolResult {
  const text = args.getString("text");
  return ToolResult.structured(text, Value.object().setString("text", text));
}

function sum(ctx: Context, args: Value): ToolResult {
  const numbers = args.get("numbers");
  if (numbers == null || !numbers.isArray()) return ToolResult.error("numbers must be an array");
  let total: f64 = 0;
  for (let i = 0; i < numbers.length; i++) total += numbers.items[i].number;
  return ToolResult.structured(formatNumber(total), Value.object().setNumber("sum", total));
}

function progress(ctx: Context, args: Value): ToolResult {
  const steps = <i32>args.getNumber("steps");
  for (let i = 1; i <= steps; i++) ctx.progress(i, steps);
  return ToolResult.text("done " + steps.toString());
}

function ask(ctx: Context, args: Value): ToolResult {
  const a = ctx.elicit(
    "user_name",
    "What is your name?",
    '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}',
  );
  if (!a.ok) return ToolResult.error(a.message);
  if (a.action != "accept") return ToolResult.text("no name given");
  return ToolResult.text("hello " + a.content.getString("name"));
}

function greeting(ctx: Context, uri: string, vars: Map<string, string>): ResourceResult {
  return ResourceResult.text("hello from the reference tools", "text/plain");
}

function greet(ctx: Context, args: Map<string, string>): PromptResult {
  return new PromptResult().user("Say hello to " + args.get("name") + ".");
}

const server = new Server("reference", "1.0.0");
server.tool(
  "echo",
  "Echoes the text.",
  '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}',
  echo,
  '{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}',
);
server.tool(
  "sum",
  "Adds the numbers.",
  '{"type":"object","properties":{"numbers":{"type":"array","items":{"type":"number"}}},"required":["numbers"]}',
  sum,
  '{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}',
);
server.tool(
  "progress",
  "Reports progress for each step.",
  '{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":20}},"required":["steps"]}',
  progress,
);
server.tool("ask", "Asks the user for their name.", '{"type":"object"}', ask);
server.resource("ref://greeting", "greeting", "text/plain", greeting);
server.prompt("greet", "Asks the model to greet someone.", [new PromptArgument("name", "", true)], greet);
server.run();
