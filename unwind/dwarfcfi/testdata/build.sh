#!/bin/sh
# Builds the test objects from progs.c and records llvm-dwarfdump's
# interpretation of their call frame information, the oracle the tests
# compare against. Tools: clang-16, llvm-dwarfdump-16 (LLVM 16, Debian
# bookworm packages). Run from this directory.
set -eu
common="-ffreestanding -nostdlib -fno-stack-protector -fno-builtin -c"
eh="-fasynchronous-unwind-tables"
dbg="-g -fno-asynchronous-unwind-tables -fno-unwind-tables"
build() { # name target flags...
	name=$1 target=$2
	shift 2
	clang-16 -target $target $common "$@" progs.c -o $name.o
}
build x86_64_eh x86_64-apple-macos10.15 -O2 -fomit-frame-pointer $eh
build x86_64_eh_O1 x86_64-apple-macos10.15 -O1 -fomit-frame-pointer $eh
build arm64_eh arm64-apple-macos11 -O2 -fomit-frame-pointer $eh
# Return-address signing: DW_CFA_AARCH64_negate_ra_state.
build arm64_eh_pac arm64-apple-macos11 -O2 -fomit-frame-pointer -mbranch-protection=pac-ret $eh
# Darwin's armv7 uses SjLj exceptions and emits no CFI unless asked.
build armv7_eh armv7-apple-ios9 -O2 -marm -fdwarf-exceptions $eh
build i386_eh i386-apple-macos10.12 -O2 -fomit-frame-pointer $eh
# -g without unwind tables writes __DWARF,__debug_frame on x86; arm64
# writes none.
build x86_64_debug x86_64-apple-macos10.15 -O2 -fomit-frame-pointer $dbg
build i386_debug i386-apple-macos10.12 -O2 -fomit-frame-pointer $dbg
# A linked image, whose FDEs have their final addresses: unrelocated arm64
# objects leave every pc_begin at the same address.
clang-16 -target arm64-apple-macos11 -O2 $common -fasynchronous-unwind-tables stubs.c -o stubs.o
ld64.lld-16 -arch arm64 -platform_version macos 11.0 11.0 -e _start -o arm64_linked arm64_eh.o stubs.o
rm stubs.o
llvm-dwarfdump-16 --eh-frame arm64_linked > arm64_linked.eh_frame.txt
# A dSYM keeps __debug_frame, with the linked addresses: build an x86_64
# image from -g objects without unwind tables and keep the dSYM's DWARF file.
clang-16 -target x86_64-apple-macos10.15 -O2 $common $dbg stubs.c -o stubs.o
ld64.lld-16 -arch x86_64 -platform_version macos 10.15 10.15 -e _start -o x86_64_dsym.bin x86_64_debug.o stubs.o
dsymutil-16 x86_64_dsym.bin -o x86_64_dsym.dSYM
mv x86_64_dsym.dSYM/Contents/Resources/DWARF/x86_64_dsym.bin x86_64_dsym.dwarf
rm -r stubs.o x86_64_dsym.bin x86_64_dsym.dSYM
llvm-dwarfdump-16 --debug-frame x86_64_dsym.dwarf > x86_64_dsym.debug_frame.txt
for o in *_eh.o *_eh_*.o; do
	llvm-dwarfdump-16 --eh-frame $o > ${o%.o}.eh_frame.txt
done
for o in *_debug.o; do
	llvm-dwarfdump-16 --debug-frame $o > ${o%.o}.debug_frame.txt
done
