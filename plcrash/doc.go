// Package plcrash reads PLCrashReporter's binary crash reports (.plcrash):
// the seven bytes "plcrash", a format version byte (1), then a
// plcrash.CrashReport protocol buffer as PLCrashReporter's
// Source/PLCrashReport.proto defines it. PLCrashReporter is the in-process
// crash reporter under several iOS and macOS crash services' SDKs.
//
// Parse decodes the report with google.golang.org/protobuf's protowire
// against this package's own table of the schema's field numbers (no
// generated code): system, application, process and machine info, the
// threads with their frames and registers, the binary images with their
// UUIDs and Mach-O CPU types, the uncaught exception with its own
// backtrace, the signal and the Mach exception. Report.Dump turns it into
// the common dump model.
//
// Every length, count and nesting the input declares is checked before it
// is used: a damaged or hostile report gives a *FormatError naming the
// field and its byte offset in the file, and what was read before the
// damage is kept.
package plcrash
