package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/repos/o/r/issues" || r.URL.Query().Get("state") != "all" || r.URL.Query().Get("per_page") != "2" {
			http.Error(w, `{"message":"Not Found"}`, 404)
			return
		}
		w.Write([]byte(`[{"number":1,"title":"bug","state":"open","html_url":"https://github.com/o/r/issues/1","user":{"login":"ada"},"labels":[{"name":"p1"}]},
			{"number":2,"title":"a PR","state":"open","pull_request":{}}]`))
	}))
	defer srv.Close()
	out, err := List(srv.Client(), srv.URL, In{Repo: "o/r", State: "all", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Issues) != 1 || out.Issues[0].Author != "ada" || out.Issues[0].Labels[0] != "p1" {
		t.Fatalf("%+v", out)
	}
	if _, err := List(srv.Client(), srv.URL, In{Repo: "o/missing"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("404: %v", err)
	}
	for _, bad := range []string{"o", "o/r/../x", "../x", "o/r?x=1", "o/r/issues"} {
		if _, err := List(srv.Client(), srv.URL, In{Repo: bad}); err == nil {
			t.Errorf("repo %q accepted", bad)
		}
	}
}
