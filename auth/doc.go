// Package auth authenticates the HTTP clients of an MCP server and makes
// it an OAuth 2.1 protected resource.
//
// A Provider turns a request's credentials into a Principal: JWT is an
// OAuth resource server validating bearer access tokens against the
// issuer's JWKS (RFC 9068, RFC 8707 audience); APIKeys reads SHA-256
// hashed keys from a file; Basic reads an htpasswd file of bcrypt hashes;
// Forward asks an operator's endpoint (the auth_request / ForwardAuth
// convention). Guard wraps an http.Handler: it serves the Protected
// Resource Metadata (RFC 9728), refuses tokens in query strings, answers
// 401/403 with the RFC 6750 WWW-Authenticate challenges, applies the
// per-principal caps (Limits), writes one audit line per failure and puts
// the Principal in the request's context, where transports read it with
// FromContext or PrincipalName.
//
// The package knows nothing of MCP messages or of WebAssembly; it never
// logs a token, key or password.
package auth
