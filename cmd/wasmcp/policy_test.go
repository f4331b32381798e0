package main

import (
	"testing"

	"github.com/wasmcp/wasmcp/host"
)

// TestInspectQueueAgreesWithREADME: docs/policy.md says max_queue defaults to
// 64 (0 lets no call wait); inspect shows the same, with or without
// max_instances.
func TestInspectQueueAgreesWithREADME(t *testing.T) {
	for _, c := range []struct {
		p    host.Policy
		want int
	}{
		{host.Policy{}, 64},
		{host.Policy{MaxInstances: 4}, 64},
		{host.Policy{MaxInstances: 4, MaxQueue: 16}, 16},
		{host.Policy{MaxInstances: 4, MaxQueue: host.NoQueue}, 0},
	} {
		if got := policyJSON(c.p)["max_queue"]; got != c.want {
			t.Errorf("%+v: max_queue %v, want %d", c.p, got, c.want)
		}
	}
}
