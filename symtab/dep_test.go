package symtab

import _ "github.com/google/go-cmp/cmp"
