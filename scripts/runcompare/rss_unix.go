//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is the child's peak resident set size in bytes: ru_maxrss, in
// bytes on Darwin and in KiB elsewhere.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
