// Package arminsn decodes the few arm64 and armv7 instruction shapes that
// both the stack walker (package walker, which reads them to tell frame 0's
// state and the call before a return address) and compact unwind's
// prologue decoder (package unwind/compactunwind, which computes a row
// from them) read: one copy of each mask, in the Arm ARM's terms.
//
// Functions take the instruction word (arm64, ARM) or its two halfwords
// (Thumb-2) as read little-endian, and never fail: a shape either matches
// or does not.
package arminsn
