#!/bin/sh
# Builds debuginfo's DWARF fixtures from inl.c: one linked arm64 executable
# and its dSYM for DWARF 2 and 4 at -O0 (always_inline still inlines), and an
# -O2 DWARF 5 object; and from rnglist.c an -O2 DWARF 5 object whose
# address ranges are range lists by index (DW_FORM_rnglistx). Needs clang-16, ld64.lld-16 and
# dsymutil-16 (apt-get install clang-16 lld-16 llvm-16); tests never run it.
# Then regenerate the golden files: go test ./debuginfo/ -run Golden -update
set -eu
cd "$(dirname "$0")"
out=../fixtures
mkdir -p "$out"
for v in 2 4; do
	clang-16 -target arm64-apple-macos11 -O0 -gdwarf-$v -fno-omit-frame-pointer -fdebug-prefix-map="$(pwd)"=/src \
		-ffreestanding -nostdlib -fno-stack-protector -fno-builtin \
		-c inl.c -o "/tmp/inl-dwarf$v.o"
	ld64.lld-16 -arch arm64 -platform_version macos 11.0 11.0 -e __start \
		-o "/tmp/inl-dwarf$v" "/tmp/inl-dwarf$v.o"
	dsymutil-16 -o "/tmp/inl-dwarf$v.dSYM" "/tmp/inl-dwarf$v"
	cp "/tmp/inl-dwarf$v.dSYM/Contents/Resources/DWARF/inl-dwarf$v" "$out/inl-dwarf$v.dwarf"
done
# dsymutil 16 drops DWARF 5's debug_line_str and debug_addr, so the DWARF 5
# fixture is the object file itself (MH_OBJECT, __text at address 0).
clang-16 -target arm64-apple-macos11 -O2 -gdwarf-5 -fno-omit-frame-pointer -fdebug-prefix-map="$(pwd)"=/src \
	-ffreestanding -nostdlib -fno-stack-protector -fno-builtin \
	-c inl.c -o "$out/inl-dwarf5.o"
# rnglist.c: inlined subroutines and the unit itself with DW_AT_ranges in
# DW_FORM_rnglistx (check: llvm-dwarfdump-16 --debug-info shows "indexed
# (0x..) rangelist"). dsymutil 16 skips a unit with debug_rnglists ("not
# currently supported"), so this too is the object file; __text_cold follows
# __text in its address space.
clang-16 -target arm64-apple-macos11 -O2 -gdwarf-5 -fno-omit-frame-pointer -fdebug-prefix-map="$(pwd)"=/src \
	-ffreestanding -nostdlib -fno-stack-protector -fno-builtin \
	-c rnglist.c -o "$out/rnglist-dwarf5.o"
