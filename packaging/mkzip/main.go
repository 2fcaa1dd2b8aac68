// Command mkzip writes a zip archive: mkzip -o OUT src=name [src=name ...].
// `make package` uses it for the Windows archive (CI machines have Go, not
// zip).
package main

import (
	"archive/zip"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	out := flag.String("o", "", "zip file to write")
	flag.Parse()
	if err := write(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "mkzip:", err)
		os.Exit(1)
	}
}

func write(out string, entries []string) error {
	if out == "" || len(entries) == 0 {
		return fmt.Errorf("usage: mkzip -o OUT src=name ...")
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, e := range entries {
		src, name, ok := strings.Cut(e, "=")
		if !ok {
			return fmt.Errorf("want src=name, got %q", e)
		}
		if err := add(zw, src, name); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

func add(zw *zip.Writer, src, name string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	h, err := zip.FileInfoHeader(fi)
	if err != nil {
		return err
	}
	h.Name, h.Method = name, zip.Deflate
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, in)
	return err
}
