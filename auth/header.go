package auth

import "strings"

// MaxCredentialBytes bounds the credentials of an Authorization header;
// longer ones are refused before any parsing or hashing.
const MaxCredentialBytes = 16 << 10

// ParseAuthorization splits an Authorization header value into its scheme
// (lower-cased) and credentials (RFC 9110 §11.6.2: a token, one or more
// spaces, then token68 or auth-params). ok is false when the value is
// empty, has no credentials, contains control characters or is longer
// than MaxCredentialBytes.
func ParseAuthorization(v string) (scheme, credentials string, ok bool) {
	if len(v) == 0 || len(v) > MaxCredentialBytes+32 {
		return "", "", false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return "", "", false
		}
	}
	sp := strings.IndexAny(v, " \t")
	if sp <= 0 {
		return "", "", false
	}
	scheme = v[:sp]
	for i := 0; i < len(scheme); i++ {
		if !isTokenChar(scheme[i]) {
			return "", "", false
		}
	}
	credentials = strings.TrimLeft(v[sp:], " \t")
	credentials = strings.TrimRight(credentials, " \t")
	if credentials == "" || len(credentials) > MaxCredentialBytes {
		return "", "", false
	}
	return strings.ToLower(scheme), credentials, true
}

// isToken68 reports whether s is a token68 (RFC 9110): the shape of a
// bearer token.
func isToken68(s string) bool {
	i := 0
	for i < len(s) && token68Chars[s[i]] {
		i++
	}
	if i == 0 {
		return false
	}
	for i < len(s) && s[i] == '=' {
		i++
	}
	return i == len(s)
}

// token68Chars are the bytes of a token68 before its trailing '='s.
var token68Chars = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isAlnum(byte(c)) || strings.IndexByte("-._~+/", byte(c)) >= 0
	}
	return t
}()

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isTokenChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// bearerToken returns the bearer token of r's Authorization header. It
// returns errMissing when there is no Authorization header (or another
// scheme) and an invalid_request error when the header is malformed.
func bearerToken(h string) (string, error) {
	if h == "" {
		return "", errMissing
	}
	scheme, cred, ok := ParseAuthorization(h)
	if !ok {
		return "", &Error{Status: 400, Code: CodeInvalidRequest, Description: "malformed Authorization header"}
	}
	if scheme != "bearer" {
		return "", errMissing
	}
	if !isToken68(cred) {
		return "", &Error{Status: 400, Code: CodeInvalidRequest, Description: "malformed bearer token"}
	}
	return cred, nil
}
