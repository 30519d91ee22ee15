package symbolicator

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestParseAddressMatchesStrconv: an address reads as strconv reads it,
// in hex after "0x" or "0X" (either case of digit) and in decimal
// otherwise, at the edges of overflow and on random values; anything
// else is refused.
func TestParseAddressMatchesStrconv(t *testing.T) {
	inputs := []string{"0", "9", "0x0", "0X1F", "0xfFfF", "18446744073709551615", "18446744073709551616",
		"18446744073709551610", "99999999999999999999", "0xffffffffffffffff", "0x10000000000000000",
		"0x0000000000000000000001", "", "0x", "x1", "0xg", "12a", "-1", "+1", " 1", "0x 1", "1e3"}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		v := rng.Uint64() >> rng.UintN(64)
		inputs = append(inputs, strconv.FormatUint(v, 10), "0x"+strconv.FormatUint(v, 16), "0X"+strings.ToUpper(strconv.FormatUint(v, 16)))
	}
	for _, in := range inputs {
		got, ok := parseAddress([]byte(in))
		var want uint64
		var err error
		if h, isHex := strings.CutPrefix(strings.ToLower(in), "0x"); isHex && len(in) > 2 {
			want, err = strconv.ParseUint(h, 16, 64)
		} else {
			want, err = strconv.ParseUint(in, 10, 64)
		}
		if ok != (err == nil) || ok && got != want {
			t.Errorf("parseAddress(%q) = %#x, %v; strconv reads %#x, %v", in, got, ok, want, err)
		}
	}
}

// TestAppendHexMatchesStrconv: an address is written as "0x" and
// strconv's lowercase hex, quoted, after what the buffer held.
func TestAppendHexMatchesStrconv(t *testing.T) {
	values := []uint64{0, 1, 0xf, 0x10, 0xffffffff, 1 << 63, ^uint64(0)}
	rng := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		values = append(values, rng.Uint64()>>rng.UintN(64))
	}
	for _, v := range values {
		got := string(appendHex([]byte("x,"), v))
		if want := `x,"0x` + strconv.FormatUint(v, 16) + `"`; got != want {
			t.Errorf("appendHex(%#x) = %s; want %s", v, got, want)
		}
	}
}
