// Package benchkit holds what the benchmark drivers under bench/ share:
// a child process's peak memory, random code addresses of a binary, and
// the ratio of two times.
package benchkit
