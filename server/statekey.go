package server

import (
	"bytes"
	"fmt"
	"os"
)

// minStateKey is the shortest --state-key-file key accepted, in bytes.
const minStateKey = 32

// readStateKey reads the key that seals the requestState of input_required
// results: the file's contents without surrounding whitespace, at least
// minStateKey bytes (e.g. `head -c 48 /dev/urandom | base64 > key`). An
// empty path means no key: the server then makes a random one, and states
// do not survive a restart or travel between replicas.
func readStateKey(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--state-key-file: %w", err)
	}
	key := bytes.TrimSpace(b)
	if len(key) < minStateKey {
		return nil, fmt.Errorf("--state-key-file %s: the key has %d bytes; at least %d are needed", path, len(key), minStateKey)
	}
	return key, nil
}
