// Command codec is a wasmcp tool module for hashing text and converting it
// between common encodings (base64, base64url, base32, hex, URL
// percent-encoding).
package main

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/url"
	"strings"
	"unicode/utf8"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// HashIn is the hash tool's input.
type HashIn struct {
	Algorithm string `json:"algorithm" jsonschema:"description=Hash function,enum=sha256|sha1|sha512|md5"`
	Text      string `json:"text" jsonschema:"description=Text to hash (its UTF-8 bytes)"`
	Encoding  string `json:"encoding,omitempty" jsonschema:"description=How to write the digest,enum=hex|base64,default=hex"`
}

// HashOut is the hash tool's output.
type HashOut struct {
	Algorithm string `json:"algorithm"`
	Encoding  string `json:"encoding"`
	Digest    string `json:"digest" jsonschema:"description=The digest in the requested encoding"`
	Bytes     int    `json:"bytes" jsonschema:"description=Number of input bytes hashed"`
}

// TranscodeIn is the transcode tool's input.
type TranscodeIn struct {
	Scheme    string `json:"scheme" jsonschema:"description=Encoding scheme: base64 (standard, padded), base64url (URL-safe; written without padding, read with or without), base32 (standard, padded), hex, url (query-component percent-encoding),enum=base64|base64url|base32|hex|url"`
	Direction string `json:"direction" jsonschema:"description=encode turns text into the scheme; decode turns the scheme back into text,enum=encode|decode"`
	Text      string `json:"text" jsonschema:"description=The text to encode, or the encoded data to decode"`
}

// newServer registers the tools. reactor.go hands the server to package
// reactor: built with -buildmode=c-shared (go run ./examples/wasm/build
// does), the module is a reactor the host runs from a snapshot of its
// start-up, as docs/writing-tools.md tells a tool author to build a Go tool.
// command.go (build tag command) serves it as a command module instead, the
// Go runtime started in every instance, for the benchmark that measures
// both (host/deadline_bench_test.go).
func newServer() *guest.Server {
	s := guest.New("codec", "1.0.0")
	pure := &guest.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)}
	guest.AddTool(s, guest.Tool{
		Name:        "hash",
		Title:       "Hash text",
		Description: "Computes the sha256, sha1, sha512 or md5 digest of a text's UTF-8 bytes, in hex (default) or base64. Use it for exact checksums; never guess a hash.",
		Annotations: pure,
	}, hashText)
	guest.AddTool(s, guest.Tool{
		Name:        "transcode",
		Title:       "Encode or decode text",
		Description: "Encodes text as base64, base64url, base32, hex or URL percent-encoding, or decodes such data back to text. Invalid input is reported as an error naming the problem.",
		Annotations: pure,
	}, transcode)
	return s
}

func hashText(c *guest.Context, in HashIn) (HashOut, error) {
	var h hash.Hash
	switch strings.ToLower(in.Algorithm) {
	case "sha256":
		h = sha256.New()
	case "sha1":
		h = sha1.New()
	case "sha512":
		h = sha512.New()
	case "md5":
		h = md5.New()
	default:
		return HashOut{}, fmt.Errorf("unknown algorithm %q: use sha256, sha1, sha512 or md5", in.Algorithm)
	}
	h.Write([]byte(in.Text))
	sum := h.Sum(nil)
	out := HashOut{Algorithm: strings.ToLower(in.Algorithm), Encoding: strings.ToLower(in.Encoding), Bytes: len(in.Text)}
	switch out.Encoding {
	case "", "hex":
		out.Encoding = "hex"
		out.Digest = hex.EncodeToString(sum)
	case "base64":
		out.Digest = base64.StdEncoding.EncodeToString(sum)
	default:
		return HashOut{}, fmt.Errorf("unknown encoding %q: use hex or base64", in.Encoding)
	}
	return out, nil
}

func transcode(c *guest.Context, in TranscodeIn) (string, error) {
	scheme := strings.ToLower(in.Scheme)
	switch strings.ToLower(in.Direction) {
	case "encode":
		return encode(scheme, in.Text)
	case "decode":
		b, err := decode(scheme, in.Text)
		if err != nil {
			return "", err
		}
		if !utf8.Valid(b) {
			return "", fmt.Errorf("the decoded data (%d bytes) is not UTF-8 text; its hex form is %s", len(b), abbreviate(hex.EncodeToString(b), 200))
		}
		return string(b), nil
	}
	return "", fmt.Errorf("unknown direction %q: use encode or decode", in.Direction)
}

func encode(scheme, text string) (string, error) {
	b := []byte(text)
	switch scheme {
	case "base64":
		return base64.StdEncoding.EncodeToString(b), nil
	case "base64url":
		return base64.RawURLEncoding.EncodeToString(b), nil
	case "base32":
		return base32.StdEncoding.EncodeToString(b), nil
	case "hex":
		return hex.EncodeToString(b), nil
	case "url":
		return url.QueryEscape(text), nil
	}
	return "", unknownScheme(scheme)
}

func decode(scheme, text string) ([]byte, error) {
	data := strings.TrimSpace(text)
	var b []byte
	var err error
	switch scheme {
	case "base64":
		b, err = base64.StdEncoding.DecodeString(data)
	case "base64url":
		b, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(data, "="))
	case "base32":
		b, err = base32.StdEncoding.DecodeString(strings.ToUpper(data))
	case "hex":
		b, err = hex.DecodeString(data)
		if err != nil && len(data)%2 == 1 {
			err = fmt.Errorf("odd number of hex digits (%d)", len(data))
		}
	case "url":
		var s string
		s, err = url.QueryUnescape(text)
		b = []byte(s)
	default:
		return nil, unknownScheme(scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid %s input: %v", scheme, err)
	}
	return b, nil
}

func unknownScheme(s string) error {
	return fmt.Errorf("unknown scheme %q: use base64, base64url, base32, hex or url", s)
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
