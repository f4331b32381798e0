package jsonrpc

// CheckKeys walks JSON text b, which a parser has accepted, and returns a
// *DuplicateKeyError for the first object naming a key twice (keys
// compared as decoded, so "a" and "\u0061" are one key), or the error top
// returns for a key of the outermost object; top gets each such key
// decoded. It is the strict reading of a client's message: parsers
// disagree on which of two values one name holds, so a message a gateway
// would read one way must not be served another. One pass, allocating
// only for escaped keys and for objects of more than 32 keys or nested
// more than 32 deep.
func CheckKeys(b []byte, top func(key []byte) error) error {
	var (
		levelBuf [32]int    // for each open object, where its keys start in keys
		keyBuf   [32]keyRef // the keys of the open objects
		stackBuf [32]byte   // open containers: '{' or '['
		levels   = levelBuf[:0]
		keys     = keyBuf[:0]
		stack    = stackBuf[:0]
	)
	expectKey := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			j, escaped := stringEnd(b, i+1)
			if j < 0 {
				return ErrNotJSON
			}
			if expectKey {
				k := keyRef{raw: b[i+1 : j], escaped: escaped}
				keys = append(keys, k)
				if len(stack) == 1 && top != nil {
					name := k.raw
					if escaped {
						name = decodeKey(k.raw)
					}
					if err := top(name); err != nil {
						return err
					}
				}
				expectKey = false
			}
			i = j
		case '{':
			stack = append(stack, '{')
			levels = append(levels, len(keys))
			expectKey = true
		case '[':
			stack = append(stack, '[')
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case '}', ']':
			if len(stack) == 0 {
				return ErrNotJSON
			}
			if c == '}' {
				from := levels[len(levels)-1]
				if k, dup := duplicateKey(keys[from:]); dup {
					return &DuplicateKeyError{Key: k}
				}
				keys = keys[:from]
				levels = levels[:len(levels)-1]
			}
			stack = stack[:len(stack)-1]
			expectKey = false
		}
	}
	return nil
}

// stringEnd returns the index of the quote closing the string whose text
// starts at b[i], -1 for none, and whether the text holds an escape or a
// byte beyond ASCII (it must be compared decoded).
func stringEnd(b []byte, i int) (int, bool) {
	escaped := false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i, escaped
		case c == '\\':
			escaped = true
			i++
		case c >= 0x80:
			escaped = true
		}
	}
	return -1, escaped
}
