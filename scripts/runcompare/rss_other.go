//go:build !unix

package main

import "os"

// maxRSS is unknown here: the table prints "-".
func maxRSS(*os.ProcessState) int64 { return 0 }
