//go:build windows

package engine

import (
	"os/exec"
	"strconv"
	"syscall"
)

// ownGroup starts cmd in a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup kills cmd and its descendants (Windows has no group kill;
// taskkill /T walks the process tree).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid)).Run()
	cmd.Process.Kill()
	return err
}

// reapGroup does nothing on Windows: the engine's id may already belong
// to another process, and taskkill /T would walk that one's tree.
func reapGroup(cmd *exec.Cmd) {}
