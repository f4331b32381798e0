package schema

import (
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MatchTimeout bounds one regular-expression match of a schema's pattern,
// patternProperties or format "regex": a pathological pattern (ECMA-262
// backtracks) fails the match instead of stalling the call.
const MatchTimeout = 100 * time.Millisecond

// ecmaRegexp is a JSON Schema regular expression: ECMA-262 syntax, as JSON
// Schema specifies (lookahead, lookbehind, backreferences…), which Go's
// RE2 does not accept.
type ecmaRegexp struct{ re *regexp2.Regexp }

// compileECMA is the validator's regexp engine.
func compileECMA(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript|regexp2.Unicode)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = MatchTimeout
	return ecmaRegexp{re}, nil
}

func (r ecmaRegexp) String() string { return r.re.String() }

// MatchString reports whether s contains a match; a match that runs out of
// time is no match.
func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return ok && err == nil
}
