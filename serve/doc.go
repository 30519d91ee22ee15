// Package serve is stackimage's symbolication service: an http.Handler,
// built from a Config, that answers Sentry's symbolicator API (so that
// crash pipelines can point at it) and the project's own endpoints.
//
//	POST /symbolicate        symbolicator's JSON: modules and stack traces
//	POST /minidump           multipart, field upload_file_minidump
//	POST /applecrashreport   multipart, field apple_crash_report (.crash or .ips)
//	GET  /requests/{id}      an answer that outlived ?timeout=
//	GET  /healthcheck        "ok", without authentication
//	GET  /ready              503 while every request slot is taken (readiness)
//	POST /v1/symbolicate     any input the command reads, as the raw body;
//	                         answered as stackimage symbolicate --format json|text|same prints it
//	PUT  /v1/symbols         a binary, dSYM (zip) or .sym file into the store
//	GET  /buildid/{uuid}/debuginfo|executable   the debuginfod protocol
//	GET  /metrics            Prometheus metrics
//	POST /v1/stacks          stacks (docs/aggregate.md's stream format, a report or a dump) into the aggregates;
//	                         a crash's crashed thread alone, every thread with ?threads=all
//	GET  /v1/groups          the aggregates' top groups, filtered
//	GET  /v1/aggregate       the aggregates as pprof, folded stacks, speedscope or JSON
//	GET  /ui/                top groups and a flame graph in the browser
//
// Symbol files come from sources tried in the configured order: a
// directory (scanned, or read through a layout), an HTTP symbol server or
// an S3 bucket, each with a layout (symbolicator's unified, LLDB's native,
// Breakpad, SSQP, debuginfod). Nothing a request sends becomes a path or a
// URL: files are found by validated UUIDs, and a request may only pick
// among the configured sources by name.
//
// What is served is a derived index per UUID (package symindex), built
// once from the symbol files and kept in a local cache bounded in bytes,
// and in the store's shared cache, so that instances behind one load
// balancer build each index once between them. Concurrent requests for
// one UUID wait for one fetch and one build; misses and failed builds are
// remembered for a configured time.
//
// The package keeps routes, limits, auth and encoding; the work is the
// library's. Dumps and reports are read by its front door (package open)
// and written by its writers (package report), or as symbolicator's
// answer (package symbolicator). Their symbols are found and held per
// request by the index cache (indexcache.Cache.Find) and reach the
// symbolizer as a symstore.Source: each image's index names the frames,
// and the executable and dSYM kept beside it give the walker their unwind
// tables and code, so a dump walks as it does with the files on disk.
// Sources are configured and uploads stored by package symstore/remote.
//
// The aggregates live in the store (Config.Store), one chunk per upload
// (package aggregate's Chunk), merged and symbolicated at query time: no
// instance keeps them in memory, so every instance answers from the same
// ones and nothing acknowledged is lost when one stops. The chunks, their
// compaction and their cache are package aggregate/chunkstore's; the
// service hands it the store (chunks.go) and keeps the routes.
//
// docs/serve.md documents the configuration, the endpoints, deployment
// and the measured figures.
package serve
