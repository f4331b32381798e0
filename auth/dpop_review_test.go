package auth

import (
	"net/http"
	"testing"
	"time"
)

// TestDPoPOutsideReview: attacks of an outside review on the DPoP checks
// that the other tests do not already make. htu spellings that are not
// this request's URL are refused (trailing slash, a percent-encoded
// path, userinfo, another port); a proof replayed at the very end of its
// window is still refused; a token whose cnf is not a DPoP binding, or
// binds it to something besides a DPoP key that wasmcp cannot check, is
// refused in both schemes.
func TestDPoPOutsideReview(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{})
	h := f.h
	tok := f.bound(t, h.jkt)
	now := f.c.now()
	for _, htu := range []string{
		testResource + "/",
		"https://mcp.example.test/%6dcp",
		"https://mcp.example.test/MCP",
		"https://user@mcp.example.test/mcp",
		"https://mcp.example.test:8443/mcp",
		"https://mcp.example.test:80/mcp",
		"https://mcp.example.test./mcp",
		"https://mcp.example.test/mcp/..",
		"https://mcp.example.test//mcp",
		"https:mcp.example.test/mcp",
	} {
		pr := h.sign(t, h.claims(http.MethodPost, htu, tok, now), "dpop+jwt")
		_, err := f.j.Authenticate(dpopReq(tok, pr))
		wantCode(t, err, 401, CodeInvalidDPoPProof, "htu")
	}
	// A proof made at the latest iat the leeway allows, replayed just
	// before it becomes too old: remembered all along.
	pr := h.proof(t, tok, now.Add(5*time.Second))
	if _, err := f.j.Authenticate(dpopReq(tok, pr)); err != nil {
		t.Fatal(err)
	}
	f.c.add(5*time.Second + 60*time.Second + 5*time.Second - time.Second)
	_, err := f.j.Authenticate(dpopReq(tok, pr))
	wantCode(t, err, 401, CodeInvalidDPoPProof, "used before")
	f.c.add(2 * time.Second)
	_, err = f.j.Authenticate(dpopReq(tok, pr))
	wantCode(t, err, 401, CodeInvalidDPoPProof, "too old")

	now = f.c.now()
	for name, cnf := range map[string]any{
		"cnf a string":         "abc",
		"cnf an array":         []string{h.jkt},
		"cnf jkt a number":     map[string]any{"jkt": 1},
		"cnf jkt empty":        map[string]any{"jkt": ""},
		"cnf jkt and x5t":      map[string]any{"jkt": h.jkt, "x5t#S256": "abc"},
		"cnf jkt and jwk":      map[string]any{"jkt": h.jkt, "jwk": map[string]any{"kty": "EC"}},
		"cnf JKT upper case":   map[string]any{"JKT": h.jkt},
		"cnf jkt of the other": map[string]any{"jkt": newHolder(t).jkt},
	} {
		cl := claimsAt(f.is, now)
		cl["cnf"] = cnf
		bt := f.k.sign(t, cl)
		if _, err := f.j.Authenticate(dpopReq(bt, h.proof(t, bt, now))); err == nil {
			t.Errorf("%s: accepted with a DPoP proof of the holder's key", name)
		}
		r := dpopReq(bt)
		r.Header.Set("Authorization", "Bearer "+bt)
		if _, err := f.j.Authenticate(r); err == nil {
			t.Errorf("%s: accepted as a bearer token", name)
		}
	}
}
