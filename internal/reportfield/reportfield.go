// Package reportfield reads the fields Apple's text reports share: crash
// reports (package crashreport) and sample and spindump reports (package
// hangreport) write a process as "Name [pid]" alike, and a Binary Images
// line's tail as "NAME ... <UUID> PATH".
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

// ImageTail splits what follows a Binary Images line's address range,
// "+Name (1.0) <UUID> /path", at its bracketed UUID: the description
// before it, the UUID's text and the path after it, trimmed. Without a
// "<...>" the whole tail is the description and ok is false.
func ImageTail(s string) (desc, uuid, path string, ok bool) {
	lt := strings.IndexByte(s, '<')
	if lt < 0 {
		return s, "", "", false
	}
	gt := strings.IndexByte(s[lt:], '>')
	if gt < 0 {
		return s, "", "", false
	}
	return s[:lt], s[lt+1 : lt+gt], strings.TrimSpace(s[lt+gt+1:]), true
}
