package protocol

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/bytedance/sonic"
)

// DefaultStateTTL is how long a requestState stays valid by default.
const DefaultStateTTL = 10 * time.Minute

// maxStateLen caps an encoded requestState.
const maxStateLen = 8 << 20

const stateVersion = 1

// stateEncoding is unpadded base64url; strict, so that no two encodings
// decode to the same bytes.
var stateEncoding = base64.RawURLEncoding.Strict()

// sealer seals and unseals request states with HMAC-SHA256.
type sealer struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

func newSealer(key []byte, ttl time.Duration) *sealer {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	if ttl <= 0 {
		ttl = DefaultStateTTL
	}
	return &sealer{key: bytes.Clone(key), ttl: ttl, now: time.Now}
}

// sealedState is what a requestState carries.
type sealedState struct {
	// Principal is a digest of the caller's principal.
	Principal string `json:"p"`
	// Method is the request's method.
	Method string `json:"m"`
	// Identity is a digest of what the request is about (tool, prompt or
	// resource and its arguments).
	Identity string `json:"i"`
	// Expires is the expiry, in Unix milliseconds.
	Expires int64 `json:"e"`
	// Answers are the input responses the guest used so far, by key.
	Answers map[string]json.RawMessage `json:"a,omitempty"`
	// Guest is the guest's own state (wasmcp/state).
	Guest json.RawMessage `json:"s,omitempty"`
}

// seal encodes st with its expiry set: base64url(version || mac || payload),
// the MAC covering version and payload.
func (s *sealer) seal(st *sealedState) (string, error) {
	st.Expires = s.now().Add(s.ttl).UnixMilli()
	payload, err := sonic.Marshal(st)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 1+sha256.Size, 1+sha256.Size+len(payload))
	buf[0] = stateVersion
	buf = append(buf, payload...)
	m := hmac.New(sha256.New, s.key)
	m.Write(buf[:1])
	m.Write(payload)
	copy(buf[1:], m.Sum(nil))
	return stateEncoding.EncodeToString(buf), nil
}

// Reasons a requestState is refused.
var (
	errStateInvalid = errors.New("invalid requestState")
	errStateExpired = errors.New("expired requestState")
)

// unseal verifies and decodes a requestState. The MAC is checked, in
// constant time, before anything is decoded.
func (s *sealer) unseal(token string) (*sealedState, error) {
	if len(token) == 0 || len(token) > maxStateLen || strings.ContainsAny(token, "\r\n") {
		// Go's base64 decoders skip CR and LF even in strict mode; a
		// token is only ever the exact text the sealer produced.
		return nil, errStateInvalid
	}
	buf, err := stateEncoding.DecodeString(token)
	if err != nil || len(buf) < 1+sha256.Size || buf[0] != stateVersion {
		return nil, errStateInvalid
	}
	payload := buf[1+sha256.Size:]
	m := hmac.New(sha256.New, s.key)
	m.Write(buf[:1])
	m.Write(payload)
	if !hmac.Equal(m.Sum(nil), buf[1:1+sha256.Size]) {
		return nil, errStateInvalid
	}
	var st sealedState
	if err := sonic.Unmarshal(payload, &st); err != nil {
		return nil, errStateInvalid
	}
	if s.now().UnixMilli() > st.Expires {
		return nil, errStateExpired
	}
	return &st, nil
}

// digest is a short, stable digest of b.
func digest16(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p))))
		h.Write([]byte{0})
		h.Write(p)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}

// canonicalJSON re-encodes a JSON value with sorted object keys and no
// insignificant space, keeping numbers as written; nil for an absent or
// null value.
func canonicalJSON(raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v) // encoding/json sorts map keys
}
