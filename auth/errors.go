package auth

import (
	"errors"
	"net/http"
)

// The error codes of RFC 6750 §3.1.
const (
	CodeInvalidRequest    = "invalid_request"
	CodeInvalidToken      = "invalid_token"
	CodeInsufficientScope = "insufficient_scope"
)

// Error is a refused authentication or authorization. Its Description is
// safe to show to the client: it never holds a credential.
type Error struct {
	// Status is the HTTP status: 400, 401, 403, or 502/503 when an
	// upstream (JWKS, forward-auth endpoint) could not be asked.
	Status int
	// Code is the RFC 6750 error code, "" when the request carried no
	// credentials at all.
	Code string
	// Description says what was wrong.
	Description string
	// Scope lists the scopes the request needs (for insufficient_scope).
	Scope []string
	// cause is the underlying error, logged, never sent.
	cause error
	// dpop makes the challenge a DPoP one (RFC 9449 §7.1): the request
	// used the DPoP scheme, or needs to.
	dpop bool
}

func (e *Error) Error() string {
	msg := e.Description
	if e.Code != "" {
		msg = e.Code + ": " + msg
	}
	if e.cause != nil {
		msg += ": " + e.cause.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.cause }

// errMissing is "no credentials": 401 without an error code (RFC 6750 §3.1).
var errMissing = &Error{Status: http.StatusUnauthorized, Description: "authentication required"}

// invalid returns a 401 invalid_token error.
func invalid(desc string, cause error) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeInvalidToken, Description: desc, cause: cause}
}

// asError converts any error to an *Error (a 401 invalid_token when it is
// not one).
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return invalid("invalid credentials", err)
}
