package storage

import (
	"encoding/json"
	"testing"
)

func TestCheckActionRights(t *testing.T) {
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
