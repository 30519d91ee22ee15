package debuginfo

// For the external tests (package debuginfo_test).

// ReadGolden is readGolden: llvm-symbolizer's frames per address.
var ReadGolden = readGolden
