// Package objstore reads and writes objects by relative key in a
// directory (Dir), on an HTTP server (HTTP, read only) or in an
// S3-compatible bucket (S3), behind one interface, Store.
//
// A key is a clean relative slash path (ValidKey); a missing key is
// lookup.ErrNotFound, matched with errors.Is. Writes may ask that the
// first writer win (Put's onlyIfAbsent, ErrExists).
//
// It is what the symbol sources of symstore/remote read through, what the
// service's derived-index cache (symstore/indexcache) shares indexes in,
// and what the service's aggregate chunks are stored in.
package objstore
