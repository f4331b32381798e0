// Command ghissues is a wasmcp tool module that lists a GitHub repository's
// issues through the GitHub REST API, authenticated with a token the guest
// never sees: ghissues.policy.toml has the host add the Authorization
// header (from the host's GITHUB_TOKEN) to requests for api.github.com, and
// only to those.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
	"github.com/wasmcp/wasmcp/guest-sdk/go/guesthttp"
	"github.com/wasmcp/wasmcp/guest-sdk/go/reactor"
)

// In is the tool's input.
type In struct {
	Repo  string `json:"repo" jsonschema:"description=owner/name of the repository"`
	State string `json:"state,omitempty" jsonschema:"enum=open|closed|all,default=open"`
	Limit int    `json:"limit,omitempty" jsonschema:"description=At most this many issues (1-100; default 20)"`
}

// Issue is one issue of the answer.
type Issue struct {
	Number int      `json:"number"`
	Title  string   `json:"title"`
	State  string   `json:"state"`
	Author string   `json:"author"`
	Labels []string `json:"labels"`
	URL    string   `json:"url"`
}

// Out is the tool's structured output.
type Out struct {
	Repo   string  `json:"repo"`
	Issues []Issue `json:"issues"`
}

// API is where requests go; tests point it at a local server.
const API = "https://api.github.com"

var repoName = regexp.MustCompile(`^[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}$`)

// init registers the tools and hands the server to package reactor: built
// with -buildmode=c-shared (go run ./examples/wasm/build does), the module
// is a reactor the host runs from a snapshot of this start-up, as
// docs/writing-tools.md tells a tool author to build a Go tool.
func init() {
	s := guest.New("ghissues", "1.0.0")
	guest.AddTool(s, guest.Tool{
		Name:        "github_issues",
		Description: "Lists the issues (not pull requests) of a GitHub repository: number, title, state, author, labels, URL.",
		Annotations: &guest.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(true)},
	}, func(c *guest.Context, in In) (Out, error) {
		return List(guesthttp.Client(c), API, in)
	})
	reactor.Serve(s)
}

// main does not run in a reactor.
func main() {}

func ptr[T any](v T) *T { return &v }

// List asks the API for a repository's issues.
func List(client *http.Client, api string, in In) (Out, error) {
	if !repoName.MatchString(in.Repo) || strings.Contains(in.Repo, "..") {
		return Out{}, fmt.Errorf("repo %q: want owner/name", in.Repo)
	}
	state := in.State
	if state == "" {
		state = "open"
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	if limit > 100 {
		return Out{}, errors.New("limit: at most 100")
	}
	q := url.Values{"state": {state}, "per_page": {strconv.Itoa(limit)}}
	req, err := http.NewRequest(http.MethodGet, api+"/repos/"+in.Repo+"/issues?"+q.Encode(), nil)
	if err != nil {
		return Out{}, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := client.Do(req)
	var he *guest.HTTPError
	if errors.As(err, &he) {
		return Out{}, fmt.Errorf("GitHub could not be reached (%s): %s", he.Reason, he.Message)
	}
	if err != nil {
		return Out{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Out{}, err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &e)
		return Out{}, fmt.Errorf("GitHub answered %s: %s", resp.Status, e.Message)
	}
	var raw []struct {
		Number      int                     `json:"number"`
		Title       string                  `json:"title"`
		State       string                  `json:"state"`
		HTMLURL     string                  `json:"html_url"`
		User        struct{ Login string }  `json:"user"`
		Labels      []struct{ Name string } `json:"labels"`
		PullRequest *json.RawMessage        `json:"pull_request"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Out{}, fmt.Errorf("GitHub's answer is not a list of issues: %v", err)
	}
	out := Out{Repo: in.Repo, Issues: []Issue{}}
	for _, r := range raw {
		if r.PullRequest != nil {
			continue
		}
		is := Issue{Number: r.Number, Title: r.Title, State: r.State, Author: r.User.Login, URL: r.HTMLURL, Labels: []string{}}
		for _, l := range r.Labels {
			is.Labels = append(is.Labels, l.Name)
		}
		out.Issues = append(out.Issues, is)
	}
	return out, nil
}
