package limiter_test

import (
	"testing"

	"github.com/wasmcp/wasmcp/internal/limiter"
	"github.com/wasmcp/wasmcp/internal/limiter/limitertest"
)

// The in-process limiter keeps the contract every Limiter keeps.
func TestLocal(t *testing.T) { limitertest.Run(t, limiter.NewLocal()) }
