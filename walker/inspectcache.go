package walker

import (
	"sync"

	"github.com/stackimage/stackimage/archregs"
)

// InspectCache keeps the code inspection's answers (docs/walker.md,
// "Reading the function's code") across walks, per function, as lldb
// keeps an UnwindPlan per function: without it every frame decodes its
// function from the first instruction to its PC again, up to 16 KiB,
// though the threads of a dump, and the stacks of an aggregate, return
// into the same functions at the same places over and over.
//
// A cache belongs to one set of images: the answers depend on the bytes
// Options.Instructions reads and the starts Options.Functions gives, so
// walks that share a cache must pass the same ones (symbolize.Process
// keeps one per process). It is safe for concurrent walks, and bounded:
// when it holds maxInspectAnswers answers it is emptied and refilled. The
// zero value is ready to use.
type InspectCache struct {
	mu      sync.Mutex
	funcs   map[inspectKey]map[uint64]inspectAnswer
	answers int
	hits    uint64
	misses  uint64
}

// maxInspectAnswers bounds an InspectCache: a few MiB at most (an answer
// holds the saved registers it found, usually a handful).
const maxInspectAnswers = 1 << 14

// inspectKey names one function's code: its start, and on armv7 whether
// it is Thumb code (the same bytes decode otherwise as ARM).
type inspectKey struct {
	arch  *archregs.Arch
	start uint64
	thumb bool
}

// inspectAnswer is inspectFunction's answer at one PC, its saved
// registers copied out of the fixed array.
type inspectAnswer struct {
	spOff, fpOff     int64
	spKnown, fpSet   bool
	afterCall, getPC bool
	ok               bool
	saved            []savedReg
}

// get returns the answer kept for pc in key's function; hit is false when
// there is none.
func (c *InspectCache) get(key inspectKey, pc uint64) (st inspectState, ok, hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, hit := c.funcs[key][pc]
	if !hit {
		c.misses++
		return inspectState{}, false, false
	}
	c.hits++
	if !a.ok {
		return inspectState{}, false, true
	}
	st = inspectState{spOff: a.spOff, fpOff: a.fpOff, spKnown: a.spKnown, fpSet: a.fpSet, afterCall: a.afterCall, getPC: a.getPC}
	st.n = copy(st.saved[:], a.saved)
	return st, true, true
}

// put keeps the answer for pc in key's function.
func (c *InspectCache) put(key inspectKey, pc uint64, st *inspectState, ok bool) {
	a := inspectAnswer{ok: ok}
	if ok {
		a = inspectAnswer{spOff: st.spOff, fpOff: st.fpOff, spKnown: st.spKnown, fpSet: st.fpSet,
			afterCall: st.afterCall, getPC: st.getPC, ok: true, saved: append([]savedReg(nil), st.saved[:st.n]...)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.funcs == nil || c.answers >= maxInspectAnswers {
		c.funcs, c.answers = map[inspectKey]map[uint64]inspectAnswer{}, 0
	}
	plan := c.funcs[key]
	if plan == nil {
		plan = map[uint64]inspectAnswer{}
		c.funcs[key] = plan
	}
	if _, dup := plan[pc]; !dup {
		c.answers++
	}
	plan[pc] = a
}

// Stats returns how many lookups the cache answered and how many it did
// not (each then decoded the function and kept the answer).
func (c *InspectCache) Stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}
