package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Limits of one skill (SEP-2640: servers should not serve more).
const (
	// MaxFiles is the most files one skill may have, SKILL.md included.
	MaxFiles = 512
	// MaxBytes is the most bytes one skill's files may add up to.
	MaxBytes = 16 << 20
	// MaxDepth is the most segments a skill path may have.
	MaxDepth = 4
	// maxPathBytes bounds a file path inside a skill.
	maxPathBytes = 1024
)

// Manifest is the name of a skill's root file.
const Manifest = "SKILL.md"

// Scheme is the URI scheme of skill resources.
const Scheme = "skill"

// Skill is one checked skill, immutable once built.
type Skill struct {
	// Path is the skill path: its name, possibly after group segments
	// ("pdf-processing", "acme/pdf-processing").
	Path string
	// Name and Description are the frontmatter's.
	Name, Description string
	// Frontmatter is SKILL.md's YAML frontmatter as a JSON object.
	Frontmatter json.RawMessage
	// Files are the skill's files sorted by path, SKILL.md among them.
	Files []*File
	// Size is the sum of the files' sizes.
	Size int64
	// entry is the skill's entry as skills/list and skills/get carry it.
	entry []byte
	// dir and fp, for a skill of a skills directory: the directory, and
	// what a stat told of the skill's files when they were read
	// (LoadDirContext keeps a skill whose fp is unchanged).
	dir string
	fp  [32]byte
}

// File is one file of a skill.
type File struct {
	// Path is relative to the skill's root, '/'-separated.
	Path string
	// URI is skill://<skill path>/<path>, each segment percent-encoded.
	URI string
	// Data are the file's bytes, for a skill built from bytes (a module's);
	// nil for a file of a skills directory, read from disk when it is
	// read (Contents), so a large tree is not held in memory.
	Data []byte
	// Size is the file's size in bytes.
	Size int64
	// MimeType is the file's media type.
	MimeType string
	// Digest is "sha256:" and the hex SHA-256 of Data.
	Digest string
	// Text reports whether Data is valid UTF-8 (served as text).
	Text bool

	once     sync.Once
	contents []byte
	// open reads the file again (a skills directory's), nil when Data
	// holds it.
	open func() ([]byte, error)
}

// Input is one file handed to New.
type Input struct {
	Path     string
	Data     []byte
	MimeType string // "" picks one from the extension
	// Open, when set, reads the file when it is served instead of Data
	// being kept: Data is read once to check and digest the file, then
	// dropped (SKILL.md excepted). What Open returns later must have the
	// same digest, or the read fails.
	Open func() ([]byte, error)
}

// Root is the skill's directory URI, skill://<skill path>.
func (s *Skill) Root() string { return Scheme + "://" + s.Path }

// URI is the URI of the skill's SKILL.md.
func (s *Skill) URI() string { return s.Root() + "/" + Manifest }

// nameRule is the Agent Skills naming rule for one segment.
var nameRule = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// CheckPath checks a skill path: 1 to MaxDepth segments, each 1–64
// lowercase letters, digits and single hyphens.
func CheckPath(p string) error {
	segs := strings.Split(p, "/")
	if len(segs) > MaxDepth {
		return fmt.Errorf("skill path %q has more than %d segments", p, MaxDepth)
	}
	for _, s := range segs {
		if len(s) == 0 || len(s) > 64 || !nameRule.MatchString(s) {
			return fmt.Errorf("skill path %q: segment %q must be 1-64 lowercase letters, digits and single hyphens", p, s)
		}
	}
	return nil
}

// CheckFilePath checks a file path inside a skill: relative, '/'-separated,
// no empty, "." or ".." segment, no backslash, valid UTF-8 without control
// characters, at most 1024 bytes.
func CheckFilePath(p string) error {
	switch {
	case p == "":
		return errors.New("empty file path")
	case len(p) > maxPathBytes:
		return fmt.Errorf("file path %.40q… is longer than %d bytes", p, maxPathBytes)
	case !utf8.ValidString(p):
		return fmt.Errorf("file path %q is not valid UTF-8", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("file path %q is absolute", p)
	case strings.Contains(p, `\`):
		return fmt.Errorf("file path %q contains a backslash", p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("file path %q contains a control character", p)
		}
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			return fmt.Errorf("file path %q has an empty, \".\" or \"..\" segment", p)
		}
	}
	return nil
}

// New builds a skill at skill path p from its files: it checks the path,
// every file path and the limits, parses SKILL.md's frontmatter (whose name
// must equal the path's last segment) and computes digests and sizes.
func New(p string, files []Input) (*Skill, error) {
	if err := CheckPath(p); err != nil {
		return nil, err
	}
	if len(files) > MaxFiles {
		return nil, fmt.Errorf("skill %s has %d files; at most %d are served", p, len(files), MaxFiles)
	}
	s := &Skill{Path: p, Files: make([]*File, 0, len(files))}
	seen := make(map[string]bool, len(files))
	var manifest *File
	for _, in := range files {
		if err := CheckFilePath(in.Path); err != nil {
			return nil, fmt.Errorf("skill %s: %w", p, err)
		}
		if seen[in.Path] {
			return nil, fmt.Errorf("skill %s: file %q given twice", p, in.Path)
		}
		seen[in.Path] = true
		s.Size += int64(len(in.Data))
		if s.Size > MaxBytes {
			return nil, fmt.Errorf("skill %s is larger than %d bytes", p, MaxBytes)
		}
		sum := sha256.Sum256(in.Data)
		f := &File{Path: in.Path, URI: s.Root() + "/" + escapePath(in.Path), Data: in.Data, Size: int64(len(in.Data)),
			Digest: "sha256:" + hex.EncodeToString(sum[:]), Text: utf8.Valid(in.Data), MimeType: in.MimeType}
		if in.Open != nil && in.Path != Manifest {
			f.Data, f.open = nil, in.Open
		}
		if f.MimeType == "" {
			f.MimeType = mimeType(in.Path, f.Text)
		}
		if in.Path == Manifest {
			f.MimeType = "text/markdown"
			manifest = f
		}
		s.Files = append(s.Files, f)
	}
	// A file may not also be a directory ("a" and "a/b").
	for q := range seen {
		for d := path.Dir(q); d != "."; d = path.Dir(d) {
			if seen[d] {
				return nil, fmt.Errorf("skill %s: %q is both a file and a directory", p, d)
			}
		}
	}
	if manifest == nil {
		return nil, fmt.Errorf("skill %s has no %s at its root", p, Manifest)
	}
	if !manifest.Text {
		return nil, fmt.Errorf("skill %s: %s is not valid UTF-8", p, Manifest)
	}
	fm, name, desc, err := ParseFrontmatter(manifest.Data)
	if err != nil {
		return nil, fmt.Errorf("skill %s: %s: %w", p, Manifest, err)
	}
	if last := path.Base(p); name != last {
		return nil, fmt.Errorf("skill %s: frontmatter name %q differs from the skill's directory name %q", p, name, last)
	}
	s.Name, s.Description, s.Frontmatter = name, desc, fm
	sort.Slice(s.Files, func(i, j int) bool { return s.Files[i].Path < s.Files[j].Path })
	s.entry = s.encodeEntry()
	return s, nil
}

// Entry is the skill's entry, {"uri","frontmatter","resources"}, as
// skills/list and skills/get carry it; encoded once.
func (s *Skill) Entry() []byte { return s.entry }

type resourceEntry struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

func (s *Skill) encodeEntry() []byte {
	res := make([]resourceEntry, len(s.Files))
	for i, f := range s.Files {
		res[i] = resourceEntry{URI: f.URI, Digest: f.Digest, Size: int(f.Size)}
	}
	b, _ := json.Marshal(struct {
		URI         string          `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   []resourceEntry `json:"resources"`
	}{s.URI(), s.Frontmatter, res})
	return b
}

// ErrChanged is the error of Contents for a file of a skills directory
// that changed on disk since it was checked: it is served again once the
// directory is read again.
var ErrChanged = errors.New("the skill file changed on disk since it was read; it is served again once the skills directory is read again")

// Contents is the result of reading the file as a resource,
// {"contents":[{"uri","mimeType","text"|"blob"}]}: text when the file is
// UTF-8, base64 otherwise. A file built from bytes is encoded on first
// use, then kept; a skills directory's file is read from disk on each
// read (nothing of it is kept) and must still have its digest.
func (f *File) Contents() ([]byte, error) {
	if f.open != nil {
		data, err := f.open()
		if err != nil {
			return nil, fmt.Errorf("reading skill file %s: %w", f.URI, err)
		}
		sum := sha256.Sum256(data)
		if "sha256:"+hex.EncodeToString(sum[:]) != f.Digest {
			return nil, ErrChanged
		}
		return f.encode(data), nil
	}
	f.once.Do(func() { f.contents = f.encode(f.Data) })
	return f.contents, nil
}

func (f *File) encode(data []byte) []byte {
	type content struct {
		URI      string  `json:"uri"`
		MimeType string  `json:"mimeType"`
		Text     *string `json:"text,omitempty"`
		Blob     []byte  `json:"blob,omitempty"`
	}
	c := content{URI: f.URI, MimeType: f.MimeType}
	if f.Text {
		t := string(data)
		c.Text = &t
	} else {
		c.Blob = data
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	}
	b, _ := json.Marshal(struct {
		Contents []content `json:"contents"`
	}{[]content{c}})
	return b
}

// escapePath percent-encodes each segment of a file path for a URI.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// ParseFrontmatter reads the YAML frontmatter at the start of a SKILL.md
// (between two "---" lines) and returns it as a JSON object with its name
// and description. It refuses frontmatter that is not a mapping, lacks a
// name (Agent Skills naming rule) or a description (1–1024 characters), or
// has a metadata that is not a map of strings to strings.
func ParseFrontmatter(md []byte) (obj json.RawMessage, name, desc string, err error) {
	md = bytes.TrimPrefix(md, []byte("\xef\xbb\xbf"))
	first, rest, ok := cutLine(md)
	if !ok || string(bytes.TrimRight(first, "\r")) != "---" {
		return nil, "", "", errors.New(`does not begin with a "---" line opening YAML frontmatter`)
	}
	var yml []byte
	found := false
	for off := 0; off < len(rest); {
		line, _, _ := cutLine(rest[off:])
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			yml, found = rest[:off], true
			break
		}
		off += len(line) + 1
	}
	if !found {
		return nil, "", "", errors.New(`frontmatter has no closing "---" line`)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(yml, &doc); err != nil {
		return nil, "", "", fmt.Errorf("frontmatter is not valid YAML: %w", err)
	}
	coreSchema(&doc)
	var v any
	if err := doc.Decode(&v); err != nil {
		return nil, "", "", fmt.Errorf("frontmatter: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "", "", errors.New("frontmatter is not a mapping of keys to values")
	}
	name, _ = m["name"].(string)
	if len(name) == 0 || len(name) > 64 || !nameRule.MatchString(name) {
		return nil, "", "", fmt.Errorf("frontmatter name %q must be 1-64 lowercase letters, digits and single hyphens", name)
	}
	desc, _ = m["description"].(string)
	if n := utf8.RuneCountInString(desc); n == 0 || n > 1024 {
		return nil, "", "", errors.New("frontmatter description must be a string of 1-1024 characters")
	}
	if meta, ok := m["metadata"]; ok {
		mm, ok := meta.(map[string]any)
		for _, x := range mm {
			if _, s := x.(string); !s {
				ok = false
			}
		}
		if !ok {
			return nil, "", "", errors.New("frontmatter metadata must map strings to strings")
		}
	}
	if c, ok := m["compatibility"]; ok {
		if s, _ := c.(string); s == "" || utf8.RuneCountInString(s) > 500 {
			return nil, "", "", errors.New("frontmatter compatibility must be a string of 1-500 characters")
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, "", "", fmt.Errorf("frontmatter has no JSON form (non-string keys or non-finite numbers): %w", err)
	}
	return b, name, desc, nil
}

// coreSchema retypes what YAML 1.1 resolves beyond YAML 1.2's core schema
// (timestamps) as strings, so the JSON form is what clients that parse
// the frontmatter with the core schema (the TypeScript SDK's) compare it
// against.
func coreSchema(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!timestamp" {
		n.Tag = "!!str"
	}
	for _, c := range n.Content {
		coreSchema(c)
	}
}

// cutLine splits b at its first '\n'; ok is false when there is none.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

// mimeTypes maps the extensions skill files commonly have to media types;
// a fixed table, so a skill is served alike on every machine.
var mimeTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
	".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml",
	".toml": "application/toml", ".xml": "application/xml", ".html": "text/html",
	".htm": "text/html", ".css": "text/css", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".js": "text/javascript", ".mjs": "text/javascript", ".ts": "text/x-typescript",
	".py": "text/x-python", ".sh": "text/x-shellscript", ".go": "text/x-go",
	".rs": "text/x-rust", ".rb": "text/x-ruby", ".sql": "application/sql",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".svg": "image/svg+xml", ".pdf": "application/pdf",
	".zip": "application/zip", ".wasm": "application/wasm",
}

func mimeType(p string, text bool) string {
	if t, ok := mimeTypes[strings.ToLower(path.Ext(p))]; ok {
		return t
	}
	if text {
		return "text/plain"
	}
	return "application/octet-stream"
}
