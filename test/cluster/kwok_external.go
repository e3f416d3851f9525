//go:build nokwok

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// runKwok, in a build for a Kubernetes release whose kubelet and CRI packages kwok's own code no
// longer compiles against (build.sh builds 1.34 with -tags nokwok), runs the kwok binary that
// build.sh installs beside this one, with the same arguments.
func runKwok() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kwok:", err)
		return 1
	}
	cmd := exec.Command(filepath.Join(filepath.Dir(self), "kwok"), os.Args[1:]...) // main hid the sub-command
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "kwok:", err)
		return 1
	}
	return 0
}
