package validator

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"

	"github.com/airlockdev/airlock/internal/strictjson"
)

// dec is an exact decimal read from a JSON number's text (RFC 8259 §6)
// without allocating: the value is ±0.d₁d₂…dₙ × 10^point, where d₁…dₙ are
// the significant digits of s (leading and trailing zeros dropped, the
// decimal point skipped). n = 0 is zero, whatever its sign.
type dec struct {
	s     string // the number's text
	neg   bool
	first int // index in s of d₁
	last  int // index in s just after dₙ (may include a '.' between)
	n     int // count of significant digits
	point int // see above
}

// maxExp bounds the exponents dec keeps exactly: strictjson refuses
// exponents beyond ±1000 (parse.number), so only values from other callers
// can pass it, and they are clamped to ±∞-like magnitudes that compare the
// same way against any bound a schema can hold (a bound is clamped alike).
const maxExp = 1 << 20

// parseDec reads a JSON number's text; ok is false when s is not one.
func parseDec(s string) (d dec, ok bool) {
	d.s = s
	i := 0
	if i < len(s) && s[i] == '-' {
		d.neg = true
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intEnd := i
	if intEnd == intStart {
		return d, false
	}
	fracStart, fracEnd := i, i
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		fracEnd = i
		if fracEnd == fracStart {
			return d, false
		}
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return d, false
		}
		for ; i < len(s); i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return d, false
			}
			if exp < maxExp {
				exp = exp*10 + int(c-'0')
			}
		}
		if exp > maxExp {
			exp = maxExp
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	// The digit sequence is s[intStart:intEnd] ++ s[fracStart:fracEnd].
	first := -1
	for j := intStart; j < intEnd; j++ {
		if s[j] != '0' {
			first = j
			break
		}
	}
	if first < 0 {
		for j := fracStart; j < fracEnd; j++ {
			if s[j] != '0' {
				first = j
				break
			}
		}
	}
	if first < 0 {
		return dec{s: s, neg: d.neg}, true // zero
	}
	last := -1
	for j := fracEnd - 1; j >= fracStart; j-- {
		if s[j] != '0' {
			last = j + 1
			break
		}
	}
	if last < 0 {
		for j := intEnd - 1; j >= intStart; j-- {
			if s[j] != '0' {
				last = j + 1
				break
			}
		}
	}
	d.first, d.last = first, last
	// Digits before the decimal point, counted from d₁.
	if first < intEnd {
		d.point = intEnd - first
	} else {
		d.point = -(first - fracStart)
	}
	d.point += exp
	n := last - first
	if first < intEnd && last > intEnd && fracStart > intEnd {
		n-- // the '.' between
	}
	d.n = n
	return d, true
}

// digit returns dᵢ (1-based), 0 past dₙ.
func (d *dec) digit(i int) byte {
	if i > d.n {
		return 0
	}
	j := d.first + i - 1
	if j >= d.last {
		return 0
	}
	// Skip the decimal point when the digits span it.
	if dot := strings.IndexByte(d.s[d.first:d.last], '.'); dot >= 0 && i-1 >= dot {
		j++
	}
	return d.s[j] - '0'
}

// isZero reports whether d is 0.
func (d *dec) isZero() bool { return d.n == 0 }

// isInt reports whether d has no fractional part (JSON Schema 2020-12
// §6.1.1: 1.0 is an integer).
func (d *dec) isInt() bool { return d.n == 0 || d.point >= d.n }

// cmpDec compares a and b: -1, 0 or +1.
func cmpDec(a, b *dec) int {
	switch {
	case a.isZero() && b.isZero():
		return 0
	case a.isZero():
		if b.neg {
			return 1
		}
		return -1
	case b.isZero():
		if a.neg {
			return -1
		}
		return 1
	case a.neg != b.neg:
		if a.neg {
			return -1
		}
		return 1
	}
	c := cmpAbs(a, b)
	if a.neg {
		return -c
	}
	return c
}

// cmpAbs compares |a| and |b|, both nonzero.
func cmpAbs(a, b *dec) int {
	if a.point != b.point {
		if a.point < b.point {
			return -1
		}
		return 1
	}
	// Same magnitude: compare digits. Fast path when neither spans a '.'.
	as, bs := a.s[a.first:a.last], b.s[b.first:b.last]
	if strings.IndexByte(as, '.') < 0 && strings.IndexByte(bs, '.') < 0 {
		return strings.Compare(as, bs) // equal lengths compare digit-wise; a prefix is smaller
	}
	for i := 1; i <= max(a.n, b.n); i++ {
		x, y := a.digit(i), b.digit(i)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// numberText returns the JSON text of a number value of a schema (const,
// enum) and whether it is one: json.Number as it is, Go's numeric types
// as strictjson writes them (strictjson.NumberText).
func numberText(v any) (string, bool) {
	if n, ok := v.(json.Number); ok {
		return string(n), true
	}
	return strictjson.NumberText(v)
}

// bound is a numeric keyword's value (minimum, maximum, exclusive*), kept
// as an exact decimal and as the big.Rat v6 compiled, for messages.
type bound struct {
	d   dec
	rat *big.Rat
}

// newBound converts a compiled bound to a decimal. ok is false when the
// rational has no finite decimal expansion within maxBoundDigits, which a
// bound read from JSON text always has.
func newBound(r *big.Rat) (*bound, bool) {
	if r == nil {
		return nil, true
	}
	s, ok := ratDecimal(r)
	if !ok {
		return nil, false
	}
	d, ok := parseDec(s)
	if !ok {
		return nil, false
	}
	return &bound{d: d, rat: r}, true
}

// maxBoundDigits caps the decimal expansion of a bound.
const maxBoundDigits = 2048

// ratDecimal writes r as a decimal (no exponent), exactly; ok is false when
// its denominator has a prime factor other than 2 and 5 or the expansion
// is longer than maxBoundDigits.
func ratDecimal(r *big.Rat) (string, bool) {
	den := new(big.Int).Set(r.Denom())
	two, five := big.NewInt(2), big.NewInt(5)
	var a, b int
	m := new(big.Int)
	for {
		if m.Mod(den, two).Sign() != 0 {
			break
		}
		den.Quo(den, two)
		a++
	}
	for {
		if m.Mod(den, five).Sign() != 0 {
			break
		}
		den.Quo(den, five)
		b++
	}
	if den.Cmp(big.NewInt(1)) != 0 {
		return "", false
	}
	places := max(a, b)
	if places > maxBoundDigits || r.Num().BitLen() > maxBoundDigits*4 {
		return "", false
	}
	return r.FloatString(places), true
}

// multiple is a multipleOf keyword's value: an int64 when it is a whole
// number that fits (the common case, judged without allocating), else the
// exact rational.
type multiple struct {
	i   int64 // 0 when not a small whole number
	rat *big.Rat
}

func newMultiple(r *big.Rat) *multiple {
	if r == nil {
		return nil
	}
	m := &multiple{rat: r}
	if r.IsInt() && r.Num().IsInt64() {
		m.i = r.Num().Int64()
	}
	return m
}

// isMultiple reports whether the number whose text is s is a whole
// multiple of m: exact, with big.Rat only where the fast path does not
// apply (a fractional multipleOf, or a value beyond int64).
func (m *multiple) isMultiple(d *dec) bool {
	if d.isZero() {
		return true
	}
	if m.i != 0 && d.isInt() && d.point <= 18 {
		if v, err := strconv.ParseInt(intText(d), 10, 64); err == nil {
			return v%m.i == 0
		}
	}
	if m.i != 0 && !d.isInt() {
		return false // a fraction is never a whole multiple of a whole number
	}
	// value/m is whole iff (digits × 10^(point-n)) × den / num is whole.
	// A huge positive exponent only adds factors of 2 and 5, and beyond the
	// numerator's size they all divide it: clamp it there, answer unchanged.
	num, den := m.rat.Num(), m.rat.Denom()
	digits := new(big.Int)
	digits.SetString(digitText(d), 10)
	e := d.point - d.n
	if lim := num.BitLen() + 1; e > lim {
		e = lim
	}
	if e < -(d.n + len(den.String()) + 1) {
		return false // |value × den| < 1 ≤ a nonzero whole multiple of num
	}
	x := new(big.Int).Mul(digits, den)
	if e >= 0 {
		x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
		return new(big.Int).Mod(x, new(big.Int).Abs(num)).Sign() == 0
	}
	y := new(big.Int).Mul(new(big.Int).Abs(num), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e)), nil))
	return new(big.Int).Mod(x, y).Sign() == 0
}

// digitText returns d₁…dₙ.
func digitText(d *dec) string {
	var b strings.Builder
	for i := 1; i <= d.n; i++ {
		b.WriteByte('0' + d.digit(i))
	}
	return b.String()
}

// intText returns a whole d (isInt, point ≤ 18) as decimal text, sign
// included.
func intText(d *dec) string {
	var buf [24]byte
	k := 0
	if d.neg {
		buf[k] = '-'
		k++
	}
	for i := 1; i <= d.point; i++ {
		buf[k] = '0' + d.digit(i)
		k++
	}
	return string(buf[:k])
}

// ratOf returns d as a big.Rat, for messages.
func ratOf(s string) *big.Rat {
	r, _ := new(big.Rat).SetString(s)
	if r == nil {
		r = new(big.Rat)
	}
	return r
}
