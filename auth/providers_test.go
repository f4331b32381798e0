package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func reqWith(h, v string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	if v != "" {
		r.Header.Set(h, v)
	}
	return r
}

func wantStatus(t *testing.T, err error, status int, code string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Status != status || e.Code != code {
		t.Fatalf("err = %#v, want %d %q", err, status, code)
	}
}

func hashKey(k string) string {
	s := sha256.Sum256([]byte(k))
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestAPIKeys(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	write := func(s string) {
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	write("# keys\nalice " + hashKey("key-a") + " mcp:tools admin\n\nbob " + hashKey("key-b") + "\n")
	a, err := NewAPIKeys(APIKeysConfig{File: file, Reload: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Authenticate(reqWith("Authorization", "Bearer key-a"))
	if err != nil || p.Name != "alice" || len(p.missing([]string{"admin"})) != 0 {
		t.Fatalf("alice: %v %+v", err, p)
	}
	if p, err = a.Authenticate(reqWith("Authorization", "bearer key-b")); err != nil || p.Name != "bob" {
		t.Fatalf("bob: %v %+v", err, p)
	}
	_, err = a.Authenticate(reqWith("Authorization", "Bearer key-c"))
	wantStatus(t, err, 401, CodeInvalidToken)
	_, err = a.Authenticate(reqWith("Authorization", ""))
	wantStatus(t, err, 401, "")
	_, err = a.Authenticate(reqWith("Authorization", "Bearer"))
	wantStatus(t, err, 400, CodeInvalidRequest)
	_, err = a.Authenticate(reqWith("Authorization", "Bearer "+strings.Repeat("k", MaxCredentialBytes+1)))
	wantStatus(t, err, 400, CodeInvalidRequest)
	// The file reloads on change: bob's key is revoked, carol's added.
	time.Sleep(5 * time.Millisecond)
	write("alice " + hashKey("key-a") + "\ncarol " + hashKey("key-c") + "\n")
	time.Sleep(5 * time.Millisecond)
	_, err = a.Authenticate(reqWith("Authorization", "Bearer key-b"))
	wantStatus(t, err, 401, CodeInvalidToken)
	if p, err = a.Authenticate(reqWith("Authorization", "Bearer key-c")); err != nil || p.Name != "carol" {
		t.Fatalf("carol after reload: %v %+v", err, p)
	}
	// A file that stops parsing, or is gone, fails closed (issue 25 item
	// 14): every key is refused with 503 until the file is usable again.
	for _, broken := range []func(){
		func() { write("carol plaintext-key\n") },
		func() { write("alice " + hashKey("key-a") + "\nthis line has no hash\n") },
		func() {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		},
	} {
		broken()
		time.Sleep(5 * time.Millisecond)
		for _, k := range []string{"key-a", "key-c", "key-b"} {
			_, err = a.Authenticate(reqWith("Authorization", "Bearer "+k))
			wantStatus(t, err, 503, "")
		}
		write("alice " + hashKey("key-a") + "\ncarol " + hashKey("key-c") + "\n")
		time.Sleep(5 * time.Millisecond)
		if p, err = a.Authenticate(reqWith("Authorization", "Bearer key-c")); err != nil || p.Name != "carol" {
			t.Fatalf("carol after the file is fixed: %v %+v", err, p)
		}
	}
	// A broken file stays refused while it stays broken.
	write("garbage\n")
	time.Sleep(5 * time.Millisecond)
	_, err = a.Authenticate(reqWith("Authorization", "Bearer key-c"))
	wantStatus(t, err, 503, "")
	// A custom header holds the key as its whole value.
	write("alice " + hashKey("key-a") + "\n")
	h, err := NewAPIKeys(APIKeysConfig{File: file, Header: "X-API-Key"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err = h.Authenticate(reqWith("X-Api-Key", "key-a")); err != nil || p.Name != "alice" {
		t.Fatalf("X-API-Key: %v %+v", err, p)
	}
	// Plain keys in the file are refused at load.
	bad := filepath.Join(dir, "bad")
	_ = os.WriteFile(bad, []byte("alice key-a\n"), 0o600)
	if _, err := NewAPIKeys(APIKeysConfig{File: bad}); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("plain key file: %v", err)
	}
}

func basicHeader(u, p string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p))
}

func TestBasic(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "htpasswd")
	h, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	// htpasswd -B writes $2y$.
	hy := "$2y$" + string(h[4:])
	if err := os.WriteFile(file, []byte("alice:"+hy+":mcp:tools,admin\nbob:"+string(h)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := NewBasic(BasicConfig{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if b.Scheme() != `Basic realm="wasmcp", charset="UTF-8"` {
		t.Fatalf("scheme %q", b.Scheme())
	}
	p, err := b.Authenticate(reqWith("Authorization", basicHeader("alice", "s3cret")))
	if err != nil || p.Name != "alice" || len(p.missing([]string{"mcp:tools", "admin"})) != 0 {
		t.Fatalf("alice: %v %+v", err, p)
	}
	if p, err = b.Authenticate(reqWith("Authorization", basicHeader("bob", "s3cret"))); err != nil || p.Name != "bob" {
		t.Fatalf("bob: %v %+v", err, p)
	}
	_, err = b.Authenticate(reqWith("Authorization", basicHeader("alice", "wrong")))
	wantStatus(t, err, 401, CodeInvalidToken)
	_, err = b.Authenticate(reqWith("Authorization", basicHeader("mallory", "s3cret")))
	wantStatus(t, err, 401, CodeInvalidToken)
	_, err = b.Authenticate(reqWith("Authorization", "Basic !!!"))
	wantStatus(t, err, 400, CodeInvalidRequest)
	_, err = b.Authenticate(reqWith("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("nocolon"))))
	wantStatus(t, err, 400, CodeInvalidRequest)
	_, err = b.Authenticate(reqWith("Authorization", ""))
	wantStatus(t, err, 401, "")
	// Non-bcrypt hashes are refused at load.
	bad := filepath.Join(dir, "bad")
	_ = os.WriteFile(bad, []byte("alice:$apr1$abc$def\n"), 0o600)
	if _, err := NewBasic(BasicConfig{File: bad}); err == nil || !strings.Contains(err.Error(), "bcrypt") {
		t.Fatalf("apr1 file: %v", err)
	}
}

// TestBasicUnknownUserRunsBcrypt checks the timing path: an unknown user
// is compared against a dummy hash at the file's cost, so it costs one
// bcrypt comparison like a known user with a wrong password.
// TestBasicFileBrokenFailsClosed: a htpasswd file that stops parsing
// refuses every user, even one whose credentials are cached (issue 25
// item 14), until it parses again.
func TestBasicFileBrokenFailsClosed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "htpasswd")
	h, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	good := "alice:" + string(h) + "\n"
	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := NewBasic(BasicConfig{File: file, Reload: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authenticate(reqWith("Authorization", basicHeader("alice", "pw"))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if err := os.WriteFile(file, []byte("alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	_, err = b.Authenticate(reqWith("Authorization", basicHeader("alice", "pw")))
	wantStatus(t, err, 503, "")
	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := b.Authenticate(reqWith("Authorization", basicHeader("alice", "pw"))); err != nil {
		t.Fatalf("after the file is fixed: %v", err)
	}
}

func TestBasicUnknownUserRunsBcrypt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "htpasswd")
	h, _ := bcrypt.GenerateFromPassword([]byte("pw"), 12)
	_ = os.WriteFile(file, []byte("alice:"+string(h)+"\n"), 0o600)
	b, err := NewBasic(BasicConfig{File: file, CacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	users, _ := b.users.get()
	if c, err := bcrypt.Cost(users.dummy); err != nil || c != 12 {
		t.Fatalf("dummy hash cost = %d, %v; want the file's cost 12", c, err)
	}
	// Measured, not asserted on a clock: both paths take a cost-12
	// comparison, far longer than a map miss. A lower bound only.
	start := time.Now()
	_, err = b.Authenticate(reqWith("Authorization", basicHeader("nobody", "pw")))
	unknown := time.Since(start)
	wantStatus(t, err, 401, CodeInvalidToken)
	if unknown < 20*time.Millisecond {
		t.Fatalf("an unknown user took %v: no bcrypt comparison ran", unknown)
	}
}

func TestForward(t *testing.T) {
	var calls atomic.Int32
	var slow atomic.Bool
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if slow.Load() {
			time.Sleep(300 * time.Millisecond)
		}
		if r.Header.Get("X-Forwarded-Method") != "POST" || r.Header.Get("X-Forwarded-Uri") != "/mcp" || r.Header.Get("X-Original-URI") != "/mcp" {
			w.WriteHeader(500)
			return
		}
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			w.Header().Set("X-Auth-Principal", "alice")
			w.Header().Set("X-Auth-Scopes", "mcp:tools, admin")
			w.WriteHeader(204)
		case "Bearer noname":
			w.WriteHeader(200)
		case "Bearer forbidden":
			w.WriteHeader(403)
		case "Bearer broken":
			w.WriteHeader(500)
		default:
			w.WriteHeader(401)
		}
	}))
	defer auth.Close()
	f, err := NewForward(ForwardConfig{URL: auth.URL + "/check", Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Authenticate(reqWith("Authorization", "Bearer good"))
	if err != nil || p.Name != "alice" || len(p.missing([]string{"mcp:tools", "admin"})) != 0 {
		t.Fatalf("good: %v %+v", err, p)
	}
	// Cached: no second question.
	if _, err = f.Authenticate(reqWith("Authorization", "Bearer good")); err != nil || calls.Load() != 1 {
		t.Fatalf("cached: %v, calls %d", err, calls.Load())
	}
	_, err = f.Authenticate(reqWith("Authorization", "Bearer bad"))
	wantStatus(t, err, 401, CodeInvalidToken)
	_, err = f.Authenticate(reqWith("Authorization", ""))
	wantStatus(t, err, 401, "")
	_, err = f.Authenticate(reqWith("Authorization", "Bearer forbidden"))
	wantStatus(t, err, 403, CodeInsufficientScope)
	_, err = f.Authenticate(reqWith("Authorization", "Bearer broken"))
	wantStatus(t, err, 502, "")
	_, err = f.Authenticate(reqWith("Authorization", "Bearer noname"))
	wantStatus(t, err, 502, "")
	// Refusals are not cached.
	n := calls.Load()
	_, _ = f.Authenticate(reqWith("Authorization", "Bearer bad"))
	if calls.Load() != n+1 {
		t.Fatal("a refusal was cached")
	}
	slow.Store(true)
	_, err = f.Authenticate(reqWith("Authorization", "Bearer other"))
	wantStatus(t, err, 502, "")
	if _, err := NewForward(ForwardConfig{URL: "ftp://x"}); err == nil {
		t.Fatal("ftp URL accepted")
	}
}
