//go:build !unix

package symbolize

// mapFile maps nothing where there is no mmap: the sections are read.
func mapFile(string) (*mapping, error) { return nil, nil }

func unmap([]byte) {}
