// Package snapshot reads and writes stackimage's captured-dump format: the
// registers, stack memory and loaded images of one or more threads, as JSON
// (format "stackimage.snapshot/v1", documented in docs/snapshot.md).
package snapshot

import (
	"fmt"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
)

// FormatV1 is the format string of version 1.
const FormatV1 = "stackimage.snapshot/v1"

// Snapshot is a parsed, validated dump.
type Snapshot struct {
	Arch    *archregs.Arch
	Images  []Image
	Threads []Thread
	Memory  *Regions
}

// Image is one loaded image.
type Image struct {
	Name        string
	UUID        image.UUID
	LoadAddress uint64
	Size        uint64 // 0 when not given
}

// Thread is one thread's captured state.
type Thread struct {
	ID      uint64
	Name    string
	Crashed bool
	// Registers holds the decoded registers, from thread_state or registers.
	Registers *archregs.Registers
	// StackLow and StackHigh bound the stack, [low, high); zero when unknown.
	StackLow, StackHigh uint64
}

// Region is one captured block of memory.
type Region struct {
	Address uint64
	Data    []byte
}

// Regions is the captured memory, sorted by address and non-overlapping. It
// satisfies walker.Memory.
type Regions struct {
	regions []Region
}

// NewRegions sorts and checks regions; overlapping regions are an error.
func NewRegions(regions []Region) (*Regions, error) {
	return nil, fmt.Errorf("snapshot: unimplemented")
}

// ReadMemory reads from the captured regions; bytes outside them are an
// error after the bytes that could be read.
func (r *Regions) ReadMemory(p []byte, addr uint64) (int, error) {
	return 0, fmt.Errorf("unimplemented")
}

// All returns the regions in address order.
func (r *Regions) All() []Region { return r.regions }

// Parse reads and validates a snapshot. Errors name the field
// ("threads[0].thread_state.data: ...").
func Parse(data []byte) (*Snapshot, error) { return nil, fmt.Errorf("snapshot: unimplemented") }

// Marshal writes a snapshot as indented JSON. Threads' registers are written
// as thread_state in the architecture's native flavor.
func Marshal(s *Snapshot) ([]byte, error) { return nil, fmt.Errorf("snapshot: unimplemented") }
