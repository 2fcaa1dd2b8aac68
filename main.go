// Command quire is a self-hosted document management server, wire
// compatible with the FormKiQ HTTP API.
//
//	quire serve    [--config FILE] [--listen A] [--data-dir D] [--public-url U] [any setting as a flag]
//	quire token    --user U --groups g1,g2 [--config FILE | --data-dir D] [--ttl 1h]
//	quire config   example|check [--config FILE] [flags]
//	quire service  install|uninstall|start|stop|restart|status|unit [--config FILE]
//	quire doctor   [--config FILE]
//	quire backup   --url URL --token T --out FILE|-   (or --data-dir D for a stopped server)
//	quire restore  --in FILE|- --data-dir NEW
//	quire reindex  --data-dir D
//	quire version
//
// The commands are in package cli, one file per command.
package main

import (
	"os"

	"quire/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
