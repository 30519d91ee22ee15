//go:build !(darwin || freebsd || linux || netbsd || openbsd)

package aggregate

// releaseMapped does nothing here: the pages read stay resident until
// the file is unmapped.
func releaseMapped(mapped []byte, from, to int) {}
