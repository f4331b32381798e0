package auth

import (
	"container/heap"
	"sync"
	"time"
)

// replayCache remembers the DPoP proofs accepted (a digest of key
// thumbprint and jti) until they are too old to be accepted anyway (RFC
// 9449 §11.1), in a store one principal cannot fill for the others.
//
// Each principal holds at most perMax proofs and the whole cache at most
// max. A principal over its bound, or the one holding the most when the
// cache is full, forgets its oldest proof and from then on refuses every
// proof of its own issued no later than that one (its floor): a forgotten
// proof can never be replayed, and only the principal that filled the
// cache loses anything — proofs older than the ones it is making. Proofs
// issued before the second the process started are refused the same way
// (a restart forgets nothing that could be replayed).
type replayCache struct {
	mu     sync.Mutex
	seen   map[[32]byte]time.Time // digest → iat of the live proofs
	parts  map[string]*replayPart // by principal
	heap   partHeap               // the parts, the fullest first
	n      int                    // proofs held
	max    int
	perMax int
	life   time.Duration // how long after its iat a proof is remembered
	start  time.Time     // proofs issued before it are refused
	swept  time.Time
}

// replayPart is one principal's proofs, oldest first.
type replayPart struct {
	name  string
	q     []replayEntry
	floor time.Time // its proofs issued no later than floor are refused
	idx   int       // in the heap
}

type replayEntry struct {
	k   [32]byte
	iat time.Time
}

// The reasons a replayCache refuses a proof.
const (
	replayUsed    = "the DPoP proof was used before (jti); make a new proof"
	replayStarted = "the DPoP proof was issued before this server started (iat); make a new proof"
	replayFloor   = "the DPoP proof is older than proofs this server had to forget for this principal (too many live proofs); make a new proof"
)

// newReplayCache holds size proofs (0: 100,000), perMax per principal
// (0: a tenth of size), each for life after its iat; proofs issued before
// start's second are refused.
func newReplayCache(size, perMax int, life time.Duration, start time.Time) *replayCache {
	if size <= 0 {
		size = 100000
	}
	if perMax <= 0 {
		perMax = max(1, size/10)
	}
	perMax = min(perMax, size)
	return &replayCache{seen: map[[32]byte]time.Time{}, parts: map[string]*replayPart{},
		max: size, perMax: perMax, life: life, start: start.Truncate(time.Second)}
}

// check reports why the proof k of name issued at iat would be refused,
// "" when it would be accepted; it records nothing.
func (c *replayCache) check(name string, k [32]byte, iat, now time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refusal(name, k, iat, now)
}

func (c *replayCache) refusal(name string, k [32]byte, iat, now time.Time) string {
	if iat.Before(c.start) {
		return replayStarted
	}
	if p := c.parts[name]; p != nil && !p.floor.IsZero() && !iat.After(p.floor) {
		return replayFloor
	}
	if t, ok := c.seen[k]; ok && now.Before(t.Add(c.life)) {
		return replayUsed
	}
	return ""
}

// add records the proof k of name issued at iat, or reports why it is
// refused.
func (c *replayCache) add(name string, k [32]byte, iat, now time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if why := c.refusal(name, k, iat, now); why != "" {
		return why
	}
	if now.Sub(c.swept) > time.Minute {
		c.sweep(now)
	}
	p := c.parts[name]
	if p == nil {
		p = &replayPart{name: name}
		c.parts[name] = p
		heap.Push(&c.heap, p)
	}
	p.q = append(p.q, replayEntry{k: k, iat: iat})
	c.seen[k] = iat
	c.n++
	heap.Fix(&c.heap, p.idx)
	for len(p.q) > c.perMax {
		c.forget(p, now)
	}
	if c.n > c.max && now.Sub(c.swept) > time.Second {
		c.sweep(now)
	}
	for c.n > c.max {
		c.forget(c.heap[0], now)
	}
	return ""
}

// forget drops p's oldest proof, raising p's floor to it when it is still
// live.
func (c *replayCache) forget(p *replayPart, now time.Time) {
	e := p.q[0]
	p.q = p.q[1:]
	c.n--
	if t, ok := c.seen[e.k]; ok && t.Equal(e.iat) {
		delete(c.seen, e.k)
	}
	if now.Before(e.iat.Add(c.life)) && e.iat.After(p.floor) {
		p.floor = e.iat
	}
	heap.Fix(&c.heap, p.idx)
}

// sweep drops the proofs too old to be accepted anyway, and the parts
// with neither proofs nor a live floor.
func (c *replayCache) sweep(now time.Time) {
	c.swept = now
	for name, p := range c.parts {
		live := p.q[:0]
		for _, e := range p.q {
			if now.Before(e.iat.Add(c.life)) {
				live = append(live, e)
				continue
			}
			c.n--
			if t, ok := c.seen[e.k]; ok && t.Equal(e.iat) {
				delete(c.seen, e.k)
			}
		}
		clear(p.q[len(live):])
		p.q = live
		if !p.floor.IsZero() && !now.Before(p.floor.Add(c.life)) {
			p.floor = time.Time{}
		}
		if len(p.q) == 0 && p.floor.IsZero() {
			delete(c.parts, name)
		}
	}
	c.heap = c.heap[:0]
	for _, p := range c.parts {
		p.idx = len(c.heap)
		c.heap = append(c.heap, p)
	}
	heap.Init(&c.heap)
}

// partHeap orders parts by the proofs they hold, the most first.
type partHeap []*replayPart

func (h partHeap) Len() int           { return len(h) }
func (h partHeap) Less(i, j int) bool { return len(h[i].q) > len(h[j].q) }
func (h partHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *partHeap) Push(x any) {
	p := x.(*replayPart)
	p.idx = len(*h)
	*h = append(*h, p)
}
func (h *partHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return p
}
