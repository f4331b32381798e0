package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

// TestOAuthTypeScriptSDK is the end-to-end OAuth 2.1 test: a real
// authorization server (the npm package oidc-provider, oauth/as.mjs), wasmcp
// serve --auth jwt trusting it, and the official TypeScript SDK client
// (oauth/client.mjs; v1 @modelcontextprotocol/sdk and v2
// @modelcontextprotocol/client, which speaks 2026-07-28) given only the
// server URL and its client credentials.
// The client is refused with 401, follows the protected resource metadata
// to the authorization server, gets a JWT access token by the
// client-credentials grant and lists and calls tools; then the
// authorization server rotates its signing key and the token expires,
// and the client's next call succeeds with a new token signed by the new
// key while the expired token is refused.
func TestOAuthTypeScriptSDK(t *testing.T) {
	for _, sdk := range []string{"v1", "v2"} {
		t.Run(sdk, func(t *testing.T) { testOAuth(t, sdk) })
	}
}

// startOAuth starts the authorization server (oauth/as.mjs, tokens of ttl
// seconds) and wasmcp serve --auth jwt trusting it, with extra serve
// flags. It returns node, the npm project's directory, the environment for
// client.mjs, the issuer, wasmcp's address and its log.
func startOAuth(t *testing.T, ttl int, extra ...string) (node, dir string, env []string, issuer, addr string, log *e2e.LockedBuffer) {
	t.Helper()
	node, dir = oauthProject(t)
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	resource := "http://" + addr + "/mcp"
	env = append(os.Environ(), "RESOURCE="+resource, "CLIENT_ID=mcp-e2e", "CLIENT_SECRET=e2e-secret-"+strconv.Itoa(os.Getpid()),
		"TOKEN_TTL="+strconv.Itoa(ttl))

	// The authorization server.
	asLog := &e2e.LockedBuffer{}
	as := exec.Command(node, filepath.Join(dir, "as.mjs"))
	as.Dir, as.Env, as.Stderr = dir, env, asLog
	out, err := as.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := as.Start(); err != nil {
		t.Fatal(err)
	}
	asExited := make(chan error, 1)
	go func() { asExited <- as.Wait() }()
	t.Cleanup(func() {
		stopProcess(t, as, asExited)
		if t.Failed() {
			t.Logf("authorization server stderr:\n%s", asLog)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	var hello struct{ Issuer string }
	if err != nil || json.Unmarshal([]byte(line), &hello) != nil || hello.Issuer == "" {
		t.Fatalf("the authorization server did not start: %v %q\n%s", err, line, asLog)
	}

	// wasmcp, trusting it.
	log = &e2e.LockedBuffer{}
	args := append([]string{"--http", addr, "--auth", "jwt", "--auth-issuer", hello.Issuer,
		"--auth-scopes", "mcp:tools", "--auth-leeway", "1s", "--auth-jwks-min-refresh", "1s"}, extra...)
	cmd := exec.Command(wasmcpBin, serveArgs(args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stopProcess(t, cmd, exited)
		checkServerLog(t, "wasmcp serve --auth jwt", log)
	})
	if err := waitListening(addr, exited, 60*time.Second); err != nil {
		t.Fatalf("wasmcp: %v\n%s", err, log)
	}
	return node, dir, env, hello.Issuer, addr, log
}

func testOAuth(t *testing.T, sdk string) {
	const ttl = 4 // seconds: the access tokens' lifetime
	node, dir, env, issuer, addr, log := startOAuth(t, ttl)
	resource := "http://" + addr + "/mcp"
	hello := struct{ Issuer string }{issuer}

	// The client.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), sdk, resource)
	var stdout, stderr bytes.Buffer
	cl.Dir, cl.Stdout, cl.Stderr = dir, &stdout, &stderr
	cl.Env = append(env, "ROTATE_URL="+hello.Issuer+"/_test/rotate")
	if err := cl.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstderr:\n%s\nstdout:\n%s\nwasmcp:\n%s", err, stderr.String(), stdout.String(), log)
	}
	var rep struct {
		Unauthenticated, ExpiredReplay struct {
			Status          int
			WWWAuthenticate string
		}
		Requests []struct {
			Method, URL string
			Status      int
		}
		FirstToken, SecondToken struct {
			Kid    string
			Claims struct {
				Iss, Sub, Scope string
				Aud             any
				TTL             int
			}
			Differs bool
		}
		Tools           []string
		Hash1, Hash2    tsCallResult
		RotatedTo       string
		ProtocolVersion string
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("client report: %v\n%s", err, stdout.String())
	}
	md := `Bearer resource_metadata="http://` + addr + `/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`
	if rep.Unauthenticated.Status != 401 || rep.Unauthenticated.WWWAuthenticate != md {
		t.Errorf("no token: %d %q, want 401 %q", rep.Unauthenticated.Status, rep.Unauthenticated.WWWAuthenticate, md)
	}
	// The SDK discovered the metadata and got its token from the issuer.
	var sawPRM, sawToken bool
	for _, r := range rep.Requests {
		sawPRM = sawPRM || strings.HasSuffix(r.URL, "/.well-known/oauth-protected-resource/mcp") && r.Status == 200
		sawToken = sawToken || strings.HasPrefix(r.URL, hello.Issuer) && r.Method == "POST" && r.Status == 200
	}
	if !sawPRM || !sawToken {
		t.Errorf("the SDK's requests lack the metadata or the token request: %+v", rep.Requests)
	}
	ft := rep.FirstToken
	if ft.Claims.Iss != hello.Issuer || ft.Claims.Aud != resource || ft.Claims.Sub != "mcp-e2e" || ft.Claims.Scope != "mcp:tools" || ft.Claims.TTL != ttl || ft.Kid != "key-1" {
		t.Errorf("first token: %+v", ft)
	}
	if sdk == "v2" && rep.ProtocolVersion != "2026-07-28" {
		t.Errorf("v2 negotiated %q, want 2026-07-28", rep.ProtocolVersion)
	}
	if !strings.Contains(strings.Join(rep.Tools, ","), "hash") {
		t.Errorf("tools: %v", rep.Tools)
	}
	for i, h := range []tsCallResult{rep.Hash1, rep.Hash2} {
		if len(h.Content) == 0 || !strings.Contains(h.Content[0].Text, hashSHA256) {
			t.Errorf("hash call %d: %+v", i+1, h)
		}
	}
	if rep.ExpiredReplay.Status != 401 || !strings.Contains(rep.ExpiredReplay.WWWAuthenticate, `error="invalid_token"`) ||
		!strings.Contains(rep.ExpiredReplay.WWWAuthenticate, "expired") {
		t.Errorf("the expired token: %d %q", rep.ExpiredReplay.Status, rep.ExpiredReplay.WWWAuthenticate)
	}
	if st := rep.SecondToken; !st.Differs || st.Kid != rep.RotatedTo || st.Kid == ft.Kid || st.Claims.Aud != resource {
		t.Errorf("second token: %+v (rotated to %q)", st, rep.RotatedTo)
	}
	// wasmcp fetched the JWKS again for the new kid and audited the refusals
	// without the tokens.
	logs := log.String()
	if !strings.Contains(logs, "audit=auth") || strings.Contains(logs, "eyJ") {
		t.Errorf("audit lines missing, or a token in the log:\n%s", logs)
	}
}

// TestOAuthDPoP is issue 25 item 12 against real peers: the official
// TypeScript client (@modelcontextprotocol/client, its DpopSession behind a
// ClientCredentialsProvider, oauth/client.mjs v2-dpop) gets a DPoP-bound
// token from a real authorization server (oidc-provider, oauth/as.mjs,
// whose DPoP support binds the token with cnf.jkt and token_type DPoP)
// and uses wasmcp serve --auth jwt --auth-dpop-required, which accepts
// only DPoP: every request of the SDK to wasmcp carries Authorization:
// DPoP and a proof, tools are listed and called, and the bound token sent
// as Bearer is refused with a DPoP challenge.
func TestOAuthDPoP(t *testing.T) {
	node, dir, env, issuer, addr, log := startOAuth(t, 60, "--auth-dpop-required")
	resource := "http://" + addr + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := exec.CommandContext(ctx, node, filepath.Join(dir, "client.mjs"), "v2-dpop", resource)
	var stdout, stderr bytes.Buffer
	cl.Dir, cl.Stdout, cl.Stderr, cl.Env = dir, &stdout, &stderr, env
	if err := cl.Run(); err != nil {
		t.Fatalf("client.mjs v2-dpop: %v\nstderr:\n%s\nstdout:\n%s\nwasmcp:\n%s", err, stderr.String(), stdout.String(), log)
	}
	type challenge struct {
		Status          int
		WWWAuthenticate string
	}
	var rep struct {
		Unauthenticated, AsBearer challenge
		Requests                  []struct {
			Method, URL, Scheme string
			Status              int
			DPoP                bool
		}
		Token struct {
			TokenType, Kid, Thumbprint string
			Claims                     struct {
				Iss, Sub, Scope string
				Aud             any
				Cnf             struct{ Jkt string }
			}
		}
		Tools           []string
		Hash1, Hash2    tsCallResult
		ProtocolVersion string
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("client report: %v\n%s", err, stdout.String())
	}
	md := `DPoP resource_metadata="http://` + addr + `/.well-known/oauth-protected-resource/mcp", scope="mcp:tools", algs="`
	if rep.Unauthenticated.Status != 401 || !strings.HasPrefix(rep.Unauthenticated.WWWAuthenticate, md) {
		t.Errorf("no token: %d %q, want 401 %q…", rep.Unauthenticated.Status, rep.Unauthenticated.WWWAuthenticate, md)
	}
	tk := rep.Token
	if tk.TokenType != "DPoP" || tk.Claims.Cnf.Jkt == "" || tk.Claims.Cnf.Jkt != tk.Thumbprint || tk.Claims.Iss != issuer || tk.Claims.Aud != resource {
		t.Errorf("the token is not bound to the SDK's DPoP key: %+v", tk)
	}
	var tokenReq, mcpDPoP int
	for _, r := range rep.Requests {
		switch {
		case strings.HasPrefix(r.URL, issuer) && r.Method == "POST":
			if r.Status == 200 && r.DPoP {
				tokenReq++
			}
		case r.URL == resource && r.Scheme != "":
			if r.Scheme != "DPoP" || !r.DPoP || r.Status >= 400 {
				t.Errorf("a request to wasmcp with a token but not DPoP, or refused: %+v", r)
			}
			mcpDPoP++
		}
	}
	if tokenReq == 0 || mcpDPoP < 4 {
		t.Errorf("token requests with a DPoP proof: %d; DPoP requests to wasmcp: %d (want ≥1, ≥4): %+v", tokenReq, mcpDPoP, rep.Requests)
	}
	if rep.ProtocolVersion != "2026-07-28" || !strings.Contains(strings.Join(rep.Tools, ","), "hash") {
		t.Errorf("negotiated %q, tools %v", rep.ProtocolVersion, rep.Tools)
	}
	for i, h := range []tsCallResult{rep.Hash1, rep.Hash2} {
		if len(h.Content) == 0 || !strings.Contains(h.Content[0].Text, hashSHA256) {
			t.Errorf("hash call %d: %+v", i+1, h)
		}
	}
	if rep.AsBearer.Status != 401 || !strings.HasPrefix(rep.AsBearer.WWWAuthenticate, "DPoP ") || !strings.Contains(rep.AsBearer.WWWAuthenticate, `error="invalid_token"`) {
		t.Errorf("the bound token as Bearer: %d %q, want 401 with a DPoP challenge", rep.AsBearer.Status, rep.AsBearer.WWWAuthenticate)
	}
	if logs := log.String(); strings.Contains(logs, "eyJ") {
		t.Errorf("a token or proof in the log:\n%s", logs)
	}
}

var (
	oauthOnce                sync.Once
	oauthDir, oauthNode      string
	oauthSkipMsg, oauthError string
)

// oauthProject installs the npm project in oauth/ (npmProject) and returns
// node and the directory. It skips the test without Node.js 20.19+ (what
// oidc-provider 9 needs) or npm.
func oauthProject(t *testing.T) (node, dir string) {
	t.Helper()
	oauthOnce.Do(func() {
		oauthDir = filepath.Join(repoRoot, "tests", "interop", "oauth")
		if n, err := exec.LookPath("node"); err == nil {
			out, _ := exec.Command(n, "--version").Output()
			v := strings.Split(strings.TrimPrefix(strings.TrimSpace(string(out)), "v"), ".")
			major, _ := strconv.Atoi(v[0])
			minor := 0
			if len(v) > 1 {
				minor, _ = strconv.Atoi(v[1])
			}
			if major == 20 && minor < 19 || major == 21 {
				oauthSkipMsg = "oidc-provider 9 needs Node.js 20.19+ or 22.12+, found " + strings.TrimSpace(string(out))
				return
			}
		}
		oauthNode, oauthSkipMsg, oauthError = npmProject(oauthDir, 20)
	})
	if oauthSkipMsg != "" {
		t.Skip(oauthSkipMsg)
	}
	if oauthError != "" {
		t.Fatal(oauthError)
	}
	return oauthNode, oauthDir
}
