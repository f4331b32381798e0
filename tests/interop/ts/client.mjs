// Drives a wasmcp server with the official MCP TypeScript SDK client and
// prints what it saw as one JSON object on stdout. The Go tests in
// tests/interop run it and check the report; this script only records.
//
//   node client.mjs stdio COMMAND [ARG...]   spawn the server, talk over stdio
//   node client.mjs http URL                 talk Streamable HTTP to URL
//   node client.mjs sse URL                  talk HTTP+SSE (2024-11-05) to URL
//
// The inputs come from the environment variable INTEROP_SCENARIO, a JSON
// object {statsText, statsTop, planText, hashInput, comment}. Scenario (the
// example tools from examples/wasm):
//   1. connect (initialize) declaring the elicitation capability;
//   2. list every tool (following nextCursor);
//   3. call text_stats {text: statsText, top: statsTop} with a progress
//      callback, recording the progress notifications on the wire too;
//   4. call hash {algorithm: sha256, text: hashInput};
//   5. call confirm_plan {plan: planText}, whose guest asks the user through
//      elicitation/create; the handler below accepts with
//      {approve: true, comment};
//   6. close (over HTTP, first DELETE the session).
// Any failure prints the error on stderr and exits 1.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

async function main(argv) {
  const scenario = JSON.parse(process.env.INTEROP_SCENARIO ?? 'null');
  if (!scenario) {
    throw new Error('INTEROP_SCENARIO is not set');
  }
  const [mode, ...rest] = argv;
  let transport;
  if (mode === 'stdio' && rest.length >= 1) {
    transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' });
  } else if (mode === 'http' && rest.length === 1) {
    transport = new StreamableHTTPClientTransport(new URL(rest[0]));
  } else if (mode === 'sse' && rest.length === 1) {
    transport = new SSEClientTransport(new URL(rest[0]));
  } else {
    throw new Error('usage: node client.mjs stdio COMMAND [ARG...] | node client.mjs http|sse URL');
  }

  const client = new Client(
    { name: 'wasmcp-interop-ts', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  const elicitations = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicitations.push(req.params);
    return { action: 'accept', content: { approve: true, comment: scenario.comment } };
  });

  const report = {};
  await client.connect(transport);
  // Record the progress notifications as they arrive, in wire order, and
  // the progress tokens the client sends. The SDK's own onprogress callback
  // can miss notifications the server sent before the response: 1.32.x runs
  // notification handlers in a microtask but responses synchronously, so a
  // response read in the same chunk retires the progress handler first
  // (modelcontextprotocol/typescript-sdk#2580).
  const wireProgress = [];
  const sentTokens = {};
  const onmessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg.method === 'notifications/progress') {
      wireProgress.push(msg.params);
    }
    onmessage?.(msg, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (msg, opts) => {
    if (msg.method === 'tools/call' && msg.params?._meta?.progressToken !== undefined) {
      sentTokens[msg.params.name] = msg.params._meta.progressToken;
    }
    return send(msg, opts);
  };
  report.serverInfo = client.getServerVersion();
  report.capabilities = client.getServerCapabilities();
  if (mode === 'http') {
    report.sessionId = transport.sessionId ?? null;
    report.protocolVersion = transport.protocolVersion ?? null;
  }

  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  report.tools = tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema }));

  const progress = [];
  const stats = await client.callTool(
    { name: 'text_stats', arguments: { text: scenario.statsText, top: scenario.statsTop } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  report.textStats = {
    result: stats,
    progress,
    progressToken: sentTokens.text_stats ?? null,
    wireProgress: wireProgress.filter((p) => p.progressToken === sentTokens.text_stats),
  };

  report.hash = await client.callTool({ name: 'hash', arguments: { algorithm: 'sha256', text: scenario.hashInput } });

  const plan = await client.callTool({ name: 'confirm_plan', arguments: { plan: scenario.planText } });
  report.confirmPlan = { result: plan, elicitations };

  if (mode === 'http' && transport.sessionId) {
    await transport.terminateSession();
    report.terminated = true;
  }
  await client.close();
  return report;
}

main(process.argv.slice(2)).then(
  (report) => {
    process.stdout.write(JSON.stringify(report) + '\n');
    process.exit(0);
  },
  (err) => {
    process.stderr.write(`interop client failed: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
