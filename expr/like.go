package expr

import (
	"fmt"
	"regexp"
	"strings"
)

// likeMatcher is a compiled LIKE pattern: the regular expression Spark
// builds from it (StringUtils.escapeLikeRegex: "(?s)" + the pattern with %
// as ".*", _ as ".", everything else quoted), and its literal prefix for
// statistics pruning.
type likeMatcher struct {
	re         *regexp.Regexp
	prefix     string // the text before the first unescaped % or _
	prefixOnly bool   // the pattern is prefix followed by one or more % only
}

func (m *likeMatcher) match(s string) bool { return m.re.MatchString(s) }

// compileLike translates pattern with escape character esc. As in Spark, the
// escape character may only precede %, _ or itself, and may not end the
// pattern.
func compileLike(pattern string, esc rune) (*likeMatcher, error) {
	var re, prefix strings.Builder
	re.WriteString(`(?s)\A`)
	inPrefix, prefixOnly := true, true
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == esc:
			if i+1 == len(rs) {
				return nil, fmt.Errorf("LIKE pattern %s ends with the escape character %q", quote(pattern), esc)
			}
			n := rs[i+1]
			if n != '%' && n != '_' && n != esc {
				return nil, fmt.Errorf("LIKE pattern %s: the escape character %q may only precede %%, _ or itself, not %q", quote(pattern), esc, n)
			}
			i++
			re.WriteString(regexp.QuoteMeta(string(n)))
			if inPrefix {
				prefix.WriteRune(n)
			} else {
				prefixOnly = false
			}
		case c == '%':
			re.WriteString(".*")
			inPrefix = false
		case c == '_':
			re.WriteString(".")
			inPrefix, prefixOnly = false, false
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
			if inPrefix {
				prefix.WriteRune(c)
			} else {
				prefixOnly = false
			}
		}
	}
	re.WriteString(`\z`)
	r, err := regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("LIKE pattern %s: %v", quote(pattern), err)
	}
	return &likeMatcher{re: r, prefix: prefix.String(), prefixOnly: prefixOnly && !inPrefix}, nil
}
