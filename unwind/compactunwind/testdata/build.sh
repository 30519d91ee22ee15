#!/bin/sh
# Builds the fixtures from shapes.c with clang-16 and ld64.lld-16 (LLVM 16),
# and the per-instruction oracle with llvm-dwarfdump-16 and llvm-objdump-16.
# For each architecture and frame-pointer choice NAME:
#   NAME.o        object file: __LD,__compact_unwind and a full __eh_frame
#   NAME.sync.o   arm64 only: the same code with synchronous unwind tables,
#                 whose __compact_unwind has compact encodings (linked)
#   NAME          linked image (not i386: ld64.lld-16 has no i386; not
#                 armv7k: it cannot link the global variable's relocations):
#                 __TEXT,__unwind_info (FDEs dropped where compact suffices)
#   NAME.eh_frame.txt    llvm-dwarfdump-16 --eh-frame NAME.o
#   NAME.unwind_info.txt llvm-objdump-16 --unwind-info NAME
#   NAME.disasm.txt      llvm-objdump-16 -d --no-show-raw-insn --mattr=+vfp3 NAME.o
# armv7k (watchOS) is the only 32-bit ARM target for which clang writes
# compact unwind and CFI: armv7k-fp is ARM code (-marm), armv7k-thumb
# Thumb-2.
set -eu
cd "$(dirname "$0")"
flags="-O1 -fasynchronous-unwind-tables -ffreestanding -nostdlib -fno-stack-protector -fno-builtin -c"
build() { # name target link-arch platform version fp-flag
	name=$1
	clang-16 -target "$2" $flags "$6" -o "$name.o" shapes.c
	llvm-dwarfdump-16 --eh-frame "$name.o" >"$name.eh_frame.txt"
	if [ "$3" = arm64 ]; then
		# With asynchronous tables clang describes every arm64 function
		# by DWARF (epilogue CFI has no compact form). Synchronous tables
		# give compact encodings for the same code: link those.
		clang-16 -target "$2" $flags -fno-asynchronous-unwind-tables -funwind-tables "$6" -o "$name.sync.o" shapes.c
		llvm-objdump-16 -d --no-show-raw-insn "$name.o" | tail -n +3 >"$name.tmp1"
		llvm-objdump-16 -d --no-show-raw-insn "$name.sync.o" | tail -n +3 >"$name.tmp2"
		cmp "$name.tmp1" "$name.tmp2"
		rm "$name.tmp1" "$name.tmp2"
		ld64.lld-16 -arch "$3" -platform_version "$4" "$5" "$5" -e _start -o "$name" "$name.sync.o"
		llvm-objdump-16 --unwind-info "$name" >"$name.unwind_info.txt"
	elif [ "$3" != none ]; then
		ld64.lld-16 -arch "$3" -platform_version "$4" "$5" "$5" -e _start -o "$name" "$name.o"
		llvm-objdump-16 --unwind-info "$name" >"$name.unwind_info.txt"
	fi
}
build x86_64-fp x86_64-apple-macos10.15 x86_64 macos 10.15 -fno-omit-frame-pointer
build x86_64-nofp x86_64-apple-macos10.15 x86_64 macos 10.15 -fomit-frame-pointer
build arm64-fp arm64-apple-macos11 arm64 macos 11.0 -fno-omit-frame-pointer
build arm64-nofp arm64-apple-macos11 arm64 macos 11.0 -fomit-frame-pointer
build i386-fp i386-apple-macos10.12 none macos 10.12 -fno-omit-frame-pointer
build i386-nofp i386-apple-macos10.12 none macos 10.12 -fomit-frame-pointer
build armv7k-fp armv7k-apple-watchos5 none watchos 5.0 -marm
build armv7k-thumb armv7k-apple-watchos5 none watchos 5.0 -mthumb
for o in *-fp.o *-nofp.o *-thumb.o; do
	case $o in
	armv7k-thumb*) mattr="--triple=thumbv7k-apple-watchos --mattr=+vfp3" ;;
	armv7*) mattr=--mattr=+vfp3 ;;
	*) mattr= ;;
	esac
	llvm-objdump-16 -d --no-show-raw-insn $mattr "$o" >"${o%.o}.disasm.txt"
done
