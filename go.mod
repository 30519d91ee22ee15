module github.com/stackimage/stackimage

go 1.24

require (
	github.com/blacktop/go-macho v1.1.296
	github.com/google/go-cmp v0.7.0
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
)

require github.com/blacktop/go-dwarf v1.1.0 // indirect
