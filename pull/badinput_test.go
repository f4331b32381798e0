package pull_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// fakeRegistry serves one repository, "tools/echo", on loopback: a tag
// "v1" for the manifest, and blobs by digest. Tests bend it.
type fakeRegistry struct {
	srv      *httptest.Server
	manifest []byte
	blobs    map[digest.Digest][]byte
	blobGets atomic.Int64
	tamper   func(d digest.Digest, b []byte) []byte // alters a blob as served
	redirect string                                 // when set, blob GETs are redirected to this base URL
	delay    time.Duration
	// onRequest, when set, runs before each request is answered.
	onRequest func(r *http.Request)
}

func newFake(t *testing.T, layers []ocispec.Descriptor, blobs map[digest.Digest][]byte) *fakeRegistry {
	t.Helper()
	f := &fakeRegistry{blobs: blobs}
	cfg := []byte(`{"architecture":"wasm","os":"wasip1"}`)
	f.blobs[digest.FromBytes(cfg)] = cfg
	m := ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: ocispec.Descriptor{MediaType: oci.MediaTypeWasmConfig, Digest: digest.FromBytes(cfg), Size: int64(len(cfg))}, Layers: layers}
	f.manifest, _ = json.Marshal(m)
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRegistry) serve(w http.ResponseWriter, r *http.Request) {
	if f.onRequest != nil {
		f.onRequest(r)
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	p := r.URL.Path
	switch {
	case p == "/v2/":
		w.WriteHeader(200)
	case strings.HasPrefix(p, "/v2/tools/echo/manifests/"):
		ref := strings.TrimPrefix(p, "/v2/tools/echo/manifests/")
		if ref != "v1" && ref != digest.FromBytes(f.manifest).String() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ocispec.MediaTypeImageManifest)
		w.Header().Set("Docker-Content-Digest", digest.FromBytes(f.manifest).String())
		w.Header().Set("Content-Length", fmt.Sprint(len(f.manifest)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(f.manifest)
		}
	case strings.HasPrefix(p, "/v2/tools/echo/blobs/"):
		d := digest.Digest(strings.TrimPrefix(p, "/v2/tools/echo/blobs/"))
		b, ok := f.blobs[d]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodGet {
			f.blobGets.Add(1)
			if f.redirect != "" {
				http.Redirect(w, r, f.redirect+p, http.StatusTemporaryRedirect)
				return
			}
		}
		if f.tamper != nil {
			b = f.tamper(d, b)
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(b)
		}
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeRegistry) ref() string {
	return strings.TrimPrefix(f.srv.URL, "http://") + "/tools/echo:v1"
}

var module = []byte("\x00asm\x01\x00\x00\x00")

func wasmLayer(mediaType string, b []byte, size int64) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: size}
}

// fetch runs what serve and pull run for one tool: resolve, then Fetch
// (unsigned allowed), into an empty cache, and returns the error and the
// files the cache holds afterwards.
func fetch(t *testing.T, ref string, timeout time.Duration) (error, []string) {
	t.Helper()
	c, err := oci.New(oci.Options{Credential: nil, DockerConfig: emptyConfig(t), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := pull.OpenCache(t.TempDir()+"/oci", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &pull.Syncer{Dir: t.TempDir(), Cache: cache, Source: c, Verify: pull.Verify, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f := false
	tool := &pull.Tool{Name: "echo", Reference: ref, Signed: &f}
	r, err := oci.ParseRef(ref)
	if err != nil {
		return err, nil
	}
	d, err := c.Resolve(context.Background(), r)
	if err == nil {
		_, err = s.Fetch(context.Background(), tool, d)
	}
	files, ferr := cache.Files()
	if ferr != nil {
		t.Fatal(ferr)
	}
	return err, files
}

func emptyConfig(t *testing.T) string {
	t.Helper()
	p := t.TempDir() + "/config.json"
	if err := writeFile(p, "{}"); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBadInput: each bad input is a clear error and leaves nothing in the
// blob cache.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T) (ref string, timeout time.Duration, after func(t *testing.T))
		want  string
	}{
		{"huge_layer", func(t *testing.T) (string, time.Duration, func(*testing.T)) {
			f := newFake(t, []ocispec.Descriptor{wasmLayer(oci.MediaTypeWasm, module, 10_000_000_000)}, map[digest.Digest][]byte{digest.FromBytes(module): module})
			return f.ref(), 0, func(t *testing.T) {
				if n := f.blobGets.Load(); n != 0 {
					t.Errorf("%d blobs fetched: the declared size should refuse it first", n)
				}
			}
		}, "module layer declares 10000000000 bytes, over the cap of 268435456: refused before download"},
		{"not_wasm", func(t *testing.T) (string, time.Duration, func(*testing.T)) {
			f := newFake(t, []ocispec.Descriptor{wasmLayer("application/vnd.oci.image.layer.v1.tar+gzip", module, int64(len(module)))}, map[digest.Digest][]byte{digest.FromBytes(module): module})
			return f.ref(), 0, nil
		}, `layer 1 has media type "application/vnd.oci.image.layer.v1.tar+gzip": not a WebAssembly module`},
		{"digest_mismatch", func(t *testing.T) (string, time.Duration, func(*testing.T)) {
			f := newFake(t, []ocispec.Descriptor{wasmLayer(oci.MediaTypeWasm, module, int64(len(module)))}, map[digest.Digest][]byte{digest.FromBytes(module): module})
			f.tamper = func(d digest.Digest, b []byte) []byte {
				if d != digest.FromBytes(module) {
					return b
				}
				x := append([]byte{}, b...)
				x[len(x)-1] ^= 1
				return x
			}
			return f.ref(), 0, nil
		}, "module layer: content hashes to sha256:3f499bf4"},
		{"redirect", func(t *testing.T) (string, time.Duration, func(*testing.T)) {
			f := newFake(t, []ocispec.Descriptor{wasmLayer(oci.MediaTypeWasm, module, int64(len(module)))}, map[digest.Digest][]byte{digest.FromBytes(module): module})
			other := newFake(t, nil, map[digest.Digest][]byte{digest.FromBytes(module): module})
			// Another host: the same loopback server under the name localhost.
			f.redirect = strings.Replace(other.srv.URL, "127.0.0.1", "localhost", 1)
			return f.ref(), 0, nil
		}, "refused a redirect from 127.0.0.1:"},
		{"slow_registry", func(t *testing.T) (string, time.Duration, func(*testing.T)) {
			f := newFake(t, []ocispec.Descriptor{wasmLayer(oci.MediaTypeWasm, module, int64(len(module)))}, map[digest.Digest][]byte{digest.FromBytes(module): module})
			f.delay = 5 * time.Second
			return f.ref(), 300 * time.Millisecond, nil
		}, "the registry did not answer within 300ms"},
		{"malformed_reference", func(t *testing.T) (string, time.Duration, func(*testing.T)) {
			return "127.0.0.1:1/Tools/ECHO:v1", 0, nil
		}, `reference "127.0.0.1:1/Tools/ECHO:v1": invalid repository "Tools/ECHO"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref, timeout, after := c.setup(t)
			start := time.Now()
			err, files := fetch(t, ref, timeout)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant an error containing %q", err, c.want)
			}
			t.Logf("%s: %v", c.name, err)
			for _, f := range files {
				if strings.HasPrefix(f, "blobs/sha256/") || strings.HasPrefix(f, "sigs/") {
					t.Errorf("cache holds %s after a refusal", f)
				}
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
			if after != nil {
				after(t)
			}
		})
	}
}
