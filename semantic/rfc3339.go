package semantic

import (
	"errors"
	"fmt"
	"time"
)

// ErrTimestamp is wrapped by every error ParseTimestamp returns.
var ErrTimestamp = errors.New("invalid RFC 3339 date-time")

// ParseTimestamp parses s as an RFC 3339 §5.6 "date-time" and nothing else:
//
//	full-date "T" full-time, e.g. 2025-06-01T12:30:00Z or 1998-12-31T15:59:60.5-08:00
//
// Rules, each refused with an error wrapping ErrTimestamp:
//   - four-digit year, two-digit month 01–12, two-digit day valid for that month
//     and year (leap years per the Gregorian calendar, RFC 3339 Appendix C);
//   - "T" or "t" between date and time, "Z" or "z" or ±hh:mm as the offset
//     (RFC 3339 §5.6 NOTE); a missing offset is an error (no local times);
//   - hours 00–23, minutes 00–59, seconds 00–59, or 60 only when the instant
//     in UTC is 23:59:60 (a leap second, RFC 3339 §5.7);
//   - an optional fraction "." followed by at least one digit;
//   - offset hours 00–23 and minutes 00–59;
//   - no surrounding space, no other characters.
//
// Go's time.Parse(time.RFC3339, …) is not used: it accepts "24:00", one-digit
// fields in places and refuses leap seconds. A leap second is returned as the
// following second (23:59:60Z becomes 00:00:00Z of the next day), since
// time.Time cannot hold it.
func ParseTimestamp(s string) (time.Time, error) {
	fail := func(why string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("%w: %q: %s", ErrTimestamp, clip(s), why)
	}
	if len(s) < len("2006-01-02T15:04:05Z") {
		return fail("too short")
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	if !ok1 || !ok2 || !ok3 || s[4] != '-' || s[7] != '-' {
		return fail("date is not YYYY-MM-DD")
	}
	if month < 1 || month > 12 {
		return fail("month out of range")
	}
	if day < 1 || day > daysIn(year, month) {
		return fail("day out of range")
	}
	if s[10] != 'T' && s[10] != 't' {
		return fail(`date and time must be separated by "T"`)
	}
	hour, ok1 := num(11, 2)
	minute, ok2 := num(14, 2)
	second, ok3 := num(17, 2)
	if !ok1 || !ok2 || !ok3 || s[13] != ':' || s[16] != ':' {
		return fail("time is not hh:mm:ss")
	}
	if hour > 23 || minute > 59 || second > 60 {
		return fail("time out of range")
	}
	i := 19
	nanos := 0
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		scale := 100000000
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			nanos += int(s[i]-'0') * scale
			scale /= 10
			i++
		}
		if i == start {
			return fail("fraction needs at least one digit")
		}
	}
	if i >= len(s) {
		return fail("missing offset")
	}
	offset := 0
	switch s[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		if len(s)-i != 6 || s[i+3] != ':' {
			return fail("offset is not ±hh:mm")
		}
		oh, ok1 := num(i+1, 2)
		om, ok2 := num(i+4, 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return fail("offset out of range")
		}
		offset = oh*3600 + om*60
		if s[i] == '-' {
			offset = -offset
		}
		i += 6
	default:
		return fail("missing offset")
	}
	if i != len(s) {
		return fail("trailing characters")
	}
	leap := second == 60
	if leap {
		second = 59
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, nanos, time.FixedZone("", offset))
	if leap {
		u := t.UTC()
		if u.Hour() != 23 || u.Minute() != 59 {
			return fail("leap second only at 23:59:60 UTC")
		}
		t = t.Add(time.Second)
	}
	return t, nil
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// clip shortens s for use inside an error message.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
