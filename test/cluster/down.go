package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// runDown stops the cluster that `up` started in DIR: SIGTERM to `up`, which
// stops its components in order; anything still alive after 30s is killed.
func runDown(args []string) int {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	dir := fs.String("dir", "", "the directory given to up (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "testcluster down: --dir is required")
		return 2
	}
	b, err := os.ReadFile(filepath.Join(*dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "testcluster down: no cluster runs from %s\n", *dir)
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster down: %v\n", err)
		return 1
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		fmt.Fprintf(os.Stderr, "testcluster down: reading %s: %v\n", stateFile, err)
		return 1
	}
	pids := []int{s.Pid}
	for _, c := range s.Components {
		pids = append(pids, c.Pid)
	}
	_ = syscall.Kill(s.Pid, syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && anyAlive(pids) {
		time.Sleep(100 * time.Millisecond)
	}
	killed := 0
	for _, pid := range pids {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed++
		}
	}
	_ = os.Remove(filepath.Join(*dir, stateFile))
	if killed > 0 {
		fmt.Fprintf(os.Stderr, "testcluster down: killed %d process(es) that did not stop within 30s\n", killed)
	}
	fmt.Fprintf(os.Stderr, "testcluster down: stopped the cluster in %s\n", *dir)
	return 0
}

func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil {
		return false
	}
	// A zombie still answers kill(0); its /proc state says Z.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' && i+2 < len(stat) {
			return stat[i+2] != 'Z'
		}
	}
	return true
}

func anyAlive(pids []int) bool {
	for _, p := range pids {
		if alive(p) {
			return true
		}
	}
	return false
}
