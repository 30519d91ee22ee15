// Package hostile holds what the project's hostile-input tests share: an
// allocation budget that every parser must keep on any input, a check that
// a call returns at all, and builders of small hostile files made in
// memory, deterministically, so that nothing big is committed.
//
// # The budget
//
// Whatever the input, reading it may allocate at most 64 bytes per input
// byte plus 64 MiB (MaxAlloc). Budget runs a function and fails the test
// when it allocated more, measured as the growth of
// runtime.MemStats.TotalAlloc. TotalAlloc counts the whole process, so a
// budgeted test must not run in parallel with others (no t.Parallel), and
// fuzz targets measure one input at a time, as the fuzzer runs them.
//
// # Adding a case
//
// The corpus is Cases (cases.go). To add a class of hostile input (for
// example a DWARF decompression bomb, or two sections aliasing the same
// bytes):
//
//  1. Write a builder returning the file's bytes, here or beside the
//     parser it attacks; build at a size where the bug shows (a few hundred
//     KiB to a few MiB), never by reading files from disk.
//  2. Append a Case naming the class, its Kind (which decides the entry
//     point the runner in hostile_test.go calls: a Mach-O is opened and
//     every table and its DWARF is read; a snapshot is parsed), and what
//     must come back: WantErr for a clear error (a substring of it), or
//     Check for a partial result.
//  3. Run go test ./internal/hostile/ and go test ./cmd/stackimage/, which
//     run every case through the library and through the command. Check
//     that the new case fails before the fix: that is what makes it a test.
//
// Nothing here imports the project's parsers, so that their own tests and
// fuzz targets can use Budget without an import cycle.
package hostile

import (
	"runtime"
	"testing"
	"time"
)

// Budget figures: MaxAlloc(n) = AllocPerByte × n + AllocSlack.
const (
	AllocPerByte = 64
	AllocSlack   = 64 << 20
)

// Every case of the corpus (Cases), through each entry point the runners
// call, also stays within CaseTime and CaseAlloc bytes allocated, whatever
// its size: the cases are small, and a case near these figures is an
// amplification still to be fixed.
const (
	CaseTime  = 5 * time.Second
	CaseAlloc = 256 << 20
)

// CaseBudget runs fn, one entry point on a case of inputSize bytes, and
// fails tb when it allocated more than the lesser of MaxAlloc(inputSize)
// and CaseAlloc, or took more than CaseTime. It returns the bytes
// allocated and the time taken, for a test's log.
func CaseBudget(tb testing.TB, inputSize int64, fn func()) (uint64, time.Duration) {
	tb.Helper()
	start := time.Now()
	got := Allocated(fn)
	took := time.Since(start)
	if limit := min(MaxAlloc(inputSize), CaseAlloc); got > limit {
		tb.Errorf("allocated %d bytes reading %d bytes of input; the budget is %d (the lesser of %d × input + %d and %d)",
			got, inputSize, limit, AllocPerByte, AllocSlack, CaseAlloc)
	}
	if limit := CaseTime * raceSlowdown; took > limit {
		tb.Errorf("took %v reading %d bytes of input; a case has %v", took.Round(time.Millisecond), inputSize, limit)
	}
	return got, took
}

// MaxAlloc returns the most a parser may allocate reading n bytes of input.
func MaxAlloc(n int64) uint64 {
	if n < 0 {
		n = 0
	}
	return AllocPerByte*uint64(n) + AllocSlack
}

// Allocated runs fn and returns the bytes allocated meanwhile (the growth
// of runtime.MemStats.TotalAlloc, which counts every goroutine).
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Budget runs fn, which reads inputSize bytes of input, and fails tb when
// it allocated more than MaxAlloc(inputSize). It returns the bytes
// allocated, for a test's log.
func Budget(tb testing.TB, inputSize int64, fn func()) uint64 {
	tb.Helper()
	got := Allocated(fn)
	if limit := MaxAlloc(inputSize); got > limit {
		tb.Errorf("allocated %d bytes reading %d bytes of input; the budget is %d (%d × input + %d)",
			got, inputSize, limit, AllocPerByte, AllocSlack)
	}
	return got
}

// Returns runs fn and fails tb when it has not returned after d: a call on
// hostile input must end, and a test that would otherwise hang says which
// call did. fn keeps running in its goroutine after a failure; cleanup, when
// not nil, is called then to unblock it (for example by opening the other
// end of a FIFO). d is a generous bound for "never returns", not a speed
// target: speed belongs in benchmarks.
func Returns(tb testing.TB, d time.Duration, cleanup func(), fn func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		tb.Errorf("still running after %v: the call does not end on this input", d)
		if cleanup != nil {
			cleanup()
			<-done
		}
	}
}
