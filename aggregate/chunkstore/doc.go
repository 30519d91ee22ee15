// Package chunkstore keeps many stacks in an object store as chunks of
// counts (aggregate.Chunk), so that several instances of a service take
// uploads and answer queries from the same store and nothing
// acknowledged lives in one process's memory.
//
// Chunks.Write stores one chunk per upload, under the hour it was
// accepted and named after the span of its stacks' timestamps. Merge
// lists the chunks a query may need, reads them on every core (keeping
// lately decoded ones in a byte-bounded cache) and merges them into an
// aggregate.Aggregator under the query's filter; the caller symbolicates
// the result once.
//
// Left alone, a query would decode every upload of every hour. Two kinds
// of merged chunk cut that down, both written in the background after an
// upload or a query (one of each at a time per Chunks; Wait waits for
// them, Close waits and starts no more):
//
//   - the chunks of an hour that has ended are compacted into one final
//     chunk, written before the old ones are deleted and naming them
//     (Chunk.Replaces), so that no stack is lost or counted twice if an
//     instance stops in between (compact.go);
//   - until then, the hour's uploads are merged in part as they land,
//     into partial chunks that a query reads in their stead and that
//     delete nothing (partial.go).
//
// The store is reached through Store, a few methods of an object store
// (a directory, an S3 bucket); a missing key is lookup.ErrNotFound.
package chunkstore
