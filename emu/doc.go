// Package emu runs Mach-O code for arm64, armv7, x86_64 and i386 under the
// Unicorn CPU emulator, so that the stack walker can be checked against what
// really happened: it loads an image at a chosen slide, sets up the entry
// state the ABI and kernel would, keeps a shadow stack of calls and returns
// from code hooks, and captures snapshots at any instruction boundary.
//
// Everything but this file needs cgo and the Unicorn C library (Debian's
// libunicorn-dev) and is behind the unicorn build tag:
//
//	go test -tags unicorn ./emu/
//
// Without the tag the package is empty, so that the rest of the module
// builds with CGO_ENABLED=0.
package emu
