//go:build !unix

package mmapfile

func makeFIFO(string) (string, bool) { return "", false }
