//go:build !unix

package main

import "os"

// peakRSS is unknown here (0): the memory columns need a Unix rusage.
func peakRSS(*os.ProcessState) int64 { return 0 }

// selfPeakRSS is unknown here (0).
func selfPeakRSS() int64 { return 0 }
