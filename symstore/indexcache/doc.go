// Package indexcache finds, builds and keeps the derived index
// (symindex) of each UUID a service is asked about, from its sources:
// symbol stores read through a layout (symstore/remote) or any other
// symstore.Source.
//
// A Cache keeps the indexes open in memory and on local disk, an LRU
// capped in bytes with the binaries and dSYMs a walk reads kept beside
// them; remembers misses (Config.MissTTL) and failures (Config.FailedTTL)
// so that a UUID no source has is not fetched for every request; builds
// each UUID's index once however many callers ask at the same time
// (single flight), at most Config.MaxFetches at once; and shares complete
// indexes through a store (Config.Shared, under _index/), each with a
// record of the files it was built from (RecordKey), so that an instance
// that finds one there builds nothing, and one whose inputs changed is
// built again. An index built from part of its files (a fetch failed) is
// never shared and expires after FailedTTL.
//
// Get gives a UUID's index with symbolicator's module status; Release
// lets go of it; MachOFiles gives the executable and debug file a walk
// reads; Rebuild builds an index again after an upload; Close closes
// every index. Find gives what one request's dumps need, held until the
// request closes it, as a symstore.Source (Request). The counters are
// the caller's (NewMetrics makes them under their names): the package
// registers nothing.
package indexcache
