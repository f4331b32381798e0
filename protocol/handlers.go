package protocol

import (
	"encoding/base64"
	"sort"

	"github.com/bytedance/sonic"
)

type handler func(r *request) Response

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"initialize":               (*request).initialize,
		"ping":                     (*request).empty,
		"server/discover":          (*request).discover,
		"logging/setLevel":         (*request).setLevel,
		"tools/list":               (*request).listTools,
		"tools/call":               (*request).callTool,
		"resources/list":           (*request).listResources,
		"resources/templates/list": (*request).listTemplates,
		"resources/read":           (*request).readResource,
		"resources/subscribe":      (*request).subscribe,
		"resources/unsubscribe":    (*request).subscribe,
		"prompts/list":             (*request).listPrompts,
		"prompts/get":              (*request).getPrompt,
		"completion/complete":      (*request).complete,
		"subscriptions/listen":     (*request).listen,
		"tasks/get":                (*request).tasksGet,
		"tasks/result":             (*request).tasksResult,
		"tasks/list":               (*request).tasksList,
		"tasks/cancel":             (*request).tasksCancel,
		"tasks/update":             (*request).tasksUpdate,
		"skills/list":              (*request).listSkills,
		"skills/get":               (*request).getSkill,
		"resources/directory/read": (*request).readDirectory,
	}
}

func (r *request) empty() Response { return r.ok([]byte("{}"), noCache) }

// capabilities are the server capabilities for a revision.
func (r *request) capabilities() map[string]any {
	caps := map[string]any{
		"tools": map[string]any{"listChanged": true},
		// subscribe: resources/subscribe (legacy), resourceSubscriptions
		// on subscriptions/listen (modern).
		"resources": map[string]any{"listChanged": true, "subscribe": true},
		"prompts":   map[string]any{"listChanged": true},
	}
	if r.hint.Simple {
		// Nothing but responses reach the client: no list changes,
		// subscriptions or log messages.
		caps["tools"], caps["resources"], caps["prompts"] = map[string]any{}, map[string]any{}, map[string]any{}
	}
	if r.era == Legacy && !r.hint.Simple {
		caps["logging"] = map[string]any{}
	}
	if r.era == Legacy {
		if atLeast(r.version, V20251125) {
			caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
				"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
		}
	} else {
		caps["extensions"] = map[string]any{ExtTasks: map[string]any{}}
	}
	// During the initial load (StartLoading) a module still loading may
	// bring completions: they are declared, and a completion/complete that
	// no loaded module serves answers an empty completion.
	if r.cat.HasCompletions() || r.srv.Loading() {
		caps["completions"] = map[string]any{}
	}
	if r.cat.HasSkills() {
		ext, _ := caps["extensions"].(map[string]any)
		if ext == nil {
			ext = map[string]any{}
			caps["extensions"] = ext
		}
		ext[ExtSkills] = skillsCapability()
	}
	return caps
}

func (r *request) initialize() Response {
	p := &r.p
	switch {
	case p.ProtocolVersion == nil:
		return r.fail(errorf(CodeInvalidParams, "Invalid initialize params: protocolVersion"))
	case len(p.Capabilities) == 0 || p.Capabilities[0] != '{':
		return r.fail(errorf(CodeInvalidParams, "Invalid initialize params: capabilities"))
	case len(p.ClientInfo) == 0 || p.ClientInfo[0] != '{':
		return r.fail(errorf(CodeInvalidParams, "Invalid initialize params: clientInfo"))
	}
	version := *p.ProtocolVersion
	if !IsLegacy(version) {
		version = LegacyVersions()[0]
	}
	caps, err := parseCaps(p.Capabilities)
	if err != nil {
		return r.fail(errorf(CodeInvalidParams, "Invalid initialize params: capabilities"))
	}
	if r.sess != nil {
		r.sess.mu.Lock()
		r.sess.initialized, r.sess.version, r.sess.caps, r.sess.clientInfo = true, version, caps, p.ClientInfo
		r.sess.mu.Unlock()
	}
	r.version = version
	res := map[string]any{
		"protocolVersion": version,
		"capabilities":    r.capabilities(),
		"serverInfo":      sonicRaw(r.srv.serverInfo),
	}
	if in, _ := r.instructions(); in != "" {
		res["instructions"] = in
	}
	b, _ := sonic.Marshal(res)
	return r.ok(b, noCache)
}

// sonicRaw embeds pre-encoded JSON in a value sonic marshals.
type sonicRaw []byte

func (s sonicRaw) MarshalJSON() ([]byte, error) { return s, nil }

func (r *request) discover() Response {
	res := map[string]any{
		"supportedVersions": supportedVersions(),
		"capabilities":      r.capabilities(),
		"resultType":        "complete",
		"ttlMs":             r.srv.opts.CacheTTL.Milliseconds(),
		"cacheScope":        "public",
		"_meta":             map[string]any{MetaServerInfo: sonicRaw(r.srv.serverInfo)},
	}
	if in, hidden := r.instructions(); in != "" {
		res["instructions"] = in
		if _, nobodyMisses := r.nobody().instructions(); hidden || nobodyMisses {
			// Instructions some caller is not given: the caller's own.
			res["cacheScope"] = "private"
		}
	}
	b, _ := sonic.Marshal(res)
	return Response{Body: ResultResponse(r.msg.ID, b), Era: r.era}
}

func (r *request) setLevel() Response {
	if r.p.Level == nil {
		return r.fail(errorf(CodeInvalidParams, "Missing required parameter: level"))
	}
	l, ok := parseLevel(*r.p.Level)
	if !ok {
		return r.fail(errorf(CodeInvalidParams, "Invalid log level: "+*r.p.Level))
	}
	if r.sess != nil {
		r.sess.mu.Lock()
		r.sess.logLevel = l
		r.sess.logSet = true
		r.sess.mu.Unlock()
	}
	return r.empty()
}

func (r *request) subscribe() Response {
	if r.p.URI == "" {
		return r.fail(errorf(CodeInvalidParams, "Missing required parameter: uri"))
	}
	if r.sess != nil {
		// A resource the caller may not use is subscribed to as an
		// unknown one is: accepted, and never notified.
		allowed := r.resourceAllowed(r.p.URI)
		r.sess.mu.Lock()
		if r.msg.Method == "resources/subscribe" {
			if allowed {
				r.sess.subs[r.p.URI] = true
			}
		} else {
			delete(r.sess.subs, r.p.URI)
		}
		r.sess.mu.Unlock()
	}
	return r.empty()
}

// pageKey identifies one encoded list page in a catalog.
type pageKey struct {
	list   string
	shape  toolShape
	era    Era
	cursor string
	grants [32]byte // the digest of the visible items (access.go)
}

// page answers a paginated list: items are sorted by key; the cursor is
// the opaque encoding of the last key of the previous page.
func (r *request) page(list string, n int, key func(int) string, enc func(int) []byte, shape toolShape, item func(int) (Module, string), kind string) Response {
	cursor := ""
	if r.p.Cursor != nil {
		cursor = *r.p.Cursor
	}
	// Items the caller may not see are left out: the page works on the
	// visible subset, and is cached under that subset's digest.
	idx, grants := r.visible(n, item, kind)
	scope := r.listScope(idx != nil, n, item, kind)
	if idx != nil {
		key0, enc0 := key, enc
		key = func(i int) string { return key0(idx[i]) }
		enc = func(i int) []byte { return enc0(idx[i]) }
		n = len(idx)
	}
	pk := pageKey{list: list, shape: shape, era: r.era, cursor: cursor, grants: grants}
	if b, ok := r.cat.pages.Load(pk); ok {
		return Response{Body: ResultResponse(r.msg.ID, b.([]byte)), Era: r.era}
	}
	start := 0
	if cursor != "" {
		after, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return r.fail(errorf(CodeInvalidParams, "Invalid cursor"))
		}
		start = sort.Search(n, func(i int) bool { return key(i) > string(after) })
	}
	end := min(start+r.srv.opts.PageSize, n)
	b := make([]byte, 0, 256)
	b = append(b, `{"`...)
	b = append(b, list...)
	b = append(b, `":[`...)
	for i := start; i < end; i++ {
		if i > start {
			b = append(b, ',')
		}
		b = append(b, enc(i)...)
	}
	b = append(b, ']')
	if end < n {
		b = append(b, `,"nextCursor":"`...)
		b = append(b, base64.RawURLEncoding.EncodeToString([]byte(key(end-1)))...)
		b = append(b, '"')
	}
	b = append(b, '}')
	if r.era == Modern {
		b = r.srv.decorate(b, scope)
	}
	r.cat.pages.Store(pk, b)
	return Response{Body: ResultResponse(r.msg.ID, b), Era: r.era}
}

func (r *request) listTools() Response {
	c := r.cat
	sh := shapeFor(r.version)
	return r.page("tools", len(c.tools),
		func(i int) string { return c.tools[i].tool.Name },
		func(i int) []byte { return c.tools[i].enc[sh] }, sh,
		func(i int) (Module, string) { return c.tools[i].mod, c.tools[i].tool.Name }, ItemTool)
}

func (r *request) listResources() Response {
	c := r.cat
	return r.page("resources", len(c.resources),
		func(i int) string { return c.resources[i].res.URI },
		func(i int) []byte { return c.resources[i].enc }, 0,
		func(i int) (Module, string) { return c.resources[i].mod, c.resources[i].res.URI }, ItemResource)
}

func (r *request) listTemplates() Response {
	c := r.cat
	return r.page("resourceTemplates", len(c.templates),
		func(i int) string { return c.templates[i].tmpl.URITemplate },
		func(i int) []byte { return c.templates[i].enc }, 0,
		func(i int) (Module, string) { return c.templates[i].mod, c.templates[i].tmpl.URITemplate }, ItemResource)
}

func (r *request) listPrompts() Response {
	c := r.cat
	return r.page("prompts", len(c.prompts),
		func(i int) string { return c.prompts[i].prompt.Name },
		func(i int) []byte { return c.prompts[i].enc }, 0,
		func(i int) (Module, string) { return c.prompts[i].mod, c.prompts[i].prompt.Name }, ItemPrompt)
}
