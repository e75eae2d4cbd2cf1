package bytesize

import (
	"errors"
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"512", 512},
		{"1073741824", 1 << 30},
		{"9223372036854775807", math.MaxInt64},
		{"512B", 512},
		{"512b", 512},
		{"1K", 1 << 10},
		{"1k", 1 << 10},
		{"512KiB", 512 << 10},
		{"512kib", 512 << 10},
		{"64M", 64 << 20},
		{"64m", 64 << 20},
		{"64Mi", 64 << 20},
		{"64MiB", 64 << 20},
		{"64MIB", 64 << 20},
		{"64MB", 64_000_000},
		{"64mb", 64_000_000},
		{"64Mb", 64_000_000},
		{"1G", 1 << 30},
		{"2g", 2 << 30},
		{"1GiB", 1 << 30},
		{"1 GiB", 1 << 30},
		{"1\tGiB", 1 << 30},
		{" 1GiB ", 1 << 30},
		{"1GB", 1_000_000_000},
		{"1T", 1 << 40},
		{"1tib", 1 << 40},
		{"1TB", 1_000_000_000_000},
		{"1.5G", 3 << 29},
		{"1.5GiB", 3 << 29},
		{"1.5GB", 1_500_000_000},
		{"0.5K", 512},
		{"0.1K", 102}, // 102.4, rounded down
		{"1.000000000000000000001K", 1024},
		{"007M", 7 << 20},
		{"8388607T", 8388607 << 40},
		{"8388607.99999999T", 8388607<<40 + 1099511616780}, // (1 - 1e-8) TiB rounded down
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"", ErrSyntax},
		{" ", ErrSyntax},
		{"G", ErrSyntax},
		{"GiB", ErrSyntax},
		{".5G", ErrSyntax},
		{"1.G", ErrSyntax},
		{"1..5G", ErrSyntax},
		{"1.5", ErrSyntax},  // a fraction of a byte
		{"1.5B", ErrSyntax}, // the same
		{"-1", ErrSyntax},
		{"-1G", ErrSyntax},
		{"+1G", ErrSyntax},
		{"1e9", ErrSyntax},
		{"0x10", ErrSyntax},
		{"1,5G", ErrSyntax},
		{"1_000", ErrSyntax},
		{"1X", ErrSyntax},
		{"1P", ErrSyntax},
		{"1PB", ErrSyntax},
		{"1iB", ErrSyntax},
		{"1Bi", ErrSyntax},
		{"1GiBB", ErrSyntax},
		{"1GBi", ErrSyntax},
		{"1 G iB", ErrSyntax},
		{"1 2G", ErrSyntax},
		{"1G 2", ErrSyntax},
		{"lots", ErrSyntax},
		{"9223372036854775808", ErrRange},
		{"8388608T", ErrRange},
		{"9223372036854775807K", ErrRange},
		{"99999999999999999999999999G", ErrRange},
	} {
		if got, err := Parse(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("Parse(%q) = %d, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
