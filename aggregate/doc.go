// Package aggregate turns many captured stacks into the few call paths
// that matter: identical stacks are counted once, every unique (image,
// address) is symbolicated once through the batch lookups, stacks are
// grouped by a fingerprint of their top in-app functions, and the whole
// is written as a pprof profile, folded stacks, a speedscope file or a
// JSON list of groups.
//
// Stacks come in the stream format (docs/aggregate.md, schema in
// docs/aggregate.schema.json): newline-delimited JSON, one record per
// captured stack, gzip-compressed or not. Reader reads it (ReadAll on
// every core); any other input the library's door (package open) reads
// becomes records through DumpRecords, and a sample, spindump or
// microstackshot report's call graphs through HangRecords. Loader does
// all of this for files, directories and archives. A crash counts its
// crashed thread alone, a sampled process every thread (Threads,
// dump.Dump.Counting).
//
//	agg := aggregate.New()
//	r, err := aggregate.NewReader(file)
//	...
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil { // a *RecordError: the record is skipped
//			continue
//		}
//		agg.Add(rec)
//	}
//	res, err := agg.Symbolicate(ctx, symbols) // a *symstore.Symbols
//	groups := res.Groups(aggregate.GroupOptions{})
//	prof := res.Profile() // github.com/google/pprof/profile
//
// A Chunk is an aggregator's counts as data, to store and Merge later:
// package aggregate/chunkstore keeps one per upload in an object store.
//
// Grouping follows Sentry's native stack traces: only in-app frames count
// when there are any, functions not addresses, recursion collapsed.
package aggregate
