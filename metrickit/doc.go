// Package metrickit reads the diagnostics Apple's MetricKit hands an app:
// an MXDiagnosticPayload as its jsonRepresentation() writes it, a JSON
// array of such payloads (what didReceive(_:) passes), or a bare
// MXCallStackTree. See docs/metrickit.md for every field and how it is
// read.
//
// Parse reads the JSON by hand, one pass, so that an error names the
// field it is about by its JSON path
// ("hangDiagnostics[0].callStackTree.callStacks[2].callStackRootFrames[0].subFrames[1].address")
// and so that nothing a payload declares sizes an allocation: frames are
// counted as they are read (at most MaxFrames in one input) and nested at
// most MaxDepth deep. A malformed payload still yields what was read
// before the damage, together with the error.
//
// Each diagnostic becomes one dump.Dump (Input.Dumps): a crash
// diagnostic is a crash report whose call stacks are its threads, the
// thread-attributed one crashed; a hang, CPU exception, disk-write
// exception or app-launch diagnostic is a call tree with sample counts,
// as a sample report is. Parsing is pure: nothing is symbolized or read
// from disk.
package metrickit
