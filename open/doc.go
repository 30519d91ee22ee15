// Package open turns any input stackimage reads into the common dump
// model: a stackimage snapshot, an Apple .ips or .crash report, a KSCrash
// report, a macOS sample or spindump report, a macOS or iOS microstackshot
// resource report, a MetricKit diagnostic payload, a minidump, a Mach-O
// core or a PLCrashReporter report (.plcrash).
//
// The format is told from the content alone, never from the name: Formats
// lists the sniffers in the order they are tried, and an input none of
// them accepts is an *UnrecognizedFormatError naming what was tried
// (errors.Is(err, ErrUnrecognizedFormat) holds). This is the shape of
// Go's debug/* packages and of delve's core-file openers.
//
//	in, err := open.File(ctx, "crash.ips")
//	if in == nil {
//		return err // nothing could be read
//	}
//	defer in.Close()
//	// err != nil here means the input was read only in part: in.Dumps
//	// holds what was read.
//	for _, d := range in.Dumps { ... }
//
// ReaderAt opens an input held anywhere (an object store, memory) from an
// io.ReaderAt and its size; Reader reads a stream (standard input, an
// HTTP body) up to the limit of the format its first bytes show. Binary
// dumps (minidumps, cores) are read in place, memory as the walk needs it;
// text and JSON reports are read whole, each within its format's bound.
//
// Most inputs hold one process, so Input.Dumps has one element. A
// spindump or microstackshot report lists many processes: each is a dump
// of its own, the target process first.
// A MetricKit payload (or array of payloads) holds several diagnostics:
// each is a dump of its own.
//
// Package report symbolicates the dumps and writes them out.
package open
