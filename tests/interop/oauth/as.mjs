// A real OAuth 2.1 authorization server for the Go test in
// tests/interop/oauth_test.go: the certified OpenID provider `oidc-provider`
// on a loopback port, configured for the client-credentials grant with JWT
// access tokens (RFC 9068) bound by resource indicator (RFC 8707) to the MCP
// server under test.
//
//   node as.mjs   (environment: RESOURCE, CLIENT_ID, CLIENT_SECRET, TOKEN_TTL)
//
// It prints {"issuer": "http://127.0.0.1:PORT"} on stdout once listening.
// POST /_test/rotate replaces its signing key (a new kid; the JWKS then
// holds only the new key), as an operator's key rotation would; it is the
// test harness's lever, not something the MCP client knows about.

import http from 'node:http';
import crypto from 'node:crypto';
import Provider from 'oidc-provider';

const resource = process.env.RESOURCE;
const clientId = process.env.CLIENT_ID;
const clientSecret = process.env.CLIENT_SECRET;
const ttl = Number(process.env.TOKEN_TTL ?? '60');
if (!resource || !clientId || !clientSecret) {
  console.error('as.mjs: RESOURCE, CLIENT_ID and CLIENT_SECRET must be set');
  process.exit(2);
}

let generation = 0;
function signingKey() {
  generation++;
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: `key-${generation}`, alg: 'RS256', use: 'sig' };
}

function newProvider(issuer, key) {
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'mcp:tools',
    }],
    jwks: { keys: [key] },
    scopes: ['mcp:tools'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          if (indicator !== resource) {
            throw new Provider.errors.InvalidTarget(`unknown resource ${indicator}`);
          }
          return {
            scope: 'mcp:tools',
            audience: resource,
            accessTokenTTL: ttl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  });
  provider.on('server_error', (ctx, err) => console.error('as.mjs: server_error', err));
  return provider;
}

let provider;
const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/_test/rotate') {
    provider = newProvider(provider.issuer, signingKey());
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kid: `key-${generation}` }));
    return;
  }
  provider.callback()(req, res);
});
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  provider = newProvider(issuer, signingKey());
  process.stdout.write(JSON.stringify({ issuer }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
