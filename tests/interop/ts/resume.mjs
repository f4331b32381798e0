// Drives a wasmcp server over Streamable HTTP with the official MCP
// TypeScript SDK client and breaks the SSE stream of a tools/call after its
// first message event (one with an id and data, past the priming event), as
// a dropped connection would: the SDK
// then resumes the stream with a GET carrying Last-Event-ID. Prints what it
// saw as one JSON object on stdout; the Go test (TestTypeScriptSDKResumesAStream)
// checks it.
//
//   node resume.mjs URL
//
// Scenario: connect (2025-11-25, a session; the SDK opens the standalone GET
// stream too); call text_stats {text, top: 3} with a progress callback, its
// POST stream cut after the first event with an id and data (a log or
// progress notification); then call hash, to see
// the session still serves. Errors the SDK reports (client.onerror) are
// recorded, among them the one the official client gives for a response
// delivered twice ("Received a response for an unknown message ID").

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const report = { errors: [], resumedWith: [], cutAfter: null, wireMessages: [] };

// cutFetch is fetch, except that the first tools/call answered with an SSE
// stream gets its stream cut after the first event with an id and data.
let cut = false;
async function cutFetch(url, init) {
  const headers = new Headers(init?.headers);
  if ((init?.method ?? 'GET') === 'GET' && headers.get('last-event-id')) {
    report.resumedWith.push(headers.get('last-event-id'));
  }
  const res = await fetch(url, init);
  const body = typeof init?.body === 'string' ? init.body : '';
  if (cut || init?.method !== 'POST' || !body.includes('"tools/call"') ||
      !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return res;
  }
  cut = true;
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  const enc = new TextEncoder();
  let buf = '';
  let dropped = false;
  const stream = new ReadableStream({
    async pull(controller) {
      if (dropped) {
        controller.error(new Error('connection dropped by the test'));
        return;
      }
      for (;;) {
        const end = buf.indexOf('\n\n');
        if (end >= 0) {
          const block = buf.slice(0, end + 2);
          buf = buf.slice(end + 2);
          controller.enqueue(enc.encode(block));
          if (/^id:/m.test(block) && /^data: ?\S/m.test(block)) {
            report.cutAfter = block;
            dropped = true;
            await reader.cancel();
          }
          return;
        }
        const { value, done } = await reader.read();
        if (done) {
          controller.error(new Error('the stream ended before an event with an id'));
          return;
        }
        buf += dec.decode(value, { stream: true });
      }
    },
  });
  return new Response(stream, { status: res.status, statusText: res.statusText, headers: res.headers });
}

async function main([url]) {
  if (!url) {
    throw new Error('usage: node resume.mjs URL');
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: cutFetch,
    reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
  });
  const client = new Client({ name: 'wasmcp-interop-ts-resume', version: '1.0.0' }, { capabilities: {} });
  client.onerror = (err) => report.errors.push(String(err?.message ?? err));
  await client.connect(transport);
  const onmessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if (msg.method === 'notifications/progress' || msg.id !== undefined) {
      report.wireMessages.push(msg.method ?? `response ${msg.id}`);
    }
    onmessage?.(msg, extra);
  };
  report.sessionId = transport.sessionId ?? null;

  const progress = [];
  report.textStats = await client.callTool(
    { name: 'text_stats', arguments: { text: process.env.RESUME_TEXT ?? 'one two three. four five!', top: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p.progress), timeout: 60000 },
  );
  report.progress = progress;
  report.hash = await client.callTool({ name: 'hash', arguments: { algorithm: 'sha256', text: 'after the resumption' } });
  // Let a response delivered twice arrive before the report.
  await new Promise((r) => setTimeout(r, 500));
  await transport.terminateSession();
  await client.close();
  return report;
}

main(process.argv.slice(2)).then(
  (r) => {
    process.stdout.write(JSON.stringify(r) + '\n');
    process.exit(0);
  },
  (err) => {
    process.stderr.write(`resume client failed: ${err?.stack ?? err}\n`);
    process.stdout.write(JSON.stringify(report) + '\n');
    process.exit(1);
  },
);
