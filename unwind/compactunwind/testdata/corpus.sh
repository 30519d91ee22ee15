#!/bin/sh
# Writes corpus/NAME.unwind_info.txt, llvm-objdump-16 --unwind-info (the
# lines after the file name) of each real-world corpus file that
# TestCorpusUnwindInfo reads: the list below, thin Mach-O images linked by
# Apple's ld64. The corpus (CORPUS, by default ../../../../shared/corpus
# from here) is not copied.
set -eu
cd "$(dirname "$0")"
corpus=${CORPUS:-../../../../shared/corpus}
mkdir -p corpus
grep -v '^#' corpus.list | while read -r f; do
	llvm-objdump-16 --unwind-info "$corpus/$f" | tail -n +3 >"corpus/$(basename "$f").unwind_info.txt"
done
