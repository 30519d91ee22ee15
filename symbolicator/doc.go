// Package symbolicator speaks Sentry symbolicator's wire format, the
// JSON of POST /symbolicate and of its answer (CompletedSymbolicationResponse).
//
// A request is read by DecodeRequest (by hand, in one pass, for the usual
// shape; by encoding/json otherwise) and made a dump.Dump by NewInput:
// each module an image, each stack trace a thread whose frames are a
// reporter's backtrace, without registers or memory. symbolize names its
// frames as it names any dump's, placing each address in an image by
// internal/addrspan's rule. Answer then writes what symbolize produced,
// for such a request or for a dump read from a file, as symbolicator's
// answer: stack traces, modules with their statuses, features and
// candidates, and the frames with what symstore's frame naming gives
// (columns, symbol sources, inlined functions).
package symbolicator
