package storage

import (
	"context"
	"encoding/json"
	"testing"
)

func TestCheckActionRights(t *testing.T) {
	t.Parallel() // own store, no package or process state
	set := FolderPermissionSet{
		"hr":      {{RoleName: "hr_team", Permissions: []string{FolderRead, FolderWrite}}},
		"archive": {{RoleName: "hr_team", Permissions: []string{FolderRead, FolderWrite, FolderDelete}}},
	}
	member := &ActionActor{Groups: []string{"hr_team"}, Permissions: []string{"DELETE", "READ", "WRITE"}}
	writer := &ActionActor{Groups: []string{"hr_team"}, Permissions: []string{"READ", "WRITE"}}
	outsider := &ActionActor{Groups: []string{"staff"}, Permissions: []string{"DELETE", "READ", "WRITE"}}
	governor := &ActionActor{Groups: []string{"staff"}, Permissions: []string{"DELETE", "GOVERN", "READ", "WRITE"}}
	move := func(p string) json.RawMessage { b, _ := json.Marshal(map[string]string{"path": p}); return b }
	for _, c := range []struct {
		name, typ string
		params    json.RawMessage
		actor     *ActionActor
		path      string
		want      string
	}{
		{"no rights recorded", "DELETE", nil, nil, "hr/a.txt", "DELETE action has no recorded rights of the user who added it; add it again"},
		{"other types pass", "OCR", nil, nil, "hr/a.txt", ""},
		{"delete without folder DELETE", "DELETE", nil, member, "hr/a.txt", "fkq access denied to folder (hr) (DELETE)"},
		{"delete with folder DELETE", "DELETE", nil, member, "archive/a.txt", ""},
		{"delete without site DELETE", "DELETE", nil, writer, "archive/a.txt", "fkq access denied (groups: s (READ,WRITE))"},
		{"delete where no folder rules", "DELETE", nil, outsider, "public/a.txt", ""},
		{"move out of a closed folder", "MOVE", move("public/"), outsider, "hr/a.txt", "fkq access denied to folder (hr) (WRITE)"},
		{"move into a closed folder", "MOVE", move("hr/"), outsider, "public/a.txt", "fkq access denied to folder (hr) (WRITE)"},
		{"move between open folders", "MOVE", move("/"), member, "hr/a.txt", ""},
		{"governors are not limited by folders", "MOVE", move("hr/"), governor, "public/a.txt", ""},
	} {
		err := CheckActionRights("s", &Action{Type: c.typ, Parameters: c.params, Actor: c.actor}, "id", c.path, set)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestCheckWriter_AtApply: a write that carries the caller's rights
// (Writer) is checked by the applier against the folder permissions and
// the document's path of that moment, so a check made by the handler
// before a long generation cannot go stale (issue 29, finding 2).
func TestCheckWriter_AtApply(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	const site = "default"
	addDoc(t, d, site, "d1", "hr/a.txt", t0)
	addDoc(t, d, site, "d2", "pub/b.txt", t0)
	mustApply(t, d, OpSetFolderPermissions, site, t0, SetFolderPermissions{Path: "hr", Roles: []FolderRole{{RoleName: "hr_team", Permissions: []string{FolderRead}}}})
	staff := &ActionActor{Groups: []string{"staff"}, Permissions: []string{"READ", "WRITE"}}
	reader := &ActionActor{Groups: []string{"hr_team"}, Permissions: []string{"READ", "WRITE"}}
	governor := &ActionActor{Groups: []string{"staff"}, Permissions: []string{"GOVERN", "READ", "WRITE"}}
	ct, into := "text/plain", "hr/b.txt"
	denied := "fkq access denied to folder (hr) (WRITE)"
	for _, c := range []struct {
		name    string
		op      Op
		payload any
		want    string
	}{
		{"update in a closed folder", OpUpdateDocument, UpdateDocument{DocumentID: "d1", ContentType: &ct, Writer: staff}, denied},
		{"update by a reader of the folder", OpUpdateDocument, UpdateDocument{DocumentID: "d1", ContentType: &ct, Writer: reader}, denied},
		{"move into a closed folder", OpUpdateDocument, UpdateDocument{DocumentID: "d2", Path: &into, Writer: staff}, denied},
		{"add into a closed folder", OpAddDocuments, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "d3", Path: "hr/c.txt"}}}, Writer: staff}, denied},
		{"artifact of a document in a closed folder", OpAddArtifact, AddArtifact{DocumentID: "d1", Artifact: NewDocument{Document: Document{DocumentID: "a1"}}, Writer: staff}, denied},
		{"governors are not limited by folders", OpUpdateDocument, UpdateDocument{DocumentID: "d1", ContentType: &ct, Writer: governor}, ""},
		{"open folder", OpUpdateDocument, UpdateDocument{DocumentID: "d2", ContentType: &ct, Writer: staff}, ""},
		{"no writer: the server's own write", OpUpdateDocument, UpdateDocument{DocumentID: "d1", ContentType: &ct}, ""},
	} {
		_, err := d.Apply(context.Background(), MustCommand(c.op, site, "joe", t0, c.payload))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if _, err := d.GetDocument(site, "d3"); err == nil {
		t.Error("d3 was written into the closed folder")
	}
	if doc, err := d.GetDocument(site, "d2"); err != nil || doc.Path != "pub/b.txt" {
		t.Errorf("d2 moved: %v %v", doc, err)
	}
}
