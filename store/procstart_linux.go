//go:build linux

package store

import (
	"os"
	"strconv"
	"strings"
)

// processStart returns a marker that differs between two processes that had the same
// pid at different times: the kernel's boot id and the process's start time. zombie
// reports a process that has exited but not been reaped (it still answers kill(pid, 0)).
func processStart(pid int) (marker string, zombie bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	state, start, ok := parseProcStat(stat)
	if !ok {
		return "", false
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(boot)) + "/" + start, state == 'Z'
}
