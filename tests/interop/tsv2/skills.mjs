// Lists and loads wasmcp's skills with the official MCP TypeScript SDK v2
// client and its Skills extension (SEP-2640), and prints what it saw as one
// JSON object on stdout. The Go test in tests/interop (tsv2_test.go) runs
// it and checks the report; this script only records.
//
//   node skills.mjs http URL ERA     talk Streamable HTTP to URL
//   node skills.mjs stdio ERA COMMAND [ARG...]   spawn the server on stdio
//
// ERA is "legacy" (initialize, 2025-11-25) or a pinned revision such as
// "2026-07-28" (server/discover, stateless). Scenario:
//   1. connect; record the negotiated version and whether the client sees
//      the extension and directoryRead;
//   2. list every skill (SkillsClient.list checks every entry);
//   3. for each skill: get it by URI, read (and verify: size, digest,
//      frontmatter) its SKILL.md and every file its entry lists;
//   4. read each skill's root directory;
//   5. get an unknown skill and record the error code.
// Any failure prints the error on stderr and exits 1.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

async function main(argv) {
  const [mode, ...rest] = argv;
  let transport;
  let era;
  if (mode === 'http' && rest.length === 2) {
    transport = new StreamableHTTPClientTransport(new URL(rest[0]));
    era = rest[1];
  } else if (mode === 'stdio' && rest.length >= 2) {
    era = rest[0];
    transport = new StdioClientTransport({ command: rest[1], args: rest.slice(2), stderr: 'inherit' });
  } else {
    throw new Error('usage: node skills.mjs http URL ERA | node skills.mjs stdio ERA COMMAND [ARG...]');
  }
  const options = era === 'legacy' ? {} : { versionNegotiation: { mode: { pin: era } } };
  const client = new Client({ name: 'wasmcp-interop-tsv2', version: '1.0.0' }, options);
  await client.connect(transport);

  const skills = new SkillsClient(client);
  const report = {
    protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null,
    supported: skills.supported,
    directoryRead: skills.directoryRead,
  };
  const listing = await skills.list();
  report.listing = { count: listing.skills.length, ttlMs: listing.ttlMs ?? null, cacheScope: listing.cacheScope ?? null };
  report.skills = [];
  for (const entry of listing.skills) {
    const got = await skills.get(entry.uri);
    const manifest = await skills.read(got.skill);
    const files = [];
    for (const res of entry.resources) {
      const file = await skills.read(entry, res.uri);
      files.push({ uri: file.uri, size: file.bytes.length, verified: file.verified, mimeType: file.mimeType ?? null, text: file.text ?? null });
    }
    const root = entry.uri.slice(0, -'/SKILL.md'.length);
    const dir = await skills.readDirectory(root);
    report.skills.push({
      uri: entry.uri,
      frontmatter: entry.frontmatter,
      getTtlMs: got.ttlMs ?? null,
      manifest: { verified: manifest.verified, frontmatter: manifest.frontmatter, body: manifest.body },
      files,
      directory: dir.resources.map((r) => ({ uri: r.uri, name: r.name, mimeType: r.mimeType ?? null })),
    });
  }
  try {
    await skills.get('skill://no-such-skill/SKILL.md');
    report.unknownCode = null;
  } catch (err) {
    report.unknownCode = err?.code ?? String(err);
  }
  await client.close();
  process.stdout.write(JSON.stringify(report) + '\n');
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err) => {
    console.error(err?.stack ?? String(err));
    process.exit(1);
  },
);
