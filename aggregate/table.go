package aggregate

import "math/bits"

// idTable finds ids by a 64-bit hash of what they stand for: open
// addressing with linear probing over one array of (hash, id) slots. The
// caller confirms a candidate against what the id stands for, so two
// values with one hash stay apart. Go's maps hashed the key again and
// probed with their own hash; here the hash is made while the value is
// read (a stack's while its frames are placed), and a hit costs one
// probe of a cache line and the caller's comparison.
type idTable struct {
	slots []idSlot // a power of two, at most 3/4 full
	n     int
}

// idSlot holds id+1, so that the zero slot is empty.
type idSlot struct {
	hash uint64
	id1  int32
}

// lookup returns the id whose hash is h and for which same returns true.
func (t *idTable) lookup(h uint64, same func(id int32) bool) (int32, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.id1 == 0 {
			return 0, false
		}
		if s.hash == h && same(s.id1-1) {
			return s.id1 - 1, true
		}
	}
}

// insert adds id under h; the caller knows it is not there yet.
func (t *idTable) insert(h uint64, id int32) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	t.put(h, id+1)
	t.n++
}

func (t *idTable) put(h uint64, id1 int32) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].id1 != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = idSlot{hash: h, id1: id1}
}

func (t *idTable) grow() {
	old := t.slots
	t.slots = make([]idSlot, max(64, 2*len(old)))
	for _, s := range old {
		if s.id1 != 0 {
			t.put(s.hash, s.id1)
		}
	}
}

// mix folds v into the hash h: a 128-bit product of the two, its halves
// xored (wyhash's mixing step). The seed the aggregator starts each hash
// with is random, so that no input can be made to collide on purpose.
func mix(h, v uint64) uint64 {
	hi, lo := bits.Mul64(h^v, v^0x9e3779b97f4a7c15)
	return hi ^ lo ^ h
}

// hashRef folds a frame into a stack's hash.
func hashRef(h uint64, ref frameRef) uint64 {
	return mix(h, ref.offset^uint64(uint32(ref.image))*0xbf58476d1ce4e5b9)
}
