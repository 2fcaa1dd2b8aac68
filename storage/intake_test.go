package storage

import (
	"strings"
	"testing"
	"time"
)

func TestExpandIntakePath(t *testing.T) {
	t.Parallel() // own store, no package or process state
	at := time.Date(2026, 3, 7, 23, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name, tpl string
		v         IntakeVars
		want      string
	}{
		{"placeholders", "Inbox/{yyyy}-{mm}-{dd}/{source}/{profile}/{filename}", IntakeVars{Source: "post", Profile: "fin", Filename: "a.pdf", Date: at}, "Inbox/2026-03-07/post/fin/a.pdf"},
		{"name and ext", "{name}.{ext}", IntakeVars{Filename: "scan.2.pdf"}, "scan.2.pdf"},
		{"slash in a value", "In/{sender}/{filename}", IntakeVars{Sender: "a/b\\c", Filename: "x.pdf"}, "In/a_b_c/x.pdf"},
		{"dot dot value", "In/{subject}/{filename}", IntakeVars{Subject: "..", Filename: "x.pdf"}, "In/x.pdf"},
		{"dot value", "In/{subject}/{filename}", IntakeVars{Subject: ".", Filename: "x"}, "In/x"},
		{"empty value drops the segment", "In/{sender}/{filename}", IntakeVars{Filename: "x.pdf"}, "In/x.pdf"},
		{"control characters", "In/{subject}", IntakeVars{Subject: "a\x00b\r\nc"}, "In/a b  c"},
		{"windows characters", "In/{subject}", IntakeVars{Subject: `q: "why?" <a|b>*`}, "In/q_ _why__ _a_b__"},
		{"trailing dots and blanks", "In/{subject}", IntakeVars{Subject: "  report.. "}, "In/report"},
		{"invalid UTF-8", "In/{filename}", IntakeVars{Filename: "bad\xff.pdf"}, "In/bad_.pdf"},
		{"folder segments", "In/{folder}/{filename}", IntakeVars{Folder: "a/../b//c", Filename: "x"}, "In/a/b/c/x"},
		{"folder without placeholder", "In/{filename}", IntakeVars{Folder: "a/b", Filename: "x"}, "In/a/b/x"},
		{"only folder", "{folder}", IntakeVars{Folder: "a", Filename: "x"}, "a"},
		{"everything empty", "{sender}", IntakeVars{}, "scan"},
		{"long value", "In/{subject}", IntakeVars{Subject: strings.Repeat("é", 300)}, "In/" + strings.Repeat("é", MaxIntakeSegmentBytes/2)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExpandIntakePath(tt.tpl, tt.v); got != tt.want {
				t.Errorf("ExpandIntakePath(%q) = %q, want %q", tt.tpl, got, tt.want)
			}
		})
	}
}

func TestCheckIntakeTemplate(t *testing.T) {
	t.Parallel() // own store, no package or process state
	for _, tt := range []struct {
		tpl string
		ok  bool
	}{
		{"Inbox/{yyyy}-{mm}/{source}/{filename}", true},
		{"{folder}/{filename}", true},
		{"In/{year}", false},
		{"In/{yyyy", false},
		{"In/yyyy}", false},
		{"In/../x", false},
		{"In/./x", false},
		{"In//x", false},
		{`In\x`, false},
		{"In/a{folder}", false},
		{"In/\x01", false},
		{"In/\xff", false},
		{"", false},
		{strings.Repeat("a", MaxIntakeTemplateLen+1), false},
	} {
		if got := CheckIntakeTemplate(tt.tpl, true) == ""; got != tt.ok {
			t.Errorf("CheckIntakeTemplate(%q) ok = %v, want %v", tt.tpl, got, tt.ok)
		}
	}
}
