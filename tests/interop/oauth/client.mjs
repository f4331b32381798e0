// The official MCP TypeScript SDK client against an OAuth-protected wasmcp,
// given only the server's URL and its client credentials. Prints a JSON
// report on stdout for tests/interop/oauth_test.go; this script only
// records.
//
//   node client.mjs v1|v2 SERVER_URL   (environment: CLIENT_ID,
//                                       CLIENT_SECRET, ROTATE_URL, TOKEN_TTL)
//
// v1 is @modelcontextprotocol/sdk (up to 2025-11-25, initialize);
// v2 is @modelcontextprotocol/client with versionNegotiation auto, which
// reaches 2026-07-28 through server/discover.
//
// Scenario:
//   1. a bare POST without a token: record the 401 and its WWW-Authenticate;
//   2. connect with ClientCredentialsProvider: the SDK follows the 401 to the
//      protected resource metadata, then to the authorization server's
//      metadata, gets a token by the client-credentials grant, initializes;
//   3. list the tools and call hash;
//   4. the authorization server rotates its signing key (ROTATE_URL, the
//      harness's lever) and the token expires (wait TOKEN_TTL + 3 s);
//   5. the expired token, replayed by hand, is refused: record it;
//   6. call hash again on the same client: the server's 401 makes the SDK
//      fetch a new token, signed by the new key, and retry.
//
//   node client.mjs v2-dpop SERVER_URL   (environment: CLIENT_ID, CLIENT_SECRET)
//
// v2-dpop is @modelcontextprotocol/client's DPoP support (RFC 9449,
// SEP-1932): a ClientCredentialsProvider whose dpop() returns a DpopSession,
// so the SDK sends a DPoP proof with its token request (the authorization
// server then binds the token to the key, cnf.jkt, token_type DPoP) and
// presents the token as Authorization: DPoP with a fresh proof on every
// request to the server. It records the schemes the SDK sent, the token's
// binding, two tool calls, and the bound token replayed by hand as Bearer.

import * as v1client from '@modelcontextprotocol/sdk/client/index.js';
import * as v1http from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as v1auth from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import * as v2 from '@modelcontextprotocol/client';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function kidOf(token) {
  try {
    return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).kid;
  } catch {
    return null;
  }
}

function claimsOf(token) {
  const c = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
  return { iss: c.iss, aud: c.aud, sub: c.sub, scope: c.scope, ttl: c.exp - c.iat, cnf: c.cnf ?? null };
}

const legacyInit = {
  jsonrpc: '2.0', id: 0, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bare', version: '1' } },
};

// bareTo POSTs an initialize to url by hand, with token as a Bearer token.
async function bareTo(url, token) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(legacyInit) });
  await r.text();
  return { status: r.status, wwwAuthenticate: r.headers.get('www-authenticate') };
}

async function mainDpop(url) {
  const report = { requests: [] };
  report.unauthenticated = await bareTo(url, null);
  // Record every request the SDK makes: method, URL, status, the
  // Authorization scheme and whether a DPoP proof came with it (never the
  // token or the proof).
  const recordingFetch = async (input, options) => {
    const u = typeof input === 'string' ? input : input.url ?? String(input);
    const h = new Headers(options?.headers ?? {});
    const r = await fetch(input, options);
    report.requests.push({
      method: options?.method ?? 'GET', url: u, status: r.status,
      scheme: (h.get('authorization') ?? '').split(' ')[0], dpop: h.has('dpop'),
    });
    return r;
  };
  const session = await v2.DpopSession.create();
  class DpopClientCredentials extends v2.ClientCredentialsProvider {
    async dpop() { return session; }
  }
  const provider = new DpopClientCredentials({
    clientId: process.env.CLIENT_ID,
    clientSecret: process.env.CLIENT_SECRET,
    scope: 'mcp:tools',
  });
  const client = new v2.Client({ name: 'wasmcp-oauth-dpop-interop', version: '0.0.0' }, { versionNegotiation: { mode: 'auto' } });
  const transport = new v2.StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recordingFetch });
  await client.connect(transport);
  const tokens = provider.tokens();
  report.token = { tokenType: tokens.token_type, kid: kidOf(tokens.access_token), claims: claimsOf(tokens.access_token), thumbprint: session.thumbprint };
  report.protocolVersion = client.getNegotiatedProtocolVersion();
  report.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  report.hash1 = await client.callTool({ name: 'hash', arguments: { algorithm: 'sha256', text: 'abc' } });
  report.hash2 = await client.callTool({ name: 'hash', arguments: { algorithm: 'sha256', text: 'abc' } });
  // A thief holding the bound token but not the key, presenting it as Bearer.
  report.asBearer = await bareTo(url, tokens.access_token);
  await transport.terminateSession().catch(() => {});
  await client.close();
  process.stdout.write(JSON.stringify(report) + '\n');
}

async function main(sdk, url) {
  const { Client, StreamableHTTPClientTransport, ClientCredentialsProvider } = sdk === 'v2'
    ? v2
    : { Client: v1client.Client, StreamableHTTPClientTransport: v1http.StreamableHTTPClientTransport, ClientCredentialsProvider: v1auth.ClientCredentialsProvider };
  if (sdk !== 'v1' && sdk !== 'v2') throw new Error(`unknown SDK ${sdk}`);
  const report = { requests: [] };
  const init = {
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bare', version: '1' } },
  };
  const bare = async (token) => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (token) headers.authorization = `Bearer ${token}`;
    const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(init) });
    await r.text();
    return { status: r.status, wwwAuthenticate: r.headers.get('www-authenticate') };
  };
  report.unauthenticated = await bare(null);

  // Record every request the SDK makes (method and URL only).
  const recordingFetch = async (input, options) => {
    const u = typeof input === 'string' ? input : input.url ?? String(input);
    const r = await fetch(input, options);
    report.requests.push({ method: options?.method ?? 'GET', url: u, status: r.status });
    return r;
  };
  const provider = new ClientCredentialsProvider({
    clientId: process.env.CLIENT_ID,
    clientSecret: process.env.CLIENT_SECRET,
    // The SDK's client-credentials token request sends the provider's own
    // scope (not the challenge's): a machine client is registered for it.
    scope: 'mcp:tools',
  });
  const client = sdk === 'v2'
    ? new Client({ name: 'wasmcp-oauth-interop', version: '0.0.0' }, { versionNegotiation: { mode: 'auto' } })
    : new Client({ name: 'wasmcp-oauth-interop', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recordingFetch });
  await client.connect(transport);
  const first = provider.tokens().access_token;
  report.firstToken = { kid: kidOf(first), claims: claimsOf(first) };
  report.protocolVersion = sdk === 'v2' ? client.getNegotiatedProtocolVersion() : transport.protocolVersion ?? null;
  report.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  report.hash1 = await client.callTool({ name: 'hash', arguments: { algorithm: 'sha256', text: 'abc' } });

  const rot = await fetch(process.env.ROTATE_URL, { method: 'POST' });
  report.rotatedTo = (await rot.json()).kid;
  await sleep((Number(process.env.TOKEN_TTL) + 3) * 1000);
  report.expiredReplay = await bare(first);

  report.hash2 = await client.callTool({ name: 'hash', arguments: { algorithm: 'sha256', text: 'abc' } });
  const second = provider.tokens().access_token;
  report.secondToken = { kid: kidOf(second), claims: claimsOf(second), differs: second !== first };
  await transport.terminateSession().catch(() => {});
  await client.close();
  process.stdout.write(JSON.stringify(report) + '\n');
}

(process.argv[2] === 'v2-dpop' ? mainDpop(process.argv[3]) : main(process.argv[2], process.argv[3])).catch((err) => {
  console.error(err?.stack ?? String(err));
  process.exit(1);
});
