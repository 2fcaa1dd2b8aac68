// Command gen writes the console's bundle (go generate ./console).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"quire/console/internal/bundle"
)

func main() {
	out, err := bundle.Build(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(".", bundle.Name), out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
