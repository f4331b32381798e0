package protocol

import (
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/skills"
)

// ExtSkills is the identifier of the Skills extension (SEP-2640).
const ExtSkills = "io.modelcontextprotocol/skills"

// DirectoryMimeType is the mimeType of a directory resource.
const DirectoryMimeType = "inode/directory"

// skillSource is implemented by modules that ship skills (*host.Module).
type skillSource interface {
	Skills() []*skills.Skill
}

// skillSet is what a catalog serves of the Skills extension.
type skillSet struct {
	list  []*skills.Skill              // sorted by SKILL.md URI
	byURI map[string]*skills.Skill     // SKILL.md URI → skill
	files map[string]*skills.File      // any skill file URI → file
	dirs  map[string][]json.RawMessage // directory URI → its children, sorted by URI
	keys  map[string][]string          // directory URI → its children's URIs
}

// NewCatalogWithSkills builds a catalog as NewCatalog does and adds the
// operator's skills (a skills directory), which keep their URIs against
// the skills modules ship; among modules, the first by name keeps a skill.
// A skill whose file URI is a resource a module declares is dropped.
func NewCatalogWithSkills(mods []Module, operator []*skills.Skill, log *slog.Logger) (*Catalog, []Conflict) {
	return newCatalog(mods, operator, log)
}

// addSkills gathers the operator's skills, then the modules' (in name
// order), into the catalog, listing every SKILL.md among the resources.
func (c *Catalog) addSkills(operator []*skills.Skill, log *slog.Logger) []Conflict {
	set := &skillSet{byURI: map[string]*skills.Skill{}, files: map[string]*skills.File{},
		dirs: map[string][]json.RawMessage{}, keys: map[string][]string{}}
	var conflicts []Conflict
	owner := map[string]string{}
	add := func(s *skills.Skill, from string) {
		if prev, ok := owner[s.URI()]; ok {
			conflicts = append(conflicts, Conflict{Kind: "skill", Name: s.URI(), Kept: prev, Dropped: from})
			log.Warn("duplicate skill; the first keeps it", "skill", s.URI(), "kept", prev, "dropped", from)
			return
		}
		for _, f := range s.Files {
			if e, ok := c.resIdx[f.URI]; ok {
				conflicts = append(conflicts, Conflict{Kind: "skill", Name: s.URI(), Kept: e.mod.Name(), Dropped: from})
				log.Warn("a skill file is a module's resource; the skill is dropped", "uri", f.URI, "module", e.mod.Name(), "dropped", from)
				return
			}
		}
		owner[s.URI()] = from
		set.add(s)
		enc, _ := json.Marshal(&abi.Resource{URI: s.URI(), Name: s.Name, Description: s.Description,
			MimeType: "text/markdown", Size: int64(len(set.files[s.URI()].Data))})
		c.resources = append(c.resources, &resourceEntry{res: &abi.Resource{URI: s.URI()}, enc: enc})
	}
	for _, s := range operator {
		add(s, "skills directory")
	}
	for _, m := range c.modules {
		if src, ok := m.(skillSource); ok {
			for _, s := range src.Skills() {
				add(s, m.Name())
			}
		}
	}
	sort.Slice(set.list, func(i, j int) bool { return set.list[i].URI() < set.list[j].URI() })
	for d, keys := range set.keys {
		idx := make([]int, len(keys))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(i, j int) bool { return keys[idx[i]] < keys[idx[j]] })
		sk, sd := make([]string, len(keys)), make([]json.RawMessage, len(keys))
		for i, k := range idx {
			sk[i], sd[i] = keys[k], set.dirs[d][k]
		}
		set.keys[d], set.dirs[d] = sk, sd
	}
	c.skills = set
	return conflicts
}

// add indexes one skill: its entry, its files and its directories.
func (set *skillSet) add(s *skills.Skill) {
	set.list = append(set.list, s)
	set.byURI[s.URI()] = s
	child := func(dir, uri string, enc []byte) {
		set.keys[dir] = append(set.keys[dir], uri)
		set.dirs[dir] = append(set.dirs[dir], enc)
	}
	seenDir := map[string]bool{s.Root(): true}
	set.dirs[s.Root()], set.keys[s.Root()] = nil, nil
	for _, f := range s.Files {
		set.files[f.URI] = f
		enc, _ := json.Marshal(&abi.Resource{URI: f.URI, Name: path.Base(f.Path), MimeType: f.MimeType, Size: int64(len(f.Data))})
		dir := s.Root()
		if i := strings.LastIndexByte(f.URI, '/'); i > len(s.Root()) {
			dir = f.URI[:i]
		}
		child(dir, f.URI, enc)
		// Each directory between the file and the root is a child of its
		// parent, once.
		for d := dir; d != s.Root() && !seenDir[d]; {
			seenDir[d] = true
			parent := d[:strings.LastIndexByte(d, '/')]
			name, _ := url.PathUnescape(d[len(parent)+1:])
			enc, _ := json.Marshal(&abi.Resource{URI: d, Name: name, MimeType: DirectoryMimeType})
			child(parent, d, enc)
			d = parent
		}
	}
}

// skillUpdates lists the skill file URIs both catalogs serve with
// different content, for notifications/resources/updated.
func skillUpdates(old, cur *Catalog) []string {
	if old.skills == nil || cur.skills == nil {
		return nil
	}
	var out []string
	for uri, f := range cur.skills.files {
		if o, ok := old.skills.files[uri]; ok && o.Digest != f.Digest {
			out = append(out, uri)
		}
	}
	sort.Strings(out)
	return out
}

// HasSkills reports whether the catalog serves any skill.
func (c *Catalog) HasSkills() bool { return c.skills != nil && len(c.skills.list) > 0 }

// Skills returns the skills the catalog serves, sorted by URI.
func (c *Catalog) Skills() []*skills.Skill {
	if c.skills == nil {
		return nil
	}
	return c.skills.list
}

// skillsCapability is the extension's entry in the server's capabilities.
func skillsCapability() map[string]any { return map[string]any{"directoryRead": true} }

// canonicalSkillURI re-encodes a skill:// URI's path segments the way the
// catalog spells them, so that "a%20b" and "a b" find the same file; it
// drops a trailing '/'.
func canonicalSkillURI(uri string) string {
	const prefix = skills.Scheme + "://"
	if !strings.HasPrefix(uri, prefix) {
		return uri
	}
	segs := strings.Split(strings.TrimSuffix(uri[len(prefix):], "/"), "/")
	for i, s := range segs {
		if u, err := url.PathUnescape(s); err == nil {
			segs[i] = url.PathEscape(u)
		}
	}
	return prefix + strings.Join(segs, "/")
}

func (r *request) listSkills() Response {
	list := r.cat.Skills()
	return r.page("skills", len(list),
		func(i int) string { return list[i].URI() },
		func(i int) []byte { return list[i].Entry() }, 0, nil, "")
}

func (r *request) getSkill() Response {
	if r.p.URI == "" {
		return r.fail(errorf(CodeInvalidParams, "Missing required parameter: uri"))
	}
	var s *skills.Skill
	if c := r.cat.skills; c != nil {
		s = c.byURI[canonicalSkillURI(r.p.URI)]
	}
	if s == nil {
		data, _ := json.Marshal(map[string]string{"uri": r.p.URI})
		return r.fail(&Error{Code: CodeInvalidParams, Message: "Unknown skill: " + r.p.URI, Data: data})
	}
	b := make([]byte, 0, len(s.Entry())+12)
	b = append(append(append(b, `{"skill":`...), s.Entry()...), '}')
	return r.ok(b, true)
}

// readSkillFile answers resources/read of a skill file; ok is false when
// uri is none.
func (r *request) readSkillFile(uri string) (Response, bool) {
	if r.cat.skills == nil || !strings.HasPrefix(uri, skills.Scheme+"://") {
		return Response{}, false
	}
	f, ok := r.cat.skills.files[canonicalSkillURI(uri)]
	if !ok {
		return Response{}, false
	}
	return r.ok(f.Contents(), true), true
}

// readDirectory answers resources/directory/read: the direct children of
// a skill directory, paginated as resources/list is.
func (r *request) readDirectory() Response {
	if r.p.URI == "" {
		return r.fail(errorf(CodeInvalidParams, "Missing required parameter: uri"))
	}
	uri := canonicalSkillURI(r.p.URI)
	var keys []string
	var encs []json.RawMessage
	ok := false
	if c := r.cat.skills; c != nil {
		keys, ok = c.keys[uri]
		encs = c.dirs[uri]
	}
	if !ok {
		data, _ := json.Marshal(map[string]string{"uri": r.p.URI})
		return r.fail(&Error{Code: CodeInvalidParams, Message: "Not a directory: " + r.p.URI, Data: data})
	}
	cursor := ""
	if r.p.Cursor != nil {
		cursor = *r.p.Cursor
	}
	pk := pageKey{list: "directory\x00" + uri, era: r.era, cursor: cursor}
	if b, ok := r.cat.pages.Load(pk); ok {
		return Response{Body: ResultResponse(r.msg.ID, b.([]byte)), Era: r.era}
	}
	start := 0
	if cursor != "" {
		after, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return r.fail(errorf(CodeInvalidParams, "Invalid cursor"))
		}
		start = sort.SearchStrings(keys, string(after))
		if start < len(keys) && keys[start] == string(after) {
			start++
		}
	}
	end := min(start+r.srv.opts.PageSize, len(keys))
	b := make([]byte, 0, 256)
	b = append(b, `{"resources":[`...)
	for i := start; i < end; i++ {
		if i > start {
			b = append(b, ',')
		}
		b = append(b, encs[i]...)
	}
	b = append(b, ']')
	if end < len(keys) {
		b = append(b, `,"nextCursor":"`...)
		b = append(b, base64.RawURLEncoding.EncodeToString([]byte(keys[end-1]))...)
		b = append(b, '"')
	}
	b = append(b, '}')
	if r.era == Modern {
		b = r.srv.decorate(b, true)
	}
	r.cat.pages.Store(pk, b)
	return Response{Body: ResultResponse(r.msg.ID, b), Era: r.era}
}
