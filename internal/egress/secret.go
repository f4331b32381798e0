package egress

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
)

// secretForms returns the strings a response may repeat a secret header
// value in, longest first: the value itself; its credential (what follows
// the scheme, "Bearer " or "Basic " …); for Basic, the decoded user:password
// and the password; and each of those URL-encoded (query and path
// escaping, upper- and lower-case hex), base64-encoded (standard and URL
// alphabets, padded and raw), JSON-escaped as common encoders write it
// (jsonForms) and HTML-escaped (htmlForms). Redacting them is best
// effort: a server that transforms the value any other way (hashes it,
// splits it, encodes it inside a longer string) defeats it.
func secretForms(v string) []string {
	base := []string{v}
	if scheme, cred, ok := strings.Cut(v, " "); ok && validToken(scheme) {
		cred = strings.TrimSpace(cred)
		if cred != "" {
			base = append(base, cred)
		}
		if strings.EqualFold(scheme, "basic") {
			if dec, err := base64.StdEncoding.DecodeString(cred); err == nil && len(dec) > 0 {
				base = append(base, string(dec))
				if _, pass, ok := strings.Cut(string(dec), ":"); ok && pass != "" {
					base = append(base, pass)
				}
			}
		}
	}
	var forms []string
	add := func(s string) {
		if s != "" && !slices.Contains(forms, s) {
			forms = append(forms, s)
		}
	}
	for _, f := range base {
		add(f)
		for _, esc := range []string{url.QueryEscape(f), url.PathEscape(f)} {
			add(esc)
			add(lowerHex(esc))
		}
		b := []byte(f)
		add(base64.StdEncoding.EncodeToString(b))
		add(base64.RawStdEncoding.EncodeToString(b))
		add(base64.URLEncoding.EncodeToString(b))
		add(base64.RawURLEncoding.EncodeToString(b))
		for _, js := range jsonForms(f) {
			add(js)
		}
		for _, h := range htmlForms(f) {
			add(h)
		}
	}
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	return forms
}

// jsonForms returns f as the JSON string encoders of common servers
// write it (without the quotes): '"' and '\\' escaped, and then every
// choice of escaping "/" as "\\/" (PHP), < > & (Go, PHP's JSON_HEX_*) or
// + < > & ' (.NET), non-ASCII characters (Python's ensure_ascii), with
// lower- or upper-case hex.
func jsonForms(f string) []string {
	var out []string
	for _, extra := range []string{"", "<>&", "+<>&'"} {
		for _, slash := range []bool{false, true} {
			for _, ascii := range []bool{false, true} {
				for _, hex := range []string{`\u%04x`, `\u%04X`} {
					var b strings.Builder
					for _, r := range f {
						switch {
						case r == '"' || r == '\\':
							b.WriteByte('\\')
							b.WriteRune(r)
						case r == '/' && slash:
							b.WriteString(`\/`)
						case r < 0x20 || strings.ContainsRune(extra, r) || ascii && r > 0x7e && r < 0x10000:
							fmt.Fprintf(&b, hex, r)
						case ascii && r >= 0x10000:
							r1, r2 := utf16.EncodeRune(r)
							fmt.Fprintf(&b, hex+hex, r1, r2)
						default:
							b.WriteRune(r)
						}
					}
					if s := b.String(); !slices.Contains(out, s) {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// htmlForms returns f HTML-escaped as common escapers write it: & < >
// always, the quotes as numeric or named references or left alone.
func htmlForms(f string) []string {
	if !strings.ContainsAny(f, `&<>"'`) {
		return nil
	}
	var out []string
	for _, quot := range []string{"&#34;", "&quot;", "&#x22;", `"`} {
		for _, apos := range []string{"&#39;", "&#x27;", "&apos;", "'"} {
			s := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, quot, "'", apos).Replace(f)
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// lowerHex lower-cases the hex digits of every %XX escape in s.
func lowerHex(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if b[j] >= 'A' && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
		}
	}
	return string(b)
}

// redactString replaces every form in s with Redacted.
func redactString(s string, forms []string) string {
	for _, f := range forms {
		if strings.Contains(s, f) {
			s = strings.ReplaceAll(s, f, Redacted)
		}
	}
	return s
}

// secretSet is the forms of some secrets, longest first, as strings and
// as bytes.
type secretSet struct {
	str []string
	raw [][]byte
}

func newSecretSet(forms []string) *secretSet {
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	set := &secretSet{str: forms, raw: make([][]byte, len(forms))}
	for i, f := range forms {
		set.raw[i] = []byte(f)
	}
	return set
}

// redactBytes replaces every form of set in b with Redacted.
func redactBytes(b []byte, set *secretSet) []byte {
	for _, f := range set.raw {
		if bytes.Contains(b, f) {
			b = bytes.ReplaceAll(b, f, redactedBytes)
		}
	}
	return b
}

var redactedBytes = []byte(Redacted)

// maxEncodings caps the content codings one response may stack.
const maxEncodings = 3

// errTooLarge is a decoded body past its cap.
var errTooLarge = errors.New("decoded body too large")

// errCoding is a content coding the host cannot decode.
var errCoding = errors.New("unknown content coding")

// contentCodings parses Content-Encoding values into the codings to undo,
// in the order they were applied; identity is dropped.
func contentCodings(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, c := range strings.Split(v, ",") {
			c = strings.ToLower(strings.TrimSpace(c))
			if c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	return out
}

// decodeBody undoes the content codings of a body (gzip, x-gzip, deflate),
// producing at most limit+1 bytes: a longer result is errTooLarge, so a
// compression bomb stops at the cap. Another coding is errCoding.
func decodeBody(raw []byte, codings []string, limit int64) ([]byte, error) {
	if len(codings) > maxEncodings {
		return nil, errCoding
	}
	data := raw
	for i := len(codings) - 1; i >= 0; i-- {
		var r io.ReadCloser
		var err error
		switch codings[i] {
		case "gzip", "x-gzip":
			r, err = gzip.NewReader(bytes.NewReader(data))
		case "deflate":
			// RFC 9110 deflate is zlib; some servers send raw deflate.
			if r, err = zlib.NewReader(bytes.NewReader(data)); err != nil {
				r, err = flate.NewReader(bytes.NewReader(data)), nil
			}
		default:
			return nil, errCoding
		}
		if err != nil {
			return nil, err
		}
		out, err := io.ReadAll(io.LimitReader(r, limit+1))
		r.Close()
		if int64(len(out)) > limit {
			return nil, errTooLarge
		}
		if err != nil {
			return nil, err
		}
		data = out
	}
	return data, nil
}
