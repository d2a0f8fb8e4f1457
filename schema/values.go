package schema

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

const dateLayout = "2006-01-02"

// String formats the date as YYYY-MM-DD.
func (d Date) String() string { return d.Time().Format(dateLayout) }

// Time is midnight UTC of the date.
func (d Date) Time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// DateOf returns the calendar date of t in t's location.
func DateOf(t time.Time) Date {
	y, m, dd := t.Date()
	return Date(time.Date(y, m, dd, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// ParseDate parses YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return 0, err
	}
	return DateOf(t), nil
}

// String renders the decimal plainly with exactly Scale fractional digits
// ("-12.340"), as Java's BigDecimal.toPlainString.
func (d Decimal) String() string {
	if d.Unscaled == nil {
		return "<nil>"
	}
	neg := d.Unscaled.Sign() < 0
	digits := new(big.Int).Abs(d.Unscaled).String()
	if d.Scale > 0 {
		if len(digits) <= d.Scale {
			digits = strings.Repeat("0", d.Scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-d.Scale] + "." + digits[len(digits)-d.Scale:]
	} else if d.Scale < 0 {
		digits += strings.Repeat("0", -d.Scale)
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// ParseDecimal parses a plain decimal string ("-12.34", "1e3" is refused)
// into a Decimal with the given scale; digits beyond scale must be zero.
func ParseDecimal(s string, scale int) (Decimal, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "eE/") {
		return Decimal{}, fmt.Errorf("invalid decimal %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt(pow10(scale)))
	if !r.IsInt() {
		return Decimal{}, fmt.Errorf("decimal %q has more than %d fractional digits", s, scale)
	}
	return Decimal{Unscaled: new(big.Int).Set(r.Num()), Scale: scale}, nil
}

var pow10Cache = func() [39]*big.Int {
	var p [39]*big.Int
	p[0] = big.NewInt(1)
	for i := 1; i < len(p); i++ {
		p[i] = new(big.Int).Mul(p[i-1], big.NewInt(10))
	}
	return p
}()

// pow10 returns 10^n (a shared value for n <= 38: never modify it).
func pow10(n int) *big.Int {
	if n >= 0 && n < len(pow10Cache) {
		return pow10Cache[n]
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}
