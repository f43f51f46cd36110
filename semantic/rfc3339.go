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
//     "-00:00" (RFC 3339 §4.3, unknown local offset) is read as UTC;
//   - hours 00–23, minutes 00–59, seconds 00–59, or 60 for a leap second (see
//     below);
//   - an optional fraction "." followed by at least one digit;
//   - offset hours 00–23 and minutes 00–59;
//   - no surrounding space, no other characters.
//
// Leap seconds (RFC 3339 §5.7): second 60 is accepted only where the stamp,
// shifted by its offset to UTC, is 23:59:60 on the last day of a month —
// "in time zones other than Z, the leap second point is shifted by the zone
// offset", so 1998-12-31T15:59:60-08:00 and 1999-01-01T00:59:60+01:00 are
// the leap second 1998-12-31T23:59:60Z, and 2025-06-30T23:59:60+01:00 is
// refused. Any month's end is allowed (ITU-R TF.460 permits them all; no
// table of announced leap seconds is consulted, since one compiled into a
// binary goes stale). Negative leap seconds (a minute ending at :58) have
// never happened and are not modelled: :59 is always valid.
//
// time.Time cannot hold second 60, so a leap second, with any fraction, is
// returned as the last instant of its minute, 23:59:59.999999999 UTC (in the
// stamp's own offset): after every stamp of second 59 and before the next
// minute. It is never mapped to the following second, which a freshness rule
// with no skew would judge to be in the future.
//
// Go's time.Parse(time.RFC3339, …) is not used: it accepts "24:00", one-digit
// fields in places and refuses leap seconds.
func ParseTimestamp(s string) (time.Time, error) {
	fail := func(why string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("%w: %q: %s", ErrTimestamp, clip(s), why)
	}
	if len(s) < len("2006-01-02T15:04:05Z") {
		return fail("too short")
	}
	year, month, day, why := parseDate(s)
	if why != "" {
		return fail(why)
	}
	if s[10] != 'T' && s[10] != 't' {
		return fail(`date and time must be separated by "T"`)
	}
	hour, minute, second, why := parseClock(s)
	if why != "" {
		return fail(why)
	}
	nanos, i, why := parseFraction(s, 19)
	if why != "" {
		return fail(why)
	}
	offset, why := parseOffset(s, i)
	if why != "" {
		return fail(why)
	}
	leap := second == 60
	if leap {
		second, nanos = 59, 0
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, nanos, time.FixedZone("", offset))
	if leap {
		u := t.UTC()
		if u.Hour() != 23 || u.Minute() != 59 || u.Day() != daysIn(u.Year(), int(u.Month())) {
			return fail("leap second only at 23:59:60 UTC on the last day of a month")
		}
		t = t.Add(time.Second - time.Nanosecond)
	}
	return t, nil
}

// digits parses the n decimal digits of s at i; ok is false for any other byte.
func digits(s string, i, n int) (v int, ok bool) {
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseDate parses the full-date YYYY-MM-DD at the start of s; why says
// what is wrong, "" when nothing is.
func parseDate(s string) (year, month, day int, why string) {
	year, ok1 := digits(s, 0, 4)
	month, ok2 := digits(s, 5, 2)
	day, ok3 := digits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, "date is not YYYY-MM-DD"
	}
	if month < 1 || month > 12 {
		return 0, 0, 0, "month out of range"
	}
	if day < 1 || day > daysIn(year, month) {
		return 0, 0, 0, "day out of range"
	}
	return year, month, day, ""
}

// parseClock parses the hh:mm:ss at s[11:19] (seconds up to 60); why says
// what is wrong, "" when nothing is.
func parseClock(s string) (hour, minute, second int, why string) {
	hour, ok1 := digits(s, 11, 2)
	minute, ok2 := digits(s, 14, 2)
	second, ok3 := digits(s, 17, 2)
	if !ok1 || !ok2 || !ok3 || s[13] != ':' || s[16] != ':' {
		return 0, 0, 0, "time is not hh:mm:ss"
	}
	if hour > 23 || minute > 59 || second > 60 {
		return 0, 0, 0, "time out of range"
	}
	return hour, minute, second, ""
}

// parseFraction parses an optional "." and digits at s[i:] into
// nanoseconds and returns the index after it; why says what is wrong.
func parseFraction(s string, i int) (nanos, next int, why string) {
	if i >= len(s) || s[i] != '.' {
		return 0, i, ""
	}
	i++
	start := i
	scale := 100000000
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		nanos += int(s[i]-'0') * scale
		scale /= 10
		i++
	}
	if i == start {
		return 0, i, "fraction needs at least one digit"
	}
	return nanos, i, ""
}

// parseOffset parses the offset ("Z", "z" or ±hh:mm) that must end s at i,
// in seconds east of UTC; why says what is wrong.
func parseOffset(s string, i int) (offset int, why string) {
	if i >= len(s) {
		return 0, "missing offset"
	}
	switch s[i] {
	case 'Z', 'z':
		i++
	case '+', '-':
		if len(s)-i != 6 || s[i+3] != ':' {
			return 0, "offset is not ±hh:mm"
		}
		oh, ok1 := digits(s, i+1, 2)
		om, ok2 := digits(s, i+4, 2)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return 0, "offset out of range"
		}
		offset = oh*3600 + om*60
		if s[i] == '-' {
			offset = -offset
		}
		i += 6
	default:
		return 0, "missing offset"
	}
	if i != len(s) {
		return 0, "trailing characters"
	}
	return offset, ""
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
