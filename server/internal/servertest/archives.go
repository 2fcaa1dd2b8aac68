package servertest

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"testing"
)

// Unzip downloads an archive and returns its files and their methods.
func Unzip(t *testing.T, u string) (map[string]string, map[string]uint16) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET archive: %d %v %s", resp.StatusCode, err, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/zip" {
		t.Errorf("Content-Type %q", ct)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	files, methods := map[string]string{}, map[string]uint16{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		files[f.Name], methods[f.Name] = string(data), f.Method
	}
	return files, methods
}
