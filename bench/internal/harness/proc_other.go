//go:build !linux

package harness

import "os/exec"

// killWithParent is a no-op where the kernel offers no parent-death signal;
// the deferred cleanup still stops the child on every orderly exit.
func killWithParent(*exec.Cmd) {}
