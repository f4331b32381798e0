package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// BenchmarkJWTCached is the per-call cost of a bearer JWT check when the
// token was validated before: parse the header, hash the token, look it up.
func BenchmarkJWTCached(b *testing.B) {
	is := newIssuer(b)
	k := newRSA(b, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(b, is, c)
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+k.sign(b, claimsAt(is, c.now())))
	if _, err := j.Authenticate(r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := j.Authenticate(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJWTUncached is the cost of a first sight of a token: the
// RS256 signature check and the claims validation (keys already fetched).
func BenchmarkJWTUncached(b *testing.B) {
	is := newIssuer(b)
	k := newRSA(b, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(b, is, c)
	toks := make([]string, 256)
	for i := range toks {
		cl := claimsAt(is, c.now())
		cl["jti"] = strconv.Itoa(i)
		toks[i] = k.sign(b, cl)
	}
	if _, err := j.Validate(context.Background(), toks[0]); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j.cache.clear()
		if _, err := j.Validate(context.Background(), toks[i%len(toks)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJWTDPoP is the per-call cost of a DPoP-bound token already
// validated (cached) with a fresh proof: the proof's ES256 signature, its
// claims, the key thumbprint and the replay cache (RFC 9449).
func BenchmarkJWTDPoP(b *testing.B) {
	is := newIssuer(b)
	k := newRSA(b, "k1")
	is.publish(k.public())
	c := &clock{t: time.Now()}
	j := newTestJWT(b, is, c)
	h := newHolder(b)
	cl := claimsAt(is, c.now())
	cl["cnf"] = map[string]string{"jkt": h.jkt}
	tok := k.sign(b, cl)
	// Every proof is made in one second of the frozen clock: the cache is
	// sized for them all, so the bound (a principal's proofs per second)
	// is not what is measured.
	j.dpop.seen = newReplayCache(b.N+1, b.N+1, time.Minute, c.now())
	reqs := make([]*http.Request, b.N+1)
	for i := range reqs {
		reqs[i] = dpopReq(tok, h.proof(b, tok, c.now()))
	}
	if _, err := j.Authenticate(reqs[b.N]); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := j.Authenticate(reqs[i]); err != nil {
			b.Fatal(err)
		}
	}
}
