package auth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestIntrospection(t *testing.T) {
	var calls atomic.Int32
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if u, p, ok := r.BasicAuth(); !ok || u != "rs" || p != "rs-secret" || r.PostFormValue("token_type_hint") != "access_token" {
			w.WriteHeader(401)
			return
		}
		exp := time.Now().Add(time.Minute).Unix()
		ans := map[string]any{"active": false}
		switch r.PostFormValue("token") {
		case "good":
			ans = map[string]any{"active": true, "sub": "alice", "scope": "mcp:tools", "aud": []string{testResource}, "exp": exp}
		case "client":
			ans = map[string]any{"active": true, "client_id": "svc", "aud": testResource, "exp": exp}
		case "elsewhere":
			ans = map[string]any{"active": true, "sub": "alice", "aud": "https://other.example/mcp", "exp": exp}
		case "expired":
			ans = map[string]any{"active": true, "sub": "alice", "aud": testResource, "exp": time.Now().Add(-time.Minute).Unix()}
		}
		_ = json.NewEncoder(w).Encode(ans)
	}))
	defer as.Close()
	in, err := NewIntrospection(IntrospectionConfig{URL: as.URL, ClientID: "rs", ClientSecret: "rs-secret", Audience: testResource})
	if err != nil {
		t.Fatal(err)
	}
	p, err := in.Authenticate(reqWith("Authorization", "Bearer good"))
	if err != nil || p.Name != "alice" || len(p.missing([]string{"mcp:tools"})) != 0 {
		t.Fatalf("good: %v %+v", err, p)
	}
	if _, err := in.Authenticate(reqWith("Authorization", "Bearer good")); err != nil || calls.Load() != 1 {
		t.Fatalf("cached: %v, %d calls", err, calls.Load())
	}
	if p, err := in.Authenticate(reqWith("Authorization", "Bearer client")); err != nil || p.Name != "svc" {
		t.Fatalf("client: %v %+v", err, p)
	}
	for _, tok := range []string{"elsewhere", "expired", "revoked"} {
		_, err := in.Authenticate(reqWith("Authorization", "Bearer "+tok))
		wantStatus(t, err, 401, CodeInvalidToken)
	}
	bad, _ := NewIntrospection(IntrospectionConfig{URL: as.URL, ClientID: "rs", ClientSecret: "wrong", Audience: testResource})
	_, err = bad.Authenticate(reqWith("Authorization", "Bearer good"))
	wantStatus(t, err, 502, "")
}

// TestIntrospectionNeedsAudience is issue 25 item 9: an active token
// whose introspection answer names no audience (aud absent, empty or
// null) is not known to be for this resource, so it is refused.
func TestIntrospectionNeedsAudience(t *testing.T) {
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exp := time.Now().Add(time.Minute).Unix()
		ans := map[string]any{"active": true, "sub": "alice", "exp": exp}
		switch r.PostFormValue("token") {
		case "emptyaud":
			ans["aud"] = []string{}
		case "nullaud":
			ans["aud"] = nil
		case "emptystring":
			ans["aud"] = ""
		case "good":
			ans["aud"] = testResource
		}
		_ = json.NewEncoder(w).Encode(ans)
	}))
	defer as.Close()
	in, err := NewIntrospection(IntrospectionConfig{URL: as.URL, Audience: testResource})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Authenticate(reqWith("Authorization", "Bearer good")); err != nil {
		t.Fatalf("good: %v", err)
	}
	for _, tok := range []string{"noaud", "emptyaud", "nullaud", "emptystring"} {
		_, err := in.Authenticate(reqWith("Authorization", "Bearer "+tok))
		wantStatus(t, err, 401, CodeInvalidToken)
	}
}
