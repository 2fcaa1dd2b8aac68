package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/auth"
	"quire/config"
	"quire/quiretest"
	"quire/storage"
)

func TestCLI(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{"no command", nil, 2, "", "usage: quire"},
		{"unknown", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"version", []string{"version"}, 0, "quire ", ""},
		{"token needs user", []string{"token", "--data-dir", dir}, 1, "", "--user is required"},
		{"token", []string{"token", "--data-dir", dir, "--user", "ann", "--groups", "finance, default_read", "--ttl", "5m"}, 0, ".", ""},
		{"serve bad flag", []string{"serve", "--no-such-flag"}, 1, "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tt.args, &out, &errb)
			if code != tt.code || !strings.Contains(out.String(), tt.inStdout) || !strings.Contains(errb.String(), tt.inStderr) {
				t.Fatalf("code %d stdout %q stderr %q; want %d, %q, %q", code, out.String(), errb.String(), tt.code, tt.inStdout, tt.inStderr)
			}
			if tt.name != "token" {
				return
			}
			a, err := auth.Open(auth.Config{DataDir: dir}, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := a.Authenticate(strings.TrimSpace(out.String()))
			if err != nil {
				t.Fatalf("token from the CLI does not verify: %v", err)
			}
			if p.Username != "ann" || !p.Can("finance", auth.PermWrite) || !p.Can("default", auth.PermRead) || p.Can("default", auth.PermWrite) {
				t.Fatalf("principal = %+v", p)
			}
		})
	}
}

// TestReindex rebuilds a data dir's index offline and checks a search
// finds what storage holds.
func TestReindex(t *testing.T) {
	dir := t.TempDir()
	s := quiretest.StartServer(t, dir)
	tok := s.Admin()
	for i := 0; i < 25; i++ {
		r := s.Do(http.MethodPost, "/documents", map[string]any{"path": fmt.Sprintf("ledger/entry-%02d.txt", i), "contentType": "text/plain", "content": fmt.Sprintf("ledger line %d zebra", i)}, tok)
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	s.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"reindex", "--data-dir", dir}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "reindexed 25 documents") || !strings.Contains(errb.String(), "reindex: 100% (25/25)") {
		t.Fatalf("reindex: code %d, stderr %q", code, errb.String())
	}
	s = quiretest.StartServer(t, dir)
	defer s.Close()
	tok = s.Admin()
	for _, q := range []map[string]any{
		{"filename": map[string]any{"beginsWith": "entry-1"}},
		{"text": "zebra"},
	} {
		r := s.Do(http.MethodPost, "/search?limit=100", map[string]any{"query": q}, tok)
		var res struct{ Documents []map[string]any }
		json.Unmarshal(r.Body, &res)
		want := 10
		if q["text"] != nil {
			want = 25
		}
		if r.Status != http.StatusOK || len(res.Documents) != want {
			t.Fatalf("after reindex %v: %d results (%d %s), want %d", q, len(res.Documents), r.Status, r.Body, want)
		}
	}
	// A running server holds the store: reindex refuses, the server stays.
	if code := run([]string{"reindex", "--data-dir", dir}, &out, &errb); code != 1 {
		t.Fatalf("reindex against a running server: code %d", code)
	}
}

// TestNodeConfig_MaxConnsPerClient: the setting's 0 means unlimited, the
// node's 0 means its default; the mapping keeps them apart.
func TestNodeConfig_MaxConnsPerClient(t *testing.T) {
	for _, tc := range []struct{ setting, node int }{{0, -1}, {1, 1}, {512, 512}} {
		c := config.Default()
		c.Limits.MaxConnsPerClient = tc.setting
		if got := nodeConfig(c, nil).MaxConnsPerClient; got != tc.node {
			t.Errorf("max_conns_per_client %d: node gets %d, want %d", tc.setting, got, tc.node)
		}
	}
}

// TestNodeConfig_StorageReserve: the settings' 0 means no reserve, the
// node's 0 its default; the defaults are 1 GiB and 2%.
func TestNodeConfig_StorageReserve(t *testing.T) {
	for _, tc := range []struct {
		bytes    int64
		pct      int
		nodeB    int64
		nodePct  float64
		reserved uint64 // of a 100 GiB disk
	}{
		{1 << 30, 2, 1 << 30, 2, 2 << 30},
		{0, 0, -1, -1, 0},
		{16 << 20, 0, 16 << 20, -1, 16 << 20},
	} {
		c := config.Default()
		c.Storage.MinFreeBytes, c.Storage.MinFreePercent = tc.bytes, tc.pct
		n := nodeConfig(c, nil)
		if n.MinFreeBytes != tc.nodeB || n.MinFreePercent != tc.nodePct {
			t.Errorf("%d bytes, %d%%: node gets %d, %v", tc.bytes, tc.pct, n.MinFreeBytes, n.MinFreePercent)
		}
		if got := storage.Reserve(storage.Config{MinFreeBytes: n.MinFreeBytes, MinFreePercent: n.MinFreePercent}, 100<<30); got != tc.reserved {
			t.Errorf("%d bytes, %d%%: reserve %d, want %d", tc.bytes, tc.pct, got, tc.reserved)
		}
	}
	if d := config.Default().Storage; d.MinFreeBytes != 1<<30 || d.MinFreePercent != 2 {
		t.Errorf("defaults %+v", d)
	}
}
