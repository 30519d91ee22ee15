package swiftdemangle

import "unicode/utf8"

// Swift's variant of Punycode (RFC 3492) for non-ASCII identifiers: '_' is
// the delimiter, digits are a-z (0-25) and A-J (26-35), and ASCII characters
// that are not valid in identifiers were encoded as 0xD800+c.
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
	pcMaxInt      = 1<<31 - 1
)

func punycodeDigit(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return int(c - 'a')
	case c >= 'A' && c <= 'J':
		return int(c-'A') + 26
	}
	return -1
}

func punycodeAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + ((pcBase-pcTMin+1)*delta)/(delta+pcSkew)
}

// decodePunycodeUTF8 decodes a Swift-Punycode identifier to UTF-8.
func decodePunycodeUTF8(in string) (string, bool) {
	out := make([]rune, 0, len(in))
	n, i, bias := pcInitialN, 0, pcInitialBias
	if last := lastIndexByte(in, '_'); last >= 0 {
		for j := 0; j < last; j++ {
			if in[j] > 0x7f {
				return "", false
			}
			out = append(out, rune(in[j]))
		}
		in = in[last+1:]
	}
	for len(in) > 0 {
		oldi, w := i, 1
		for k := pcBase; ; k += pcBase {
			if len(in) == 0 {
				return "", false
			}
			digit := punycodeDigit(in[0])
			in = in[1:]
			if digit < 0 || digit > (pcMaxInt-i)/w {
				return "", false
			}
			i += digit * w
			t := k - bias
			if k <= bias {
				t = pcTMin
			} else if k >= bias+pcTMax {
				t = pcTMax
			}
			if digit < t {
				break
			}
			if w > pcMaxInt/(pcBase-t) {
				return "", false
			}
			w *= pcBase - t
		}
		bias = punycodeAdapt(i-oldi, len(out)+1, oldi == 0)
		if i/(len(out)+1) > pcMaxInt-n {
			return "", false
		}
		n += i / (len(out) + 1)
		i %= len(out) + 1
		if n < 0x80 {
			return "", false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	buf := make([]byte, 0, len(out)*3)
	for _, r := range out {
		if r >= 0xD800 && r < 0xD880 {
			r -= 0xD800
		}
		if !utf8.ValidRune(r) {
			return "", false
		}
		buf = utf8.AppendRune(buf, r)
	}
	return string(buf), true
}

func lastIndexByte(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}
