package protocol

import (
	"context"
	"log/slog"
	"sync"

	"golang.org/x/time/rate"
)

// Failed calls are logged at most this often (a burst, then per second):
// an HTTP/2 rapid-reset attack, each reset stream canceling a call, once
// wrote 37,797 WARN lines in 8 s. The lines left out are counted on the
// next one logged (suppressed=N).
const (
	failLogBurst  = 20
	failLogPerSec = 5
)

// rateLog logs warnings at a bounded rate.
type rateLog struct {
	lim *rate.Limiter

	mu         sync.Mutex
	suppressed int
}

func newRateLog() *rateLog {
	return &rateLog{lim: rate.NewLimiter(failLogPerSec, failLogBurst)}
}

// warn logs msg at WARN unless the rate is spent.
func (l *rateLog) warn(ctx context.Context, log *slog.Logger, msg string, args ...any) {
	if !l.lim.Allow() {
		l.mu.Lock()
		l.suppressed++
		l.mu.Unlock()
		return
	}
	l.mu.Lock()
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	if n > 0 {
		args = append(args, "suppressed", n)
	}
	log.WarnContext(ctx, msg, args...)
}
