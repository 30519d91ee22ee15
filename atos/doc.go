// Package atos answers addresses in one binary as Apple's atos(1) prints
// them: "main (in App) + 16", "main (in App) (main.c:28)" with debug
// information, inlined functions first with Options.Inlines, the address
// itself where nothing covers it.
//
// Open takes what atos -o takes (a Mach-O binary, a dSYM's DWARF file, an
// .app or .dSYM bundle) and also a symindex file or a Breakpad .sym file.
// An Answerer appends answers to a caller's buffer, and Answer reads
// whitespace-separated addresses from a stream and writes answers in
// large pieces, handing them out whenever the next read may block, so that
// a pipe can be used interactively and a batch of 100,000 addresses costs
// few writes. A service answering atos-style requests uses the same calls
// as the command.
package atos
