package strictjson

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// AppendCanonical appends the canonical serialisation of a decoded JSON
// value to dst: object members sorted by name in code point (UTF-8 byte)
// order, no insignificant whitespace, strings with the minimal escaping of
// RFC 8785 §3.2.2.2, numbers (json.Number) in their exact original text.
// Values of other Go types are written as null. The gate serialises the
// success envelope's data this way, so goldens and hashes are stable.
func AppendCanonical(dst []byte, v any) []byte {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = AppendCanonical(dst, x[k])
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, el := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendCanonical(dst, el)
		}
		return append(dst, ']')
	case string:
		return appendString(dst, x)
	case json.Number:
		return append(dst, x...)
	case bool:
		return strconv.AppendBool(dst, x)
	}
	return append(dst, "null"...)
}

// appendString quotes s with the minimal escaping. Strings from the parse
// stage are valid UTF-8; invalid UTF-8 from a Go caller comes out with U+FFFD
// replacements (AppendQuote's documented result), never as raw bytes.
func appendString(dst []byte, s string) []byte {
	out, _ := jsontext.AppendQuote(dst, s)
	return out
}
