// A test module for tests/sdkreference_test.go: a Server with tools,
// resources, a template, a prompt and completions, whose "two" tool asks
// the client several questions. The Go test feeds it request lines and
// answers on stdin (under Node's WASI) and checks what it writes.
import {
  Answer,
  CODE_MISSING_CAPABILITY,
  Context,
  PromptArgument,
  PromptResult,
  ResourceResult,
  Server,
  ToolResult,
  Value,
} from "../assembly/index";

function answerValue(a: Answer): Value {
  if (a.ok) return a.result;
  const e = Value.object().setNumber("code", a.code).setString("message", a.message);
  const d = a.data;
  if (d != null) e.set("data", d);
  return e;
}

// two sends two questions before waiting for either, reads their answers
// in the other order, then lists roots under the SDK's numbering and
// samples; a missing capability for roots is passed on.
function two(ctx: Context, args: Value): ToolResult {
  const st = ctx.state();
  ctx.setState(Value.object().setNumber("round", 1));
  ctx.toolsListChanged();
  ctx.resourceUpdated("t://fixed");
  ctx.progress(1, 2, "half");
  ctx.log("warning", "careful", "two");
  const first = ctx.startElicit("first", "1", '{"type":"object"}');
  const second = ctx.start("second", "elicitation/create", Value.object().setString("message", "2").set("requestedSchema", Value.object()));
  const b = ctx.wait(second);
  const a = ctx.wait(first);
  const r = ctx.listRoots("");
  if (!r.ok && r.code == CODE_MISSING_CAPABILITY) return ToolResult.fromAnswer(r);
  const s = ctx.sampleText("s", "hi", 5);
  const out = Value.object()
    .set("a", answerValue(a))
    .set("b", answerValue(b))
    .set("roots", answerValue(r))
    .set("sample", answerValue(s))
    .set("state", st != null ? st : Value.null())
    .setString("action", a.action)
    .set("content", a.content);
  return ToolResult.json(out).addText("second block");
}

// fetch POSTs a binary body through the host and answers what came back.
function fetch(ctx: Context, args: Value): ToolResult {
  const body = new Uint8Array(5);
  body[0] = 0;
  body[1] = 0xff;
  body[2] = 0x62;
  body[3] = 0x69;
  body[4] = 0x6e;
  const headers = Value.object().set("X-A", Value.strings(["1"]));
  const r = ctx.http("POST", args.getString("url"), headers, body, 1500);
  if (!r.ok) return ToolResult.error(r.reason + ": " + r.message);
  return ToolResult.text(
    r.status.toString() + " " + r.header("content-type") + " " + r.body.length.toString() + " " + r.body[1].toString() + " " + r.url,
  ).addText(r.text());
}

function fail(ctx: Context, args: Value): ToolResult {
  if (args.getBool("rpc")) return ToolResult.rpc(-32602, 'bad "thing"', Value.object().setNumber("n", 1));
  return ToolResult.error("it failed");
}

function fixed(ctx: Context, uri: string, vars: Map<string, string>): ResourceResult {
  return ResourceResult.text('fixed "text"');
}

function dotted(ctx: Context, uri: string, vars: Map<string, string>): ResourceResult {
  if (uri == "t://none.x") return ResourceResult.notFound(uri);
  return ResourceResult.text(Value.object().setString("a", vars.get("a")).setString("b", vars.get("b")).toString(), "application/json");
}

function prompt(ctx: Context, args: Map<string, string>): PromptResult {
  const r = new PromptResult().assistant(args.get("x"));
  if (args.has("y")) r.user(args.get("y"));
  return r;
}

function complete(ctx: Context, ref: Value, argument: string, value: string): Array<string> {
  if (argument == "many") {
    const many = new Array<string>();
    for (let i = 0; i < 150; i++) many.push("v" + i.toString());
    return many;
  }
  return [ref.getString("type"), argument, value];
}

const server = new Server("servertest", "0.1.0");
server.instructions = "Use with care.";
const t = server.tool("two", "Asks twice.", '{"type":"object"}', two);
t.title = "Two questions";
t.annotations = Value.object().setBool("readOnlyHint", true);
server.tool("fetch", "", '{"type":"object"}', fetch);
server.tool("fail", "", '{"type":"object","properties":{"rpc":{"type":"boolean"}}}', fail);
server.resource("t://fixed", "fixed", "text/plain", fixed);
server.resourceTemplate("t://{a}.{b}", "dotted", "", dotted, "Dotted names.");
server.prompt("p", "A prompt.", [new PromptArgument("x", "the text", true), new PromptArgument("y")], prompt);
server.completion(complete);
server.run();
