package protocol

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
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
	// Who owns what, for the grants: a module's skill (its files, its
	// directories and its entries in lists) follows the module's grant of
	// the skill's SKILL.md URI as a resource; an operator's skill (no
	// module) is open to every caller.
	mod   map[*skills.Skill]Module   // skill → the module shipping it (absent: the operator's)
	file  map[string]*skills.Skill   // skill file URI → its skill
	child map[string][]*skills.Skill // directory URI → the skill of each child, parallel to keys
	dir   map[string][]*skills.Skill // directory URI → the skills with a file under it
}

// NewCatalogWithSkills builds a catalog as NewCatalog does and adds the
// operator's skills (a skills directory), which keep their URIs against
// the skills modules ship; among modules, the first by name keeps a skill.
// A skill whose file URI is a resource a module declares is dropped.
func NewCatalogWithSkills(mods []Module, operator []*skills.Skill, log *slog.Logger) (*Catalog, []Conflict) {
	return newCatalog(nil, mods, operator, log)
}

// addSkills gathers the operator's skills, then the modules' (in name
// order), into the catalog, listing every SKILL.md among the resources.
func (c *Catalog) addSkills(operator []*skills.Skill, log *slog.Logger) []Conflict {
	set := &skillSet{byURI: map[string]*skills.Skill{}, files: map[string]*skills.File{},
		dirs: map[string][]json.RawMessage{}, keys: map[string][]string{},
		mod: map[*skills.Skill]Module{}, file: map[string]*skills.Skill{},
		child: map[string][]*skills.Skill{}, dir: map[string][]*skills.Skill{}}
	var conflicts []Conflict
	owner := map[string]string{}
	add := func(s *skills.Skill, from string, mod Module) {
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
		if mod != nil {
			set.mod[s] = mod
		}
		set.add(s)
		enc, _ := json.Marshal(&abi.Resource{URI: s.URI(), Name: s.Name, Description: s.Description,
			MimeType: "text/markdown", Size: set.files[s.URI()].Size})
		c.resources = append(c.resources, &resourceEntry{res: &abi.Resource{URI: s.URI()}, mod: mod, enc: enc})
	}
	for _, s := range operator {
		add(s, "skills directory", nil)
	}
	for _, m := range c.modules {
		if src, ok := m.(skillSource); ok {
			for _, s := range src.Skills() {
				add(s, m.Name(), m)
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
		sk, sd, so := make([]string, len(keys)), make([]json.RawMessage, len(keys)), make([]*skills.Skill, len(keys))
		for i, k := range idx {
			sk[i], sd[i], so[i] = keys[k], set.dirs[d][k], set.child[d][k]
		}
		set.keys[d], set.dirs[d], set.child[d] = sk, sd, so
	}
	c.skills = set
	return conflicts
}

// add indexes one skill: its entry, its files and its directories.
func (set *skillSet) add(s *skills.Skill) {
	set.list = append(set.list, s)
	set.byURI[s.URI()] = s
	owns := func(dir string) {
		if l := set.dir[dir]; len(l) == 0 || l[len(l)-1] != s {
			set.dir[dir] = append(l, s)
		}
	}
	child := func(dir, uri string, enc []byte) {
		set.keys[dir] = append(set.keys[dir], uri)
		set.dirs[dir] = append(set.dirs[dir], enc)
		set.child[dir] = append(set.child[dir], s)
		owns(dir)
	}
	seenDir := map[string]bool{s.Root(): true}
	if _, ok := set.keys[s.Root()]; !ok {
		set.dirs[s.Root()], set.keys[s.Root()] = nil, nil
	}
	owns(s.Root())
	for _, f := range s.Files {
		set.files[f.URI] = f
		set.file[f.URI] = s
		enc, _ := json.Marshal(&abi.Resource{URI: f.URI, Name: path.Base(f.Path), MimeType: f.MimeType, Size: f.Size})
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
	var item func(int) (Module, string)
	if set := r.cat.skills; set != nil && len(set.mod) > 0 {
		item = func(i int) (Module, string) { return set.mod[list[i]], list[i].URI() }
	}
	return r.page("skills", len(list),
		func(i int) string { return list[i].URI() },
		func(i int) []byte { return list[i].Entry() }, 0, item, ItemResource)
}

func (r *request) getSkill() Response {
	if r.p.URI == "" {
		return r.fail(errorf(CodeInvalidParams, "Missing required parameter: uri"))
	}
	var s *skills.Skill
	if c := r.cat.skills; c != nil {
		s = c.byURI[canonicalSkillURI(r.p.URI)]
	}
	if s == nil || !r.skillAllowed(s) {
		data, _ := json.Marshal(map[string]string{"uri": r.p.URI})
		return r.fail(&Error{Code: CodeInvalidParams, Message: "Unknown skill: " + r.p.URI, Data: data})
	}
	b := make([]byte, 0, len(s.Entry())+12)
	b = append(append(append(b, `{"skill":`...), s.Entry()...), '}')
	return r.ok(b, r.skillScope(s))
}

// readSkillFile answers resources/read of a skill file; ok is false when
// uri is none.
func (r *request) readSkillFile(uri string) (Response, bool) {
	if r.cat.skills == nil || !strings.HasPrefix(uri, skills.Scheme+"://") {
		return Response{}, false
	}
	uri = canonicalSkillURI(uri)
	f, ok := r.cat.skills.files[uri]
	if !ok || !r.skillAllowed(r.cat.skills.file[uri]) {
		// A file of a skill the caller may not use is as unknown as
		// one that does not exist.
		return Response{}, false
	}
	b, err := f.Contents()
	if err != nil {
		r.srv.log.WarnContext(r.ctx, "reading a skill file", "uri", uri, "err", err)
		msg := "the skill file could not be read"
		if errors.Is(err, skills.ErrChanged) {
			msg = err.Error()
		}
		return r.fail(&Error{Code: CodeInternalError, Message: msg}), true
	}
	return r.ok(b, r.skillScope(r.cat.skills.file[uri])), true
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
	var owners []*skills.Skill
	ok := false
	if c := r.cat.skills; c != nil {
		keys, ok = c.keys[uri]
		encs, owners = c.dirs[uri], c.child[uri]
		if ok && r.srv.opts.Access != nil {
			// A directory is there for the caller when a skill it may
			// use has a file under it; its children are those of the
			// skills the caller may use.
			ok = false
			for _, s := range c.dir[uri] {
				if r.skillAllowed(s) {
					ok = true
					break
				}
			}
		}
	}
	if !ok {
		data, _ := json.Marshal(map[string]string{"uri": r.p.URI})
		return r.fail(&Error{Code: CodeInvalidParams, Message: "Not a directory: " + r.p.URI, Data: data})
	}
	cursor := ""
	if r.p.Cursor != nil {
		cursor = *r.p.Cursor
	}
	idx, grants := r.visible(len(keys), func(i int) (Module, string) {
		return r.cat.skills.mod[owners[i]], owners[i].URI()
	}, ItemResource)
	scope := r.listScope(idx != nil, len(owners), func(i int) (Module, string) {
		return r.cat.skills.mod[owners[i]], owners[i].URI()
	}, ItemResource)
	if idx != nil {
		k, e := make([]string, len(idx)), make([]json.RawMessage, len(idx))
		for j, i := range idx {
			k[j], e[j] = keys[i], encs[i]
		}
		keys, encs = k, e
	}
	pk := pageKey{list: "directory\x00" + uri, era: r.era, cursor: cursor, grants: grants}
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
		b = r.srv.decorate(b, scope)
	}
	r.cat.pages.Store(pk, b)
	return Response{Body: ResultResponse(r.msg.ID, b), Era: r.era}
}

// skillAllowed reports whether the caller may use skill s: an operator's
// skill is open; a module's follows the module's grant of the skill's
// SKILL.md URI as a resource (the module's grant unless
// [access.resources."skill://…/SKILL.md"] names one).
// skillScope is the cache hint of an answer about s (its entry, one of its
// files): public when the caller nobody is may use it. The host serves
// skills itself; no guest is told who asks.
func (r *request) skillScope(s *skills.Skill) cacheHint {
	if s == nil || r.srv.opts.Access == nil || r.cat.skills == nil {
		return cachePublic
	}
	if mod, ok := r.cat.skills.mod[s]; ok && !r.srv.opts.Access(context.Background(), "", mod, ItemResource, s.URI()) {
		return cachePrivate
	}
	return cachePublic
}

func (r *request) skillAllowed(s *skills.Skill) bool {
	if s == nil || r.srv.opts.Access == nil || r.cat.skills == nil {
		return true
	}
	mod, ok := r.cat.skills.mod[s]
	return !ok || r.allowed(mod, ItemResource, s.URI())
}
