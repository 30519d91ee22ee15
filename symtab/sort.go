package symtab

import "slices"

// sortEntries sorts entries by address, then by cmpEntries among entries
// at one address. A symbol table is read unsorted (the linker groups
// symbols, it does not order them), and a comparison sort of it was most of
// the time to open an image: an LSD radix sort on the address, one pass per
// byte in which the addresses differ, costs a few linear passes instead.
// Runs of one address, short in practice, are then put in full order.
func sortEntries(entries []entry, cmpEntries func(a, b entry) int) {
	if len(entries) < 256 {
		slices.SortFunc(entries, cmpEntries)
		return
	}
	lo, hi := entries[0].addr, entries[0].addr
	for _, e := range entries {
		lo, hi = min(lo, e.addr), max(hi, e.addr)
	}
	src, dst := entries, make([]entry, len(entries))
	for shift := uint(0); shift < 64 && (hi-lo)>>shift != 0; shift += 8 {
		var counts [256]int
		for _, e := range src {
			counts[byte((e.addr-lo)>>shift)]++
		}
		if counts[byte((src[0].addr-lo)>>shift)] == len(src) {
			continue // every address has this byte: the pass would move nothing
		}
		sum := 0
		for i, c := range counts {
			counts[i] = sum
			sum += c
		}
		for _, e := range src {
			b := byte((e.addr - lo) >> shift)
			dst[counts[b]] = e
			counts[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &entries[0] {
		copy(entries, src)
	}
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].addr == entries[i].addr {
			j++
		}
		switch {
		case j-i == 2:
			// The common run: a function start or an export at a
			// symbol's address.
			if cmpEntries(entries[i+1], entries[i]) < 0 {
				entries[i], entries[i+1] = entries[i+1], entries[i]
			}
		case j-i > 2:
			slices.SortFunc(entries[i:j], cmpEntries)
		}
		i = j
	}
}
