package bytesize

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// ErrSyntax is the error of Parse for a string that is not a size.
var ErrSyntax = errors.New("not a size")

// ErrRange is the error of Parse for a size over math.MaxInt64 bytes.
var ErrRange = errors.New("size too large")

// Parse reads a size in bytes. Case does not matter, blanks around the
// number and between it and its unit are allowed, and the size is one of:
//
//   - a whole number of bytes, with or without B: 1073741824, 512B;
//   - a number and K, M, G or T, alone or followed by i or iB: powers of
//     1024 (64M, 64Mi and 64MiB are 67108864);
//   - a number and KB, MB, GB or TB: powers of 1000 (64MB is 64000000).
//
// The number of a size with a unit may have a decimal fraction (1.5G), and
// the size is then rounded down to a whole byte; a fraction of a byte (1.5,
// 1.5B) is not a size. Parse returns an error wrapping ErrSyntax for
// anything else (a sign, an exponent, an empty number, another unit) and
// ErrRange for a size over math.MaxInt64 bytes; a size of 0 is valid, and
// each caller states its own minimum.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	whole := leadingDigits(t)
	t = t[len(whole):]
	var frac string
	if strings.HasPrefix(t, ".") {
		frac = leadingDigits(t[1:])
		if frac == "" {
			return 0, ErrSyntax
		}
		t = t[1+len(frac):]
	}
	if whole == "" {
		return 0, ErrSyntax
	}
	base, exp, ok := unit(strings.ToLower(strings.TrimLeft(t, " \t")))
	if !ok || exp == 0 && frac != "" {
		return 0, ErrSyntax
	}
	// (whole + frac/10^len(frac)) * base^exp, exactly, then rounded down.
	num, _ := new(big.Int).SetString(whole+frac, 10)
	num.Mul(num, new(big.Int).Exp(big.NewInt(base), big.NewInt(exp), nil))
	num.Quo(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil))
	if !num.IsInt64() {
		return 0, ErrRange
	}
	return num.Int64(), nil
}

// unit reads a lower-cased unit: its base and power, and whether it is one.
func unit(u string) (base, exp int64, ok bool) {
	if u == "" || u == "b" {
		return 1, 0, true
	}
	exp = int64(strings.IndexByte("kmgt", u[0])) + 1
	if exp == 0 {
		return 0, 0, false
	}
	switch u[1:] {
	case "", "i", "ib":
		return 1024, exp, true
	case "b":
		return 1000, exp, true
	}
	return 0, 0, false
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// Human writes a size the way ls -h does (512 B, 1.5 KiB, 3.0 GiB).
func Human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
