package main

import (
	"fmt"

	"github.com/stackimage/stackimage/report"
)

// The JSON output's types, as the tests decode it.
type (
	jsonReport  = report.JSON
	jsonThread  = report.JSONThread
	jsonFrame   = report.JSONFrame
	jsonProcess = report.JSONProcess
)

func hex(v uint64) string { return fmt.Sprintf("%#x", v) }
