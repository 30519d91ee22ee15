// Package reportfield reads the header fields Apple's text reports share:
// crash reports (package crashreport) and sample and spindump reports
// (package hangreport) write a process as "Name [pid]" alike.
package reportfield

import (
	"strconv"
	"strings"
)

// NameAndPID splits a process field, "CrashingTest [1710]", into its name
// and PID. A value without a bracketed number after the name is all name,
// with PID 0.
func NameAndPID(s string) (name string, pid int) {
	i := strings.LastIndexByte(s, '[')
	if i < 0 || !strings.HasSuffix(s, "]") {
		return s, 0
	}
	pid, err := strconv.Atoi(s[i+1 : len(s)-1])
	if err != nil {
		return s, 0
	}
	return strings.TrimSpace(s[:i]), pid
}
