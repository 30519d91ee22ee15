package image

import _ "github.com/blacktop/go-macho" // the Mach-O reader this package wraps
