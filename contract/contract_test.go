package contract

import (
	"context"
	"testing"
)

func TestInputKey(t *testing.T) {
	if InputKey(context.Background()) != "" {
		t.Error("a plain context has an input key")
	}
	if got := InputKey(WithInputKey(context.Background(), "q1")); got != "q1" {
		t.Errorf("InputKey = %q, want q1", got)
	}
}
