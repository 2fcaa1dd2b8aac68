package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"quire/config"
)

// cmdConfig prints an example config file or checks one.
//
//	quire config example [--data-dir D --listen A ...]   a commented file with these values
//	quire config check [--config F]                       validate, naming the bad line
func cmdConfig(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "example" && args[0] != "check") {
		fmt.Fprintln(stderr, "usage: quire config example|check [--config FILE] [flags]")
		return errUsage
	}
	fs := flag.NewFlagSet("config "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	l, err := config.Load(fs, args[1:], config.Options{})
	if args[0] == "example" {
		if err != nil {
			return err
		}
		return config.WriteExample(stdout, l.Config)
	}
	var ps config.Problems
	if err != nil && !errors.As(err, &ps) {
		return err
	}
	if l != nil {
		ps = append(ps, l.CheckFiles()...)
	}
	if len(ps) > 0 {
		return ps
	}
	name := l.File
	if name == "" {
		name = "(no config file: defaults, QUIRE_* variables and flags)"
	}
	fmt.Fprintln(stdout, "config ok:", name)
	for _, w := range l.Warnings() {
		fmt.Fprintln(stdout, "warning:", w.String())
	}
	return nil
}
