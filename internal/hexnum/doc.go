// Package hexnum reads hexadecimal numbers from text without allocating:
// the one reader behind the addresses of symbolicator's requests, atos's
// batch input and Breakpad .sym records, where a number is read for
// every frame or every line.
package hexnum
