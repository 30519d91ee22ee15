package crashreport

// Stacks is what counting the stacks of an .ips report needs of it: the
// process's attributes, its images and every thread's frames as
// addresses, read by ReadIPSStacks. One Stacks can be given to
// ReadIPSStacks again and again: its slices are reused.
type Stacks struct {
	// Path, Version, OS, Hardware and Time are the Report's fields of
	// the same names.
	Path, Version, OS, Hardware, Time string
	// Images are the Report's images.
	Images []Image
	// Threads are the Report's threads, in order.
	Threads []StackThread

	frames     []StackFrame // every thread's, which StackThread.Frames slice
	imageIndex []int32      // the image of each of frames, until addresses are set
	threads    []ipsThread  // ipsBody.threads, kept for the next report
}

// StackThread is one thread of a Stacks.
type StackThread struct {
	Name string
	// Crashed is the Report's Thread.Crashed.
	Crashed bool
	// Frames are the reporter's backtrace, innermost first.
	Frames []StackFrame
}

// StackFrame is one frame of a StackThread: the fields of Frame that
// stacks are counted by.
type StackFrame struct {
	// Address is the absolute instruction address: the PC for frame 0,
	// a return address for callers.
	Address uint64
	// Symbol is the reporter's function name; empty when none.
	Symbol string
	// Inlined marks a frame the reporter added for an inlined function:
	// its address is that of the frame after it.
	Inlined bool
}

// ReadIPSStacks reads an .ips report's stacks into st, in one pass over
// data and without the frames' other fields, for programs that count
// stacks by the thousand. It reports false, st then being of no use,
// when the report is not one that ParseIPS reads in its one pass
// (ipsfast.go) without a problem: ParseIPS then reads it, and says what
// is wrong. What it reads is what ParseIPS gives (TestReadIPSStacks).
func ReadIPSStacks(data []byte, st *Stacks) bool {
	st.Images, st.Threads = st.Images[:0], st.Threads[:0]
	st.frames, st.imageIndex = st.frames[:0], st.imageIndex[:0]
	if checkSize(FormatIPS, data) != nil {
		return false
	}
	r, body, _, err := ipsMetadata(data)
	if err != nil || len(body) == 0 || body[0] != '{' {
		return false
	}
	b := ipsBody{stacks: st, threads: st.threads[:0]}
	fast := b.readFast(body)
	st.threads = b.threads[:0]
	if !fast {
		return false
	}
	// The rest of the report is built as ParseIPS builds it, the
	// threads without their frames, so that every problem it would
	// report is found.
	p := &problems{format: FormatIPS}
	b.build(r, p)
	if len(p.errs) > 0 {
		return false
	}
	st.Path, st.Version, st.OS, st.Hardware, st.Time = r.Path, r.Version, r.OS, r.Hardware, r.Time
	st.Images = r.Images
	for k, im := range st.imageIndex {
		st.frames[k].Address += r.Images[im].LoadAddress
	}
	for i, t := range b.threads {
		st.Threads = append(st.Threads, StackThread{Name: r.Threads[i].Name, Crashed: r.Threads[i].Crashed, Frames: st.frames[t.stackFrames.start:t.stackFrames.end:t.stackFrames.end]})
	}
	return true
}
