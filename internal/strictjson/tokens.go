// The strict parser's tokens: strings and numbers, under the limits and
// the number policy, for a value or for a tape.

package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// str unquotes a raw string token that jsontext already checked, enforcing
// the string length cap on the unescaped bytes.
func (p *jsonParser) str(raw jsontext.Value, name bool) (string, *Error) {
	inner := raw[1 : len(raw)-1]
	if len(inner) > p.lim.MaxStringLength || bytes.IndexByte(inner, '\\') >= 0 {
		unq, err := jsontext.AppendUnquote(p.unquoted[:0], raw)
		if err != nil {
			return "", p.fail(err)
		}
		p.unquoted = unq
		if len(unq) > p.lim.MaxStringLength {
			return "", p.errorAt(ReasonStringTooLong, p.dec.InputOffset()-int64(len(raw)),
				fmt.Sprintf("string of %d bytes exceeds the limit of %d", len(unq), p.lim.MaxStringLength))
		}
		return p.text.add(unq, p.rest(raw)), nil
	}
	if !name {
		return p.text.add(inner, p.rest(raw)), nil
	}
	if s, ok := p.names[string(inner)]; ok {
		return s, nil
	}
	s := p.text.add(inner, p.rest(raw))
	if p.names == nil {
		p.names = make(map[string]string)
	}
	if len(p.names) < maxInterned {
		p.names[s] = s
	}
	return s, nil
}

// strValue is str for a string value. Equal short strings without escapes
// share one boxed value, which saves the box (one allocation) and the text
// of each repeat; strings are immutable, so the sharing cannot be observed.
func (p *jsonParser) strValue(raw jsontext.Value) (any, *Error) {
	inner := raw[1 : len(raw)-1]
	if len(inner) > min(maxSharedString, p.lim.MaxStringLength) || bytes.IndexByte(inner, '\\') >= 0 {
		return p.str(raw, false)
	}
	if v, ok := p.values[string(inner)]; ok {
		return v, nil
	}
	var v any = p.text.add(inner, p.rest(raw))
	if p.values == nil {
		p.values = make(map[string]any)
	}
	if len(p.values) < maxInterned {
		p.values[v.(string)] = v
	}
	return v, nil
}

// rest is how many bytes of input are left from raw, the token just read,
// on.
func (p *jsonParser) rest(raw jsontext.Value) int64 {
	return p.size - p.dec.InputOffset() + int64(len(raw))
}

// number keeps the token's exact text and enforces the number policy.
// Equal short numbers share one boxed value, as short strings do (see
// strValue).
func (p *jsonParser) number(raw jsontext.Value) (any, *Error) {
	start := p.dec.InputOffset() - int64(len(raw))
	if len(raw) > p.lim.MaxNumberLength {
		return nil, p.errorAt(ReasonNumber, start,
			fmt.Sprintf("number token of %d bytes exceeds the limit of %d", len(raw), p.lim.MaxNumberLength))
	}
	if len(raw) <= maxSharedString {
		if v, ok := p.numbers[string(raw)]; ok {
			return v, nil
		}
	}
	s := p.text.add(raw, p.rest(raw))
	if r := p.checkNumber(s, start); r != nil {
		return nil, r
	}
	var v any = json.Number(s)
	if len(s) <= maxSharedString {
		if p.numbers == nil {
			p.numbers = make(map[string]any)
		}
		if len(p.numbers) < maxInterned {
			p.numbers[s] = v
		}
	}
	return v, nil
}

// tapeNumber is number for a tape: the token's text, checked, written to
// the tape's text.
func (p *jsonParser) tapeNumber(raw jsontext.Value) (span, *Error) {
	start := p.dec.InputOffset() - int64(len(raw))
	if len(raw) > p.lim.MaxNumberLength {
		return span{}, p.errorAt(ReasonNumber, start,
			fmt.Sprintf("number token of %d bytes exceeds the limit of %d", len(raw), p.lim.MaxNumberLength))
	}
	b := p.tape.text
	sp := span{uint32(b.Len()), uint32(len(raw))}
	b.Write(raw)
	// The builder's string shares its bytes: no copy to check the token.
	return sp, p.checkNumber(b.String()[sp.off:], start)
}

// unescape returns the bytes of a raw string token once unescaped (in
// scratch space, or in place when it has no escape), within the string
// length limit: str's rule for a tape.
func (p *jsonParser) unescape(raw jsontext.Value) ([]byte, *Error) {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		unq, err := jsontext.AppendUnquote(p.unquoted[:0], raw)
		if err != nil {
			return nil, p.fail(err)
		}
		p.unquoted, inner = unq, unq
	}
	if len(inner) > p.lim.MaxStringLength {
		return nil, p.errorAt(ReasonStringTooLong, p.dec.InputOffset()-int64(len(raw)),
			fmt.Sprintf("string of %d bytes exceeds the limit of %d", len(inner), p.lim.MaxStringLength))
	}
	return inner, nil
}

// tapeString is str for a string value on a tape: unescaped straight into
// the tape's text, the length cap enforced.
func (p *jsonParser) tapeString(raw jsontext.Value) (span, *Error) {
	inner, r := p.unescape(raw)
	if r != nil {
		return span{}, r
	}
	b := p.tape.text
	sp := span{uint32(b.Len()), uint32(len(inner))}
	b.Write(inner)
	return sp, nil
}

// checkNumber enforces the number policy on a token's text s read at
// start.
func (p *jsonParser) checkNumber(s string, start int64) *Error {
	if msg := numberProblem(s); msg != "" {
		return p.errorAt(ReasonNumber, start, msg)
	}
	return nil
}

// numberProblem is what the number policy finds wrong with a number
// token's text s: "" when nothing.
func numberProblem(s string) string {
	// Without an exponent only a token of over 300 bytes (max_number_length
	// allows 4096) can lie outside binary64's range.
	if strings.IndexAny(s, "eE") >= 0 || len(s) > 300 {
		f, err := strconv.ParseFloat(s, 64)
		cut := strings.IndexAny(s, "eE")
		if cut < 0 {
			cut = len(s)
		}
		mantissa, exponent := s[:cut], strings.TrimLeft(strings.TrimPrefix(s[min(cut+1, len(s)):], "+"), "-0")
		switch {
		case len(exponent) > 4 || len(exponent) == 4 && exponent > "1000":
			// Even a zero mantissa (0e99999999999999999999 parses as 0) must
			// not reach the validator, which expands the exponent.
			return "number exponent beyond ±1000"
		case err != nil:
			return "number overflows IEEE 754 binary64"
		case f == 0 && strings.Trim(mantissa, "-0.") != "":
			return "number underflows IEEE 754 binary64"
		}
	}
	return ""
}
