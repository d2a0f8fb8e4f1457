package source

import (
	"fmt"
	"strings"
	"time"
)

// javaLayout turns a Spark/Java DateTimeFormatter pattern such as
// "yyyy/MM/dd HH:mm" into a Go time layout. A pattern that already contains
// Go's reference year "2006" is taken as a Go layout unchanged. Supported
// letters: y, M, d, H, h, m, s, S (fraction), a, E, X, x, Z, z, and quoted
// literals ('T', ”).
func javaLayout(p string) (string, error) {
	if p == "" || strings.Contains(p, "2006") {
		return p, nil
	}
	var b strings.Builder
	rs := []rune(p)
	for i := 0; i < len(rs); {
		c := rs[i]
		if c == '\'' {
			j := i + 1
			if j < len(rs) && rs[j] == '\'' {
				b.WriteRune('\'')
				i += 2
				continue
			}
			for j < len(rs) && rs[j] != '\'' {
				b.WriteRune(rs[j])
				j++
			}
			if j == len(rs) {
				return "", fmt.Errorf("%w: unterminated quote in time pattern %q", ErrFormat, p)
			}
			i = j + 1
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b.WriteRune(c)
			i++
			continue
		}
		n := 1
		for i+n < len(rs) && rs[i+n] == c {
			n++
		}
		var out string
		switch c {
		case 'y', 'u':
			out = "2006"
			if n == 2 {
				out = "06"
			}
		case 'M', 'L':
			out = map[int]string{1: "1", 2: "01", 3: "Jan"}[n]
			if n >= 4 {
				out = "January"
			}
		case 'd':
			out = map[int]string{1: "2", 2: "02"}[n]
		case 'H':
			out = "15"
		case 'h':
			out = map[int]string{1: "3", 2: "03"}[n]
		case 'm':
			out = map[int]string{1: "4", 2: "04"}[n]
		case 's':
			out = map[int]string{1: "5", 2: "05"}[n]
		case 'S':
			out = strings.Repeat("0", n)
		case 'a':
			out = "PM"
		case 'E':
			out = "Mon"
			if n >= 4 {
				out = "Monday"
			}
		case 'X':
			out = map[int]string{1: "Z07", 2: "Z0700", 3: "Z07:00"}[n]
		case 'x':
			out = map[int]string{1: "-07", 2: "-0700", 3: "-07:00"}[n]
		case 'Z':
			out = "-0700"
		case 'z':
			out = "MST"
		}
		if out == "" {
			return "", fmt.Errorf("%w: time pattern %q: unsupported letter run %q", ErrFormat, p, strings.Repeat(string(c), n))
		}
		// Go needs a "." before a fraction; Java writes it literally, so it is
		// already in b.
		b.WriteString(out)
		i += n
	}
	return b.String(), nil
}

// defaultTimestampLayouts are tried when no TimestampFormat is given, or when
// it does not match: ISO 8601 / RFC 3339 and Spark's "yyyy-MM-dd HH:mm:ss[.S]".
// A value without a zone is taken as UTC.
var defaultTimestampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

type timeParser struct {
	tsLayout   string // from TimestampFormat; "" none
	dateLayout string // from DateFormat; "" none
}

func (p *timeParser) timestamp(s string) (time.Time, error) {
	if t, ok := p.parseTimestamp(s); ok {
		return t, nil
	}
	s = strings.TrimSpace(s)
	if p.tsLayout != "" {
		return time.Time{}, fmt.Errorf("%q is not a timestamp (format %q or RFC 3339)", s, p.tsLayout)
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp (RFC 3339 or yyyy-MM-dd HH:mm:ss; set a timestamp format)", s)
}

// parseTimestamp is timestamp without the error (s does not escape: a
// text converted from bytes for it need not be copied to the heap).
func (p *timeParser) parseTimestamp(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if p.tsLayout != "" {
		if t, err := time.ParseInLocation(p.tsLayout, s, time.UTC); err == nil {
			return t.UTC(), true
		}
	}
	for _, l := range defaultTimestampLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func (p *timeParser) date(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if p.dateLayout != "" {
		if t, err := time.ParseInLocation(p.dateLayout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.UTC); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date (yyyy-MM-dd)", s)
}
