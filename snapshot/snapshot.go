// Package snapshot reads and writes stackimage's captured-dump format: the
// registers, stack memory and loaded images of one or more threads, as JSON
// (format "stackimage.snapshot/v1", documented in docs/snapshot.md).
//
// Parse validates strictly: unknown fields, bad hex or base64, overlapping
// memory and absurd sizes are errors that name the field
// ("threads[1].thread_state.data: ..."). The captured memory becomes a
// *Regions, which the stack walker reads through its Memory interface.
package snapshot

import (
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

// FormatV1 is the format string of version 1.
const FormatV1 = "stackimage.snapshot/v1"

// formatPrefix is what every version's format string starts with.
const formatPrefix = "stackimage.snapshot/"

// Limits on what Parse accepts. They keep a hostile or corrupt document
// from exhausting memory: a snapshot holds stacks (a few MiB per thread),
// not a whole address space.
const (
	// MaxMemorySize bounds the total decoded bytes of all memory regions.
	MaxMemorySize = 1 << 30
	// MaxInputSize bounds the JSON document: base64 makes MaxMemorySize
	// bytes of memory 4/3 as large, plus room for the rest.
	MaxInputSize = MaxMemorySize/3*4 + 64<<20
	// MaxImages, MaxThreads and MaxRegions bound the array lengths.
	MaxImages  = 1 << 16
	MaxThreads = 1 << 16
	MaxRegions = 1 << 20
	// maxStateData bounds a thread_state's base64 data; the largest flavor
	// is ARM_UNIFIED_THREAD_STATE at 280 bytes.
	maxStateData = 4096
)

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
	UUID        uuid.UUID
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
