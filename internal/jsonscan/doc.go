// Package jsonscan holds the byte-level primitives of the project's
// hand-written JSON readers: the stream format's record scanner
// (aggregate) and the .ips one-pass reader (crashreport). Each reader
// reads the shapes it knows by hand and hands every other value to
// encoding/json, so that what it reads is what json.Unmarshal would
// read; the primitives here are the parts they share: skip whitespace,
// expect a byte, read a string without escapes, find where a value ends,
// and decode or validate one value with encoding/json.
//
// A Scanner is a cursor over bytes. Its methods report false when the
// input is not what they read, leaving the cursor where it was, so that
// the caller can try another way (usually encoding/json) from there.
package jsonscan
