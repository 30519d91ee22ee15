// Package symtab finds the nearest symbol for an address in a Mach-O image,
// fast on tables of millions of entries, with fallbacks for stripped images.
package symtab

import (
	"fmt"

	"github.com/stackimage/stackimage/image"
)

// Source says which data answered a lookup.
type Source int

const (
	SourceSymtab         Source = iota // LC_SYMTAB
	SourceExports                      // the export trie
	SourceFunctionStarts               // LC_FUNCTION_STARTS: a boundary, no name
)

// Symbol is the answer to a lookup.
type Symbol struct {
	// Name is the symbol's name with C's leading underscore removed;
	// for a function known only by its start, "func_<hex address>".
	Name string
	// RawName is the name as the table holds it.
	RawName string
	Addr    uint64 // unslid start of the symbol
	Offset  uint64 // the looked-up address minus Addr
	Source  Source
}

// Table is an image's symbols sorted by address.
type Table struct{}

// New indexes the image's symbols.
func New(im *image.Image) (*Table, error) { return nil, fmt.Errorf("symtab: unimplemented") }

// Lookup returns the closest symbol at or below the unslid address, never
// across a section boundary or past the end of its section.
func (t *Table) Lookup(addr uint64) (Symbol, bool) { return Symbol{}, false }

// Len returns the number of symbols indexed.
func (t *Table) Len() int { return 0 }

func (s Source) String() string { return "" }
