// Package remote finds symbol files in an object store (symstore/objstore:
// a directory, an HTTP symbol server, an S3 bucket) at the paths one of
// symbolicator's layouts gives a UUID ("unified", "native", "breakpad",
// "ssqp", "debuginfod"). A Source is a symstore.Source: downloads are
// bounded in size and time and land in a temporary directory, and a
// directory's files are read in place.
package remote
