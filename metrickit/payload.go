package metrickit

import (
	"github.com/stackimage/stackimage/uuid"
)

// Limits of one input. Nothing a payload declares sizes an allocation;
// these bound what reading it may build.
const (
	// MaxInputSize is the largest input Parse reads. A real payload is a
	// few KiB to a few hundred KiB.
	MaxInputSize = 64 << 20
	// MaxFrames is the most frames kept from one input (all payloads,
	// diagnostics and call stacks together); later frames are left out
	// with a warning.
	MaxFrames = 1 << 18
	// MaxDepth is the deepest subFrames nesting kept; deeper frames are
	// left out with a warning. Apple's own backtraces stop at 512 frames.
	MaxDepth = 2048
	// MaxSampleCount is the largest sampleCount kept as it is; a larger
	// one is taken as this, with a warning, so that weights summed over
	// many diagnostics stay far from overflowing.
	MaxSampleCount = 1 << 40
)

// Shape tells the three JSON documents Parse reads apart.
type Shape string

// The shapes of an input.
const (
	ShapePayload  Shape = "payload"  // one MXDiagnosticPayload
	ShapePayloads Shape = "payloads" // a JSON array of payloads
	ShapeTree     Shape = "tree"     // a bare MXCallStackTree
)

// Kind is a diagnostic's kind, named as its payload's array is without
// "Diagnostics".
type Kind string

// The diagnostics' kinds.
const (
	KindCrash              Kind = "crash"              // crashDiagnostics: MXCrashDiagnostic
	KindHang               Kind = "hang"               // hangDiagnostics: MXHangDiagnostic
	KindCPUException       Kind = "cpuException"       // cpuExceptionDiagnostics: MXCPUExceptionDiagnostic
	KindDiskWriteException Kind = "diskWriteException" // diskWriteExceptionDiagnostics: MXDiskWriteExceptionDiagnostic
	KindAppLaunch          Kind = "appLaunch"          // appLaunchDiagnostics: MXAppLaunchDiagnostic
	// KindCallStackTree is a bare MXCallStackTree: no diagnostic says what
	// its samples were of. It is read as a call tree with sample counts.
	KindCallStackTree Kind = "callStackTree"
)

// kindKeys are the payload's arrays of diagnostics, in the order
// MetricKit's documentation lists them.
var kindKeys = []struct {
	key  string
	kind Kind
}{
	{"crashDiagnostics", KindCrash},
	{"hangDiagnostics", KindHang},
	{"cpuExceptionDiagnostics", KindCPUException},
	{"diskWriteExceptionDiagnostics", KindDiskWriteException},
	{"appLaunchDiagnostics", KindAppLaunch},
}

// Input is a parsed MetricKit input.
type Input struct {
	Shape Shape
	// Payloads are the input's payloads, in order: one for ShapePayload
	// and ShapeTree (a payload holding the one tree, with no timestamps).
	Payloads []Payload
	// Binaries are the images the frames name, each (UUID, name) once.
	Binaries []Binary
	// Warnings lists what was left out or taken as something else, the
	// rest being read.
	Warnings []string
}

// Payload is one MXDiagnosticPayload.
type Payload struct {
	// TimeStampBegin and TimeStampEnd are as the payload wrote them
	// ("2022-09-28 10:59:30"); empty when absent.
	TimeStampBegin, TimeStampEnd string
	// Diagnostics are the payload's diagnostics: the crash diagnostics
	// first, then hangs, CPU exceptions, disk-write exceptions and app
	// launches, each kind in its array's order.
	Diagnostics []Diagnostic
}

// Diagnostic is one MXDiagnostic with its call stack tree.
type Diagnostic struct {
	Kind Kind
	// Path is where the diagnostic is in the input, as a JSON path
	// ("[1].hangDiagnostics[0]"); empty for a bare tree.
	Path string
	// Version is the diagnostic's "version" ("1.0.0").
	Version string
	// Metadata are the diagnosticMetaData fields in the input's order,
	// each value as text: a string as it is, any other JSON value as
	// written ("exceptionType": 1 gives "1").
	Metadata []Field
	Tree     Tree
}

// Field is one metadata field.
type Field struct {
	Key, Value string
}

// MetadataValue returns the value of the metadata field key, "" when the
// diagnostic has none.
func (d *Diagnostic) MetadataValue(key string) string {
	for _, f := range d.Metadata {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// Tree is one MXCallStackTree.
type Tree struct {
	// PerThread is callStackPerThread: each call stack is one thread's.
	// When false the tree has one call stack merging every thread's
	// samples.
	PerThread bool
	Stacks    []Stack
}

// Stack is one call stack of a tree.
type Stack struct {
	// ThreadAttributed marks the thread the diagnostic is about: a
	// crash's crashed thread, a hang's main thread.
	ThreadAttributed bool
	// Frames are the stack's frames in the input's order, each before its
	// subFrames (pre-order); a frame's Parent indexes this slice, -1 for
	// a root frame (an outermost one).
	Frames []Frame
}

// Frame is one frame of a call stack.
type Frame struct {
	// Binary indexes Input.Binaries; -1 when the frame names neither a
	// binaryUUID nor a binaryName.
	Binary int32
	// Parent is the index in Stack.Frames of the frame whose subFrames
	// hold this one; -1 for a root.
	Parent int32
	// Offset is offsetIntoBinaryTextSegment, as written: the offset of
	// Address from the image's load address, or on iOS 14 and 15 crash
	// diagnostics the load address itself (Dumps tells them apart).
	Offset uint64
	// Address is the frame's absolute address (a return address for a
	// frame with subFrames).
	Address uint64
	// SampleCount is how many samples had this frame on the stack.
	SampleCount uint64
	// Has says which of the fields above the frame gave.
	Has Has
}

// Has is a set of the frame fields given.
type Has uint8

// The fields a frame may give.
const (
	HasOffset Has = 1 << iota
	HasAddress
	HasSampleCount
)

// Binary is an image named by frames.
type Binary struct {
	UUID uuid.UUID // zero when the frames give no binaryUUID
	Name string    // binaryName; empty when not given
}
