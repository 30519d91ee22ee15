package hexnum

// Parse reads s, hex digits only (no prefix, no sign, either case), as a
// 64-bit value. ok is false for an empty s, a byte that is no hex digit,
// or a value past 64 bits; leading zeros are allowed, as strconv allows
// them.
func Parse[T ~string | ~[]byte](s T) (v uint64, ok bool) {
	if len(s) == 0 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		d := digitValue[s[i]]
		if d > 0xf || v>>60 != 0 {
			return 0, false // not a digit, or overflow
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

// ParseOptionalPrefix reads what Parse reads, after a "0x" or "0X" if s
// starts with one.
func ParseOptionalPrefix[T ~string | ~[]byte](s T) (uint64, bool) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	return Parse(s)
}

// digitValue is each byte's value as a hex digit, 0xff for a byte that is
// none: one table look-up a digit.
var digitValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c], t[c-'a'+'A'] = byte(c-'a'+10), byte(c-'a'+10)
	}
	return t
}()
