package main

import (
	"flag"
	"strings"

	"github.com/wasmcp/wasmcp/auth"
	"github.com/wasmcp/wasmcp/replica"
	"github.com/wasmcp/wasmcp/server"
	"github.com/wasmcp/wasmcp/telemetry"
)

// The flags of serve's settings, each bound to its server.Config field
// and defaulting to the value it holds (server.Defaults).

func registerHTTP(fs *flag.FlagSet, h *server.HTTPConfig) {
	fs.StringVar(&h.Mode, "http-mode", h.Mode, `HTTP mode: "streamable" (Streamable HTTP, both eras, sessions and SSE) or "simple" (POST-only JSON, no sessions)`)
	fs.BoolVar(&h.LegacySSE, "legacy-sse", h.LegacySSE, "also serve the 2024-11-05 HTTP+SSE transport (GET /sse, POST /messages)")
	fs.StringVar(&h.TLSCert, "tls-cert", h.TLSCert, "TLS certificate file (PEM); with --tls-key serves HTTPS with HTTP/2")
	fs.StringVar(&h.TLSKey, "tls-key", h.TLSKey, "TLS private key file (PEM)")
	fs.StringVar(&h.Origins, "allowed-origins", h.Origins, `comma-separated Origins browsers may call from ("scheme://host[:port]", "*" for any); default: none but the server's own, so no other web page (even on localhost) can call the server`)
	fs.StringVar(&h.Hosts, "allowed-hosts", h.Hosts, `comma-separated Host header values served ("name[:port]", "*" for any); default: localhost, 127.0.0.1, [::1] with the port on a loopback bind, any otherwise`)
	fs.Var((*byteSize)(&h.MaxBody), "max-body", "largest message accepted: an HTTP request body (413 past it) or a stdio line (-32600 past it), e.g. 4MiB, 512KiB or bytes")
	fs.Var((*byteSize)(&h.MaxHeaderBytes), "max-header-bytes", "largest request header block accepted (431 past it)")
	fs.IntVar(&h.MaxConns, "max-conns", h.MaxConns, "connections open at once, sized from the file-descriptor limit (3/4 of it, less 96); past it new ones are closed at accept (QUIC connections of --http3 are capped the same, counted apart)")
	fs.IntVar(&h.MaxConnsPerAddr, "max-conns-per-addr", h.MaxConnsPerAddr, "connections open at once from one remote IP address (raise to --max-conns behind a reverse proxy)")
	fs.IntVar(&h.MaxCallsPerConn, "max-calls-per-conn", h.MaxCallsPerConn, "requests in flight on one HTTP/2 connection (HTTP/1.1 serves one at a time)")
	fs.IntVar(&h.MaxSessionsPer, "max-sessions-per-principal", h.MaxSessionsPer, "legacy HTTP sessions one authenticated principal may hold (0: --max-sessions); past it that principal's idlest idle session is ended")
	fs.IntVar(&h.MaxSessions, "max-sessions", h.MaxSessions, "legacy HTTP sessions kept at once; past it the idlest idle session is ended, or initialize gets 503 when all are busy")
	fs.IntVar(&h.MaxStreams, "max-sse-streams", h.MaxStreams, "standalone SSE streams (GET /mcp, GET /sse) open at once, one per session; past it 503")
	fs.DurationVar(&h.ReadTimeout, "read-timeout", h.ReadTimeout, "longest time a client may take to send a request body")
	fs.DurationVar(&h.ReadHeaderTimeout, "read-header-timeout", h.ReadHeaderTimeout, "longest time a client may take to send a request's headers")
	fs.DurationVar(&h.IdleTimeout, "idle-timeout", h.IdleTimeout, "close a keep-alive connection idle this long")
	fs.DurationVar(&h.ShutdownGrace, "shutdown-grace", h.ShutdownGrace, "on SIGINT/SIGTERM, how long requests in flight may finish before their guests are stopped")
	fs.DurationVar(&h.SessionIdle, "session-idle", h.SessionIdle, "end a legacy HTTP session unused for this long")
	fs.DurationVar(&h.KeepAlive, "sse-keepalive", h.KeepAlive, "interval of keep-alive comments on quiet SSE streams")
	fs.IntVar(&h.Replay, "sse-replay", h.Replay, "SSE events kept per legacy session for Last-Event-ID")
	fs.DurationVar(&h.WriteTimeout, "sse-write-timeout", h.WriteTimeout, "longest wait for a client to take one SSE event")
	fs.BoolVar(&h.HTTP3, "http3", h.HTTP3, "also serve HTTP/3 (QUIC) on the UDP port of the --http port number; needs --tls-cert and --tls-key (make a development pair with 'wasmcp cert')")
	fs.IntVar(&h.HTTP3MaxStreams, "http3-max-streams", h.HTTP3MaxStreams, "HTTP/3: requests one QUIC connection may have open at once (more wait)")
}

func registerAuth(fs *flag.FlagSet, a *server.AuthConfig) {
	fs.StringVar(&a.Provider, "auth", a.Provider, `how HTTP clients authenticate: "none" (loopback only), "jwt" (OAuth 2.1 bearer access tokens), "introspect" (opaque OAuth tokens, RFC 7662), "apikey", "basic" or "forward"`)
	fs.BoolVar(&a.AllowUnauthenticated, "allow-unauthenticated", a.AllowUnauthenticated, "serve a non-loopback address with --auth none (logged as a warning at every start)")
	fs.StringVar(&a.Resource, "auth-resource", a.Resource, "this server's canonical resource URI as clients reach it, e.g. https://mcp.example.com/mcp (default: the scheme and listen address, /mcp); JWT audiences must name it")
	fs.StringVar(&a.Scopes, "auth-scopes", a.Scopes, "space- or comma-separated scopes every request needs (403 insufficient_scope without them)")
	fs.StringVar(&a.ScopesSupported, "auth-scopes-supported", a.ScopesSupported, "scopes published in the protected resource metadata (default: --auth-scopes)")
	fs.StringVar(&a.Issuer, "auth-issuer", a.Issuer, "jwt: the authorization server's issuer identifier; tokens' iss must equal it and its metadata names the JWKS")
	fs.StringVar(&a.JWKSURL, "auth-jwks-url", a.JWKSURL, "jwt: the issuer's JWKS URL (default: jwks_uri from the issuer's metadata)")
	fs.StringVar(&a.Algorithms, "auth-algorithms", a.Algorithms, "jwt: comma-separated signature algorithms allowed (default "+strings.Join(auth.DefaultAlgorithms(), ",")+")")
	fs.DurationVar(&a.Leeway, "auth-leeway", a.Leeway, "jwt: clock skew allowed on exp, nbf and iat")
	fs.DurationVar(&a.JWKSMinRefresh, "auth-jwks-min-refresh", a.JWKSMinRefresh, "jwt: least time between two fetches of the JWKS (a token naming an unknown key triggers one)")
	fs.BoolVar(&a.JWTAllowAnyTyp, "auth-jwt-allow-any-typ", a.JWTAllowAnyTyp, "jwt: accept access tokens whatever their typ header (default: only typ at+jwt, RFC 9068 §4); only for an issuer that cannot set it, since any other JWT it signs for this audience then passes for an access token")
	fs.BoolVar(&a.DPoPRequired, "auth-dpop-required", a.DPoPRequired, "jwt, introspect: accept only DPoP-bound access tokens presented with a DPoP proof (RFC 9449; published as dpop_bound_access_tokens_required); without it, DPoP-bound tokens need their proof and unbound bearer tokens are accepted")
	fs.StringVar(&a.IntrospectionURL, "auth-introspection-url", a.IntrospectionURL, "introspect: the authorization server's token introspection endpoint (RFC 7662)")
	fs.StringVar(&a.ClientID, "auth-client-id", a.ClientID, "introspect: this server's client id at the introspection endpoint")
	fs.StringVar(&a.ClientSecretFile, "auth-client-secret-file", a.ClientSecretFile, "introspect: file holding this server's client secret")
	fs.StringVar(&a.KeysFile, "auth-keys-file", a.KeysFile, `apikey: file of "NAME sha256:HEX [SCOPE...]" lines (HEX: printf %s "$KEY" | sha256sum); reloaded on change`)
	fs.StringVar(&a.KeyHeader, "auth-key-header", a.KeyHeader, `apikey: header carrying the key ("Authorization" means "Authorization: Bearer KEY")`)
	fs.StringVar(&a.Htpasswd, "auth-htpasswd", a.Htpasswd, "basic: htpasswd file of bcrypt hashes (htpasswd -B), USER:HASH[:SCOPES]; reloaded on change")
	fs.StringVar(&a.ForwardURL, "auth-forward-url", a.ForwardURL, "forward: the endpoint asked about each request (nginx auth_request / Traefik ForwardAuth convention)")
	fs.DurationVar(&a.ForwardTimeout, "auth-forward-timeout", a.ForwardTimeout, "forward: longest wait for the endpoint")
	fs.DurationVar(&a.ForwardCacheTTL, "auth-forward-cache-ttl", a.ForwardCacheTTL, "forward: how long an admission is remembered per credentials (negative: never)")
	fs.StringVar(&a.ForwardPrincipal, "auth-forward-principal-header", a.ForwardPrincipal, "forward: response header naming the principal")
	fs.StringVar(&a.ForwardScopes, "auth-forward-scopes-header", a.ForwardScopes, "forward: response header listing the principal's scopes")
	fs.IntVar(&a.PerPrincipalConcurrent, "per-principal-concurrent", a.PerPrincipalConcurrent, "requests (POST) one principal may have in flight; 0: no cap")
	fs.IntVar(&a.PerPrincipalPerMinute, "per-principal-per-minute", a.PerPrincipalPerMinute, "requests (POST) one principal may make per minute (token bucket); 0: no cap")
	fs.IntVar(&a.PerPrincipalBurst, "per-principal-burst", a.PerPrincipalBurst, "size of that token bucket (default: the per-minute rate)")
	fs.BoolVar(&a.AuditCalls, "audit-calls", a.AuditCalls, "log one line per guest call (principal, module, method, name, outcome, duration; never arguments)")
}

func registerOps(fs *flag.FlagSet, o *server.OpsConfig) {
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, `serve /metrics, /healthz and /readyz on this address too (e.g. 127.0.0.1:9464; "off" for none); default: on the --http listener when it binds loopback without --auth, else `+server.DefaultMetricsAddr+` (/metrics names every tool, grant-hidden ones too, and asks no credential)`)
	fs.StringVar(&o.OTLPEndpoint, "otlp-endpoint", o.OTLPEndpoint, "export traces (a span per request, tool call and guest instance) over OTLP to this URL, e.g. http://127.0.0.1:4318 (OTLP/HTTP) or http://127.0.0.1:4317 (--otlp-protocol grpc; https for TLS); default: no tracing")
	fs.StringVar(&o.OTLPProtocol, "otlp-protocol", o.OTLPProtocol, "OTLP protocol of --otlp-endpoint: "+telemetry.ProtocolHTTP+" or "+telemetry.ProtocolGRPC)
	fs.Float64Var(&o.TraceSample, "trace-sample", o.TraceSample, "fraction of new traces kept with --otlp-endpoint (a client's sampled trace context is followed)")
	fs.DurationVar(&o.Drain, "shutdown-drain", o.Drain, "on SIGINT/SIGTERM, how long /readyz answers 503 while the HTTP listener still serves, before the graceful shutdown (let load balancers notice)")
}

func registerTasks(fs *flag.FlagSet, t *server.TasksConfig) {
	fs.StringVar(&t.DataDir, "data-dir", t.DataDir, `directory of the task store, so that task records and results survive a restart (default `+server.DefaultDataDir()+`, one file per tools directory; "-" keeps tasks in memory)`)
	fs.IntVar(&t.InlineMS, "task-inline-ms", t.InlineMS, "how long (ms) a 2026-07-28 call of a task-capable tool runs inline before it becomes a task")
	fs.DurationVar(&t.TTL, "task-ttl", t.TTL, "how long a task and its result are kept, from its creation, when the client asks for no TTL")
	fs.DurationVar(&t.MaxTTL, "task-max-ttl", t.MaxTTL, "the longest TTL a client may ask for")
	fs.DurationVar(&t.PollInterval, "task-poll-interval", t.PollInterval, "polling interval suggested to clients")
	fs.IntVar(&t.MaxTasks, "max-tasks", t.MaxTasks, "tasks running (or waiting for input) at once on this server (with --store, across all replicas)")
	fs.IntVar(&t.MaxPerClient, "max-tasks-per-client", t.MaxPerClient, "tasks running (or waiting for input) at once per client principal (with --store, across all replicas)")
	fs.Int64Var(&t.MaxResultMiB, "task-max-result", t.MaxResultMiB, "cap on one task's stored result, MiB; a larger result fails its task")
	fs.Int64Var(&t.MaxStoredMiB, "task-max-stored", t.MaxStoredMiB, "cap on the task results stored on this server until they expire, MiB")
	fs.Int64Var(&t.MaxStoredClientMiB, "task-max-stored-per-client", t.MaxStoredClientMiB, "cap on the task results stored per client principal until they expire, MiB")
	fs.DurationVar(&t.Sweep, "task-sweep", t.Sweep, "interval of the sweeper that deletes expired tasks")
	fs.StringVar(&t.Store, "store", t.Store, "task store shared by replicas: redis://[user:pass@]host:port[/db] or rediss:// (TLS); query options (dial_timeout, read_timeout, pool_size, ...; docs/scale-out.md) and key_prefix= (default "+replica.DefaultKeyPrefix+"); replaces --data-dir")
	fs.DurationVar(&t.Lease, "task-lease", t.Lease, "with --store: how long the tasks this replica runs stay its own without renewal; a replica that stops renewing has its running tasks failed by another")
}
