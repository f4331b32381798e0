package auth

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// boundFor is a token of sub bound to jkt.
func (f *dpopFixture) boundFor(t testing.TB, sub, jkt string) string {
	cl := claimsAt(f.is, f.c.now())
	cl["sub"] = sub
	cl["cnf"] = map[string]string{"jkt": jkt}
	return f.k.sign(t, cl)
}

// TestDPoPReplayCacheBounded (issue 36, 6): one principal making many
// proofs fills neither the cache nor anyone else's share: past its bound
// it forgets its own oldest proofs and refuses those and older ones (a
// forgotten proof is never accepted again), while another principal's
// fresh proofs are accepted throughout and the cache stays within its
// size. Before, the flood filled the server-wide cache and every other
// client got 401 "too many proofs are live".
func TestDPoPReplayCacheBounded(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{ReplayCacheSize: 20, ReplayCachePerPrincipal: 8, MaxAge: 30 * time.Second})
	mallory, bob := newHolder(t), newHolder(t)
	mTok, bTok := f.boundFor(t, "mallory", mallory.jkt), f.boundFor(t, "bob", bob.jkt)
	var early []string // mallory's first proofs, forgotten by the end
	for sec := 0; sec < 5; sec++ {
		for i := 0; i < 10; i++ {
			pr := mallory.proof(t, mTok, f.c.now())
			if sec == 0 {
				early = append(early, pr)
			}
			if _, err := f.j.Authenticate(dpopReq(mTok, pr)); err != nil && sec == 0 && i < 8 {
				t.Fatalf("mallory's proof %d: %v", i, err)
			}
		}
		if _, err := f.j.Authenticate(dpopReq(bTok, bob.proof(t, bTok, f.c.now()))); err != nil {
			t.Fatalf("bob's fresh proof after mallory's flood (second %d): %v", sec, err)
		}
		f.c.add(time.Second)
	}
	for _, pr := range early {
		_, err := f.j.Authenticate(dpopReq(mTok, pr))
		wantCode(t, err, 401, CodeInvalidDPoPProof, "")
	}
	if _, err := f.j.Authenticate(dpopReq(mTok, mallory.proof(t, mTok, f.c.now()))); err != nil {
		t.Fatalf("mallory's fresh proof: %v", err)
	}
	c := f.j.dpop.seen
	if c.n > 20 || len(c.seen) > 20 || len(c.parts["mallory"].q) > 8 {
		t.Fatalf("the cache holds %d proofs (%d digests), mallory %d: over its bounds 20 and 8", c.n, len(c.seen), len(c.parts["mallory"].q))
	}

	// Many principals: the cache full, the fullest one gives way, and a
	// newcomer is accepted.
	for i := 0; i < 30; i++ {
		h := newHolder(t)
		tok := f.boundFor(t, "p"+string(rune('a'+i)), h.jkt)
		if _, err := f.j.Authenticate(dpopReq(tok, h.proof(t, tok, f.c.now()))); err != nil {
			t.Fatalf("principal %d's first proof: %v", i, err)
		}
	}
	if c.n > 20 {
		t.Fatalf("the cache holds %d proofs, over its size 20", c.n)
	}
	f.c.add(time.Minute) // every proof too old: swept
	tok := f.boundFor(t, "mallory", mallory.jkt)
	if _, err := f.j.Authenticate(dpopReq(tok, mallory.proof(t, tok, f.c.now()))); err != nil {
		t.Fatal(err)
	}
	if c.n != 1 {
		t.Fatalf("after a minute the cache holds %d proofs, want 1", c.n)
	}
}

// TestDPoPReplayCacheDefaults: without settings the cache holds 100,000
// proofs, 10,000 per principal.
func TestDPoPReplayCacheDefaults(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{})
	if c := f.j.dpop.seen; c.max != 100000 || c.perMax != 10000 {
		t.Fatalf("defaults: %d in all, %d per principal; want 100000 and 10000", c.max, c.perMax)
	}
	if c := newReplayCache(5, 0, time.Minute, time.Now()); c.perMax != 1 {
		t.Fatalf("a cache of 5: %d per principal, want 1", c.perMax)
	}
}

// TestDPoPReplayAfterRestart (issue 36, 6): a proof used before the
// server started is refused after it, within its window: a restart
// forgets the jti cache, so nothing issued before it is accepted. A
// proof made since is.
func TestDPoPReplayAfterRestart(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{})
	tok := f.bound(t, f.h.jkt)
	pr := f.h.proof(t, tok, f.c.now())
	if _, err := f.j.Authenticate(dpopReq(tok, pr)); err != nil {
		t.Fatal(err)
	}
	f.c.add(3 * time.Second) // the restart
	j2, err := NewJWT(JWTConfig{Issuer: f.is.srv.URL, Audience: testResource, Leeway: 5 * time.Second, Now: f.c.now,
		HTTPClient: f.is.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = j2.Authenticate(dpopReq(tok, pr))
	wantCode(t, err, 401, CodeInvalidDPoPProof, "before this server started")
	if _, err := j2.Authenticate(dpopReq(tok, f.h.proof(t, tok, f.c.now()))); err != nil {
		t.Fatalf("a proof made after the restart: %v", err)
	}
}

// TestDPoPRefusedRequestNotRecorded (issue 36, 6): a request a Guard
// refuses with 429 leaves its proof unrecorded, so the proof neither
// takes room in the replay cache nor fails when sent again once the cap
// frees. Before, it was recorded and the retry got 401 "used before".
func TestDPoPRefusedRequestNotRecorded(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{})
	var hold sync.WaitGroup
	hold.Add(1)
	entered := make(chan struct{}, 1)
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		hold.Wait()
	})
	g, err := NewGuard(slow, GuardOptions{Provider: f.j, Resource: testResource, Limits: Limits{Concurrent: 1}})
	if err != nil {
		t.Fatal(err)
	}
	tok := f.bound(t, f.h.jkt)
	first := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { g.ServeHTTP(first, dpopReq(tok, f.h.proof(t, tok, f.c.now()))); close(done) }()
	<-entered
	pr := f.h.proof(t, tok, f.c.now())
	w := httptest.NewRecorder()
	g.ServeHTTP(w, dpopReq(tok, pr))
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("second request in flight: %d %s, want 429", w.Code, w.Body)
	}
	if n := f.j.dpop.seen.n; n != 1 {
		t.Fatalf("the replay cache holds %d proofs after one request let through and one refused, want 1", n)
	}
	hold.Done()
	<-done
	w = httptest.NewRecorder()
	g.ServeHTTP(w, dpopReq(tok, pr)) // enters (the channel has room) and returns: hold is done

	if w.Code != http.StatusOK {
		t.Fatalf("the refused request sent again: %d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	g.ServeHTTP(w, dpopReq(tok, pr))
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("the same proof a third time: %d, want 401", w.Code)
	}
}

// TestGuardTwoAuthorizationHeaders (issue 36, 6): two Authorization
// headers are 400, not "the first wins": a proxy reading the other one
// would see another caller.
func TestGuardTwoAuthorizationHeaders(t *testing.T) {
	f := newDPoPFixture(t, DPoPConfig{})
	g, err := NewGuard(echo, GuardOptions{Provider: f.j, Resource: testResource})
	if err != nil {
		t.Fatal(err)
	}
	tok := f.bound(t, f.h.jkt)
	r := dpopReq(tok, f.h.proof(t, tok, f.c.now()))
	r.Header.Add("Authorization", "Bearer other")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("two Authorization headers: %d %s, want 400", w.Code, w.Body)
	}
	kg, _ := newKeysGuard(t, GuardOptions{})
	r = httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Add("Authorization", "Bearer key-a")
	r.Header.Add("Authorization", "Bearer key-b")
	w = httptest.NewRecorder()
	kg.ServeHTTP(w, r)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("two API keys: %d, want 400", w.Code)
	}
}
