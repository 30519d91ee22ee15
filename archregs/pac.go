package archregs

import "math/bits"

// DefaultPACMask keeps the 47 address bits of Apple's arm64 user space,
// for a value whose images' extent is not known.
const DefaultPACMask = 1<<47 - 1

// AddressMask returns the smallest all-ones mask that keeps every address
// below top: the bits a pointer-authentication signature leaves alone when
// every code address (and saved frame pointer) is below top. A top of 0
// gives DefaultPACMask.
func AddressMask(top uint64) uint64 {
	if top == 0 {
		return DefaultPACMask
	}
	if n := bits.Len64(top - 1); n < 64 {
		return 1<<n - 1
	}
	return ^uint64(0)
}
