package limitertest

import "testing"

// The in-process limiter keeps the contract every Limiter keeps.
func TestLocal(t *testing.T) { Run(t, NewLocal()) }
