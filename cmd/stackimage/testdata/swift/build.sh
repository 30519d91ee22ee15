#!/bin/sh
# Builds swift-names (arm64 macOS executable) from names.c with clang-16 and
# ld64.lld-16, as fixtures/build.sh builds the emulation fixtures.
set -eu
cd "$(dirname "$0")"
clang-16 -target arm64-apple-macos11 -O1 -fno-omit-frame-pointer -ffreestanding -nostdlib -fno-stack-protector -c names.c -o names.o
ld64.lld-16 -arch arm64 -platform_version macos 11.0 11.0 -e _start -o swift-names names.o
rm names.o
