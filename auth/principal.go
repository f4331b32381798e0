package auth

import (
	"context"
	"net/http"
	"os/user"
	"slices"
)

// Principal is an authenticated caller.
type Principal struct {
	// Name identifies the caller: a token's subject (or client_id), an API
	// key's or user's name, what a forward-auth endpoint answered.
	Name string
	// Scopes are the scopes the caller holds.
	Scopes []string
	// jkt is the thumbprint of the DPoP key the caller's token is bound
	// to (cnf.jkt), "" for an unbound token.
	jkt string
	// otherCnf is set when the token is bound (cnf) to something other
	// than a DPoP key, which this server cannot check.
	otherCnf bool
}

// missing returns the scopes of want p does not hold.
func (p *Principal) missing(want []string) []string {
	var out []string
	for _, s := range want {
		if !slices.Contains(p.Scopes, s) {
			out = append(out, s)
		}
	}
	return out
}

type ctxKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal a Guard put in ctx, nil when none.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}

// PrincipalName returns the name of the principal of r ("" when the
// request was not authenticated); it fits mcphttp.Options.Principal.
func PrincipalName(r *http.Request) string {
	if p := FromContext(r.Context()); p != nil {
		return p.Name
	}
	return ""
}

// LocalUser is the principal of a stdio client: the operating system user
// running the server ("local" when it cannot be known).
func LocalUser() *Principal {
	u, err := user.Current()
	if err != nil || u.Username == "" {
		return &Principal{Name: "local"}
	}
	return &Principal{Name: u.Username}
}
