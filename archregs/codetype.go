package archregs

// crashCodeTypes are the names Apple's text crash reports give a CPU type
// on their "Code Type:" line (PLCrashReporter's text formatter writes the
// same), by Mach-O CPU type.
var crashCodeTypes = map[uint32]string{
	CPUTypeARM64:  "ARM-64",
	CPUTypeARM:    "ARM",
	CPUTypeX86_64: "X86-64",
	CPUTypeX86:    "X86",
}

// CrashCodeType returns the name an Apple text crash report gives the
// architecture on its "Code Type:" line: "ARM-64" for arm64 and arm64e,
// "ARM", "X86-64", "X86"; the architecture's name for any other.
func (a *Arch) CrashCodeType() string {
	if n, ok := crashCodeTypes[a.CPUType]; ok {
		return n
	}
	return a.Name
}
