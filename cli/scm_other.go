//go:build !windows

package cli

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"quire/config"
)

// runUnderSCM is `quire service run` where there is no Windows service
// control manager: serve until SIGINT or SIGTERM, as `serve` does.
func runUnderSCM(l *config.Loaded, log io.Writer) error {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(stop)
	return serve(l, log, stop)
}
