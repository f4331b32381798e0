package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/skills"
)

// skillModule is a fakeModule that ships skills.
type skillModule struct {
	fakeModule
	skills []*skills.Skill
}

func (m *skillModule) Skills() []*skills.Skill { return m.skills }

func testSkill(t *testing.T, path, desc string, extra ...skills.Input) *skills.Skill {
	t.Helper()
	name := path[strings.LastIndexByte(path, '/')+1:]
	files := append([]skills.Input{{Path: "SKILL.md", Data: []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\nbody\n")}}, extra...)
	s, err := skills.New(path, files)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func noCall(context.Context, string, []byte, contract.Peer) (*contract.Reply, error) {
	return nil, fmt.Errorf("a skill needs no guest call")
}

// newSkillServer serves the operator's skills a-skill and shared
// (from "the directory"), and a module shipping shared (dropped: the
// operator keeps it), pdf (with files) and clash (dropped: one of its files
// is a resource the module declares).
func newSkillServer(t *testing.T, pageSize int) (*Server, []Conflict) {
	t.Helper()
	mod := &skillModule{fakeModule: fakeModule{name: "mod", call: noCall, desc: &abi.Description{ABIVersion: 1,
		Resources: []abi.Resource{{URI: "skill://clash/SKILL.md", Name: "clash"}}}},
		skills: []*skills.Skill{
			testSkill(t, "shared", "from the module"),
			testSkill(t, "pdf", "PDF forms",
				skills.Input{Path: "references/FORMS.md", Data: []byte("# Forms\n")},
				skills.Input{Path: "references/deep/x.txt", Data: []byte("x")},
				skills.Input{Path: "logo.png", Data: []byte{0x89, 'P', 'N', 'G', 0xff}}),
			testSkill(t, "clash", "clashes"),
		}}
	s := NewServer(Options{Name: "test", Version: "1.0", PageSize: pageSize})
	cat, conflicts := NewCatalogWithSkills([]Module{mod},
		[]*skills.Skill{testSkill(t, "group/a-skill", "grouped"), testSkill(t, "shared", "from the directory")}, nil)
	s.SetCatalog(cat)
	return s, conflicts
}

const skillMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func skillResult(t *testing.T, r Response, v any) {
	t.Helper()
	var env struct {
		Result json.RawMessage
		Error  *Error
	}
	if err := json.Unmarshal(r.Body, &env); err != nil || env.Error != nil {
		t.Fatalf("response %s: %v", r.Body, err)
	}
	if err := json.Unmarshal(env.Result, v); err != nil {
		t.Fatalf("result %s: %v", env.Result, err)
	}
}

func TestSkillsCatalogConflicts(t *testing.T) {
	s, conflicts := newSkillServer(t, 50)
	var got []string
	for _, c := range conflicts {
		got = append(got, c.Kind+" "+c.Name+" kept by "+c.Kept)
	}
	want := "skill skill://shared/SKILL.md kept by skills directory,skill skill://clash/SKILL.md kept by mod"
	if strings.Join(got, ",") != want {
		t.Fatalf("conflicts %q", got)
	}
	var uris []string
	for _, sk := range s.Catalog().Skills() {
		uris = append(uris, sk.URI()+"="+sk.Description)
	}
	if strings.Join(uris, " ") != "skill://group/a-skill/SKILL.md=grouped skill://pdf/SKILL.md=PDF forms skill://shared/SKILL.md=from the directory" {
		t.Fatalf("skills %v", uris)
	}
}

func TestSkillsListPaginatedBothEras(t *testing.T) {
	s, _ := newSkillServer(t, 2)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			var sess *Session
			meta := ""
			if era == "legacy" {
				sess = initialized(t, s, "2025-11-25")
			} else {
				meta = skillMeta
			}
			var all []string
			cursor := ""
			for page := 0; ; page++ {
				params := meta
				if cursor != "" {
					if params != "" {
						params += ","
					}
					params += `"cursor":"` + cursor + `"`
				}
				var res struct {
					Skills []struct {
						URI         string
						Frontmatter map[string]any
						Resources   []struct {
							URI, Digest string
							Size        *int
						}
					}
					NextCursor string
					TTLMs      *int64 `json:"ttlMs"`
					CacheScope string
				}
				skillResult(t, handle(t, s, sess, `{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{`+params+`}}`, nil), &res)
				if (era == "modern") != (res.TTLMs != nil && res.CacheScope == "public") {
					t.Fatalf("page %d: ttlMs %v cacheScope %q in the %s era", page, res.TTLMs, res.CacheScope, era)
				}
				for _, e := range res.Skills {
					all = append(all, e.URI)
					if e.Frontmatter["name"] == nil || len(e.Resources) == 0 || e.Resources[0].Size == nil ||
						!strings.HasPrefix(e.Resources[0].Digest, "sha256:") {
						t.Fatalf("entry %+v", e)
					}
				}
				if res.NextCursor == "" {
					break
				}
				cursor = res.NextCursor
			}
			if strings.Join(all, " ") != "skill://group/a-skill/SKILL.md skill://pdf/SKILL.md skill://shared/SKILL.md" {
				t.Fatalf("listed %v", all)
			}
		})
	}
}

func TestSkillsGet(t *testing.T) {
	s, _ := newSkillServer(t, 50)
	var res struct {
		Skill struct {
			URI       string
			Resources []struct{ URI string }
		}
		NextCursor *string
		TTLMs      *int64 `json:"ttlMs"`
		CacheScope string
	}
	skillResult(t, handle(t, s, nil, `{"jsonrpc":"2.0","id":2,"method":"skills/get","params":{"uri":"skill://pdf/SKILL.md",`+skillMeta+`}}`, nil), &res)
	if res.Skill.URI != "skill://pdf/SKILL.md" || len(res.Skill.Resources) != 4 || res.NextCursor != nil || res.TTLMs == nil || res.CacheScope != "public" {
		t.Fatalf("skills/get %+v", res)
	}
	sess := initialized(t, s, "2025-11-25")
	for _, uri := range []string{"skill://nope/SKILL.md", "skill://pdf/references/FORMS.md", "skill://pdf", ""} {
		r := handle(t, s, sess, `{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"`+uri+`"}}`, nil)
		if r.Code != CodeInvalidParams {
			t.Fatalf("skills/get %q: %s", uri, r.Body)
		}
	}
}

func TestSkillsResources(t *testing.T) {
	s, _ := newSkillServer(t, 50)
	sess := initialized(t, s, "2025-11-25")
	var list struct {
		Resources []abi.Resource
	}
	skillResult(t, handle(t, s, sess, `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`, nil), &list)
	found := false
	for _, r := range list.Resources {
		if r.URI == "skill://pdf/SKILL.md" {
			found = r.Name == "pdf" && r.Description == "PDF forms" && r.MimeType == "text/markdown" && r.Size > 0
		}
		if strings.Contains(r.URI, "FORMS") {
			t.Fatalf("a supporting file is listed: %+v", r)
		}
	}
	if !found {
		t.Fatalf("SKILL.md not listed as its frontmatter says: %+v", list.Resources)
	}
	type contents struct {
		Contents []struct{ URI, MimeType, Text, Blob string }
	}
	var c contents
	// Any spelling of the URI reads the file.
	skillResult(t, handle(t, s, sess, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"skill://pdf/references/%46ORMS.md"}}`, nil), &c)
	if len(c.Contents) != 1 || c.Contents[0].Text != "# Forms\n" || c.Contents[0].MimeType != "text/markdown" || c.Contents[0].URI != "skill://pdf/references/FORMS.md" {
		t.Fatalf("read %+v", c)
	}
	c = contents{}
	skillResult(t, handle(t, s, sess, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"skill://pdf/logo.png"}}`, nil), &c)
	if c.Contents[0].Blob != "iVBOR/8=" || c.Contents[0].Text != "" || c.Contents[0].MimeType != "image/png" {
		t.Fatalf("read binary %+v", c)
	}
	// The module keeps its own resource of the clashing URI.
	r := handle(t, s, sess, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"skill://clash/SKILL.md"}}`, nil)
	if !strings.Contains(string(r.Body), "a skill needs no guest call") {
		t.Fatalf("clash read %s", r.Body)
	}
	r = handle(t, s, sess, `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"skill://pdf/../etc/passwd"}}`, nil)
	if r.Code != CodeResourceNotFound {
		t.Fatalf("read outside %s", r.Body)
	}
	// Modern: cacheable.
	var m struct {
		TTLMs *int64 `json:"ttlMs"`
	}
	skillResult(t, handle(t, s, nil, `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"skill://pdf/SKILL.md",`+skillMeta+`}}`, nil), &m)
	if m.TTLMs == nil {
		t.Fatal("modern read of a skill file has no ttlMs")
	}
}

func TestSkillsDirectoryRead(t *testing.T) {
	s, _ := newSkillServer(t, 2)
	sess := initialized(t, s, "2025-11-25")
	read := func(uri string) (children []string) {
		t.Helper()
		cursor := ""
		for {
			params := `"uri":"` + uri + `"`
			if cursor != "" {
				params += `,"cursor":"` + cursor + `"`
			}
			var res struct {
				Resources  []abi.Resource
				NextCursor string
			}
			skillResult(t, handle(t, s, sess, `{"jsonrpc":"2.0","id":2,"method":"resources/directory/read","params":{`+params+`}}`, nil), &res)
			for _, r := range res.Resources {
				children = append(children, r.Name+"="+r.URI+"="+r.MimeType)
			}
			if res.NextCursor == "" {
				return children
			}
			cursor = res.NextCursor
		}
	}
	got := strings.Join(read("skill://pdf"), " ")
	want := "SKILL.md=skill://pdf/SKILL.md=text/markdown logo.png=skill://pdf/logo.png=image/png references=skill://pdf/references=inode/directory"
	if got != want {
		t.Fatalf("root:\n got %s\nwant %s", got, want)
	}
	got = strings.Join(read("skill://pdf/references/"), " ")
	want = "FORMS.md=skill://pdf/references/FORMS.md=text/markdown deep=skill://pdf/references/deep=inode/directory"
	if got != want {
		t.Fatalf("references:\n got %s\nwant %s", got, want)
	}
	for _, uri := range []string{"skill://pdf/SKILL.md", "skill://nope", "skill://group", "fake://r", ""} {
		r := handle(t, s, sess, `{"jsonrpc":"2.0","id":3,"method":"resources/directory/read","params":{"uri":"`+uri+`"}}`, nil)
		if r.Code != CodeInvalidParams {
			t.Fatalf("directory read %q: %s", uri, r.Body)
		}
	}
}

func TestSkillsCapability(t *testing.T) {
	s, _ := newSkillServer(t, 50)
	r := handle(t, s, NewSession(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
	if !strings.Contains(string(r.Body), `"extensions":{"io.modelcontextprotocol/skills":{"directoryRead":true}}`) {
		t.Fatalf("initialize %s", r.Body)
	}
	r = handle(t, s, nil, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+skillMeta+`}}`, nil)
	var d struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage
			Resources  json.RawMessage
		}
	}
	skillResult(t, r, &d)
	if string(d.Capabilities.Extensions[ExtSkills]) != `{"directoryRead":true}` || d.Capabilities.Extensions[ExtTasks] == nil || d.Capabilities.Resources == nil {
		t.Fatalf("discover %s", r.Body)
	}
	// No skills, no extension.
	plain := newTestServer(t, 0)
	r = handle(t, plain, nil, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+skillMeta+`}}`, nil)
	if strings.Contains(string(r.Body), ExtSkills) {
		t.Fatalf("a server without skills declares the extension: %s", r.Body)
	}
}

func TestSkillFileUpdateNotifies(t *testing.T) {
	s, _ := newSkillServer(t, 50)
	var got []string
	s.AddListener(&Listener{URIs: map[string]bool{"skill://group/a-skill/SKILL.md": true, "skill://shared/SKILL.md": true},
		Send: func(msg []byte) { got = append(got, string(msg)) }})
	cat, _ := NewCatalogWithSkills(nil, []*skills.Skill{testSkill(t, "group/a-skill", "edited"), testSkill(t, "shared", "from the directory")}, nil)
	s.SetCatalog(cat)
	n := 0
	for _, m := range got {
		if strings.Contains(m, "notifications/resources/updated") {
			n++
			if !strings.Contains(m, `"uri":"skill://group/a-skill/SKILL.md"`) {
				t.Errorf("update of an unchanged file: %s", m)
			}
		}
	}
	if n != 1 {
		t.Fatalf("notifications %q, want one update of the edited SKILL.md", got)
	}
}

// TestSkillsFollowGrant: a module's skills follow its grant on every
// surface — skills/list, skills/get, resources/list, resources/read of any
// of its files, resources/directory/read of any of its directories,
// resources/subscribe — and a denied one answers as an unknown one does;
// the operator's skills stay open (issue 25 item 5).
func TestSkillsFollowGrant(t *testing.T) {
	s, _ := newSkillServer(t, 2)
	s.opts.Access = func(ctx context.Context, principal string, mod Module, kind, name string) bool {
		if mod == nil {
			t.Fatalf("asked about %s %s of no module", kind, name)
		}
		return principal == "alice"
	}
	alice, bob := Hint{Principal: "alice"}, Hint{Principal: "bob"}
	sess := initialized(t, s, "2025-11-25")
	for round := 0; round < 2; round++ { // the second from the page caches
		skillsOf := func(h Hint) string {
			return strings.Join(listAll(t, s, sess, "skills/list", "skills", "uri", h), " ")
		}
		if got, want := skillsOf(bob), "skill://group/a-skill/SKILL.md skill://shared/SKILL.md"; got != want {
			t.Fatalf("bob's skills/list: %s, want %s", got, want)
		}
		if got := skillsOf(alice); !strings.Contains(got, "skill://pdf/SKILL.md") {
			t.Fatalf("alice's skills/list: %s", got)
		}
		res := strings.Join(listAll(t, s, sess, "resources/list", "resources", "uri", bob), " ")
		if strings.Contains(res, "skill://pdf") || !strings.Contains(res, "skill://shared/SKILL.md") {
			t.Fatalf("bob's resources/list: %s", res)
		}
		if res := strings.Join(listAll(t, s, sess, "resources/list", "resources", "uri", alice), " "); !strings.Contains(res, "skill://pdf/SKILL.md") {
			t.Fatalf("alice's resources/list: %s", res)
		}
	}
	call := func(h Hint, body string) string { return string(handleHint(t, s, sess, body, nil, h).Body) }
	same := func(what, denied, unknown, from, to string) {
		t.Helper()
		d := call(bob, denied)
		u := call(bob, unknown)
		if strings.ReplaceAll(d, from, to) != u {
			t.Fatalf("%s: denied %s; unknown %s", what, d, u)
		}
		if a := call(alice, denied); a == strings.ReplaceAll(u, to, from) {
			t.Fatalf("%s: alice is refused too: %s", what, a)
		}
	}
	same("skills/get", `{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"skill://pdf/SKILL.md"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"skill://zzz/SKILL.md"}}`, "pdf", "zzz")
	for _, f := range []string{"skill://pdf/SKILL.md", "skill://pdf/references/FORMS.md", "skill://pdf/references/%46ORMS.md", "skill://pdf/logo.png"} {
		same("read "+f, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"`+f+`"}}`,
			`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"`+strings.Replace(f, "pdf", "zzz", 1)+`"}}`, "pdf", "zzz")
	}
	for _, d := range []string{"skill://pdf", "skill://pdf/", "skill://pdf/references", "skill://pdf/references/deep"} {
		same("directory "+d, `{"jsonrpc":"2.0","id":5,"method":"resources/directory/read","params":{"uri":"`+d+`"}}`,
			`{"jsonrpc":"2.0","id":5,"method":"resources/directory/read","params":{"uri":"`+strings.Replace(d, "pdf", "zzz", 1)+`"}}`, "pdf", "zzz")
	}
	// The operator's skills are everyone's.
	if got := call(bob, `{"jsonrpc":"2.0","id":6,"method":"resources/directory/read","params":{"uri":"skill://shared"}}`); !strings.Contains(got, "skill://shared/SKILL.md") {
		t.Fatalf("bob's read of the operator's directory: %s", got)
	}
	if got := call(bob, `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"skill://shared/SKILL.md"}}`); !strings.Contains(got, "from the directory") {
		t.Fatalf("bob's read of the operator's skill: %s", got)
	}
	// A subscription to a hidden skill file is accepted and never kept.
	bs := initialized(t, s, "2025-11-25")
	handleHint(t, s, bs, `{"jsonrpc":"2.0","id":8,"method":"resources/subscribe","params":{"uri":"skill://pdf/SKILL.md"}}`, nil, bob)
	if bs.Subscribed("skill://pdf/SKILL.md") {
		t.Fatal("bob is subscribed to a skill file he may not read")
	}
}
