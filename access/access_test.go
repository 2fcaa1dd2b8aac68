package access

import (
	"errors"
	"testing"
)

func TestRights_Allows(t *testing.T) {
	set := Folders{
		"hr":         {{RoleName: "hr", Permissions: []string{Read, Write}}},
		"hr/payroll": {{RoleName: "pay", Permissions: []string{Read}}},
		"open":       {{RoleName: "staff", Permissions: []string{Read, Write, Delete}}},
	}
	share := Share{Path: "hr/letters", PermissionType: SharePermissionGroup, Group: "temp", Permissions: []string{Read}}
	cases := []struct {
		name   string
		rights Rights
		dir    string
		perm   string
		want   bool
	}{
		{"no permissions on the way up: the site decides", Rights{Folders: set, Groups: []string{"x"}}, "misc/a", Write, true},
		{"no permissions at all", Rights{Groups: []string{"x"}}, "hr", Delete, true},
		{"the folder grants the group", Rights{Folders: set, Groups: []string{"hr"}}, "hr", Write, true},
		{"the folder grants other permissions", Rights{Folders: set, Groups: []string{"hr"}}, "hr", Delete, false},
		{"inherited below", Rights{Folders: set, Groups: []string{"hr"}}, "hr/2024/jan", Read, true},
		{"the nearest folder wins", Rights{Folders: set, Groups: []string{"hr"}}, "hr/payroll", Read, false},
		{"the nearest folder grants its role", Rights{Folders: set, Groups: []string{"pay"}}, "hr/payroll/x", Read, true},
		{"another group", Rights{Folders: set, Groups: []string{"staff"}}, "hr", Read, false},
		{"exempt callers pass", Rights{Exempt: true, Folders: set}, "hr/payroll", Delete, true},
		{"unreadable permissions fail closed", Rights{Failed: true}, "misc", Read, false},
		{"a share naming the caller adds", Rights{Folders: set, Groups: []string{"temp"}, Shares: []Share{share}}, "hr/letters/x", Read, true},
		{"a share gives only its permissions", Rights{Folders: set, Groups: []string{"temp"}, Shares: []Share{share}}, "hr/letters", Write, false},
		{"a share gives only its folder", Rights{Folders: set, Groups: []string{"temp"}, Shares: []Share{share}}, "hr", Read, false},
		{"a share's folder is not a prefix of a name", Rights{Folders: set, Groups: []string{"temp"}, Shares: []Share{share}}, "hr/letters2", Read, false},
		{"through a share: inside it", Rights{Exempt: false, Through: &share, Folders: set}, "hr/letters", Read, true},
		{"through a share: bounded outside it", Rights{Through: &share}, "misc", Read, false},
		{"through a share: bounded to its permissions", Rights{Through: &share}, "hr/letters", Delete, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.rights.Allows(c.dir, c.perm); got != c.want {
				t.Errorf("Allows(%q, %s) = %v, want %v", c.dir, c.perm, got, c.want)
			}
			err := c.rights.Check(c.dir, c.perm)
			var ae *Error
			if c.want != (err == nil) || err != nil && !errors.As(err, &ae) {
				t.Errorf("Check(%q, %s) = %v, want denial %v", c.dir, c.perm, err, !c.want)
			}
		})
	}
}

func TestRights_Restricted(t *testing.T) {
	share := Share{Path: "a", Permissions: []string{Read}}
	cases := []struct {
		name   string
		rights Rights
		want   bool
	}{
		{"no folder permissions", Rights{}, false},
		{"folder permissions", Rights{Folders: Folders{"a": nil}}, true},
		{"exempt", Rights{Exempt: true, Folders: Folders{"a": nil}}, false},
		{"through a share", Rights{Through: &share}, true},
		{"unreadable", Rights{Failed: true}, true},
	}
	for _, c := range cases {
		if got := c.rights.Restricted(); got != c.want {
			t.Errorf("%s: Restricted() = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestExempt(t *testing.T) {
	share := &Share{}
	cases := []struct {
		admin, governs bool
		through        *Share
		want           bool
	}{
		{false, false, nil, false},
		{true, false, nil, true},
		{false, true, nil, true},
		{true, true, share, false},
	}
	for _, c := range cases {
		if got := Exempt(c.admin, c.governs, c.through); got != c.want {
			t.Errorf("Exempt(%v, %v, %v) = %v, want %v", c.admin, c.governs, c.through != nil, got, c.want)
		}
	}
}

func TestShare_SharedWith(t *testing.T) {
	cases := []struct {
		sh       Share
		username string
		groups   []string
		want     bool
	}{
		{Share{PermissionType: SharePermissionGroup, Group: "g"}, "ann", []string{"x", "g"}, true},
		{Share{PermissionType: SharePermissionGroup, Group: "g"}, "g", nil, false},
		{Share{PermissionType: SharePermissionUser, Username: "ann"}, "ann", nil, true},
		{Share{PermissionType: SharePermissionUser, Username: "ann"}, "bob", []string{"ann"}, false},
	}
	for i, c := range cases {
		if got := c.sh.SharedWith(c.username, c.groups); got != c.want {
			t.Errorf("case %d: SharedWith = %v, want %v", i, got, c.want)
		}
	}
}

func TestCheckAction(t *testing.T) {
	set := Folders{"locked": {{RoleName: "ops", Permissions: []string{Read}}}, "ops": {{RoleName: "ops", Permissions: []string{Write, Delete}}}}
	cases := []struct {
		name  string
		actor Actor
		needs []Need
		want  string // "" allowed
	}{
		{"site and folder grant", Actor{Groups: []string{"ops"}, Permissions: []string{Write}}, []Need{{"ops", Write}, {"free", Write}}, ""},
		{"no site permission", Actor{Groups: []string{"ops"}, Permissions: []string{Read}}, []Need{{"ops", Write}}, "fkq access denied (groups: s (READ))"},
		{"folder refuses", Actor{Groups: []string{"ops"}, Permissions: []string{Write}}, []Need{{"ops", Write}, {"locked", Write}}, "fkq access denied to folder (locked) (WRITE)"},
		{"admin passes everything", Actor{Permissions: []string{"ADMIN"}}, []Need{{"locked", Delete}}, ""},
		{"governor: the folder is lifted, the site permission is not", Actor{Permissions: []string{"GOVERN"}}, []Need{{"locked", Delete}}, "fkq access denied (groups: s (GOVERN))"},
		{"governor with the site permission", Actor{Permissions: []string{"GOVERN", Delete}}, []Need{{"locked", Delete}}, ""},
		{"root folder named /", Actor{Permissions: []string{Delete}}, []Need{{"", Delete}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckAction("s", &c.actor, set, c.needs...)
			if got := errMsg(err); got != c.want {
				t.Errorf("CheckAction = %q, want %q", got, c.want)
			}
		})
	}
}

func TestCheckWriter(t *testing.T) {
	set := Folders{"locked": {{RoleName: "ops", Permissions: []string{Read}}}}
	cases := []struct {
		name   string
		w      *Actor
		paths  []string
		want   string
		loaded bool
	}{
		{"the server's own write", nil, []string{"locked/a"}, "", false},
		{"admin", &Actor{Permissions: []string{"ADMIN"}}, []string{"locked/a"}, "", false},
		{"governor", &Actor{Permissions: []string{"GOVERN"}}, []string{"locked/a"}, "", false},
		{"no WRITE on the site", &Actor{Permissions: []string{Read}}, []string{"a"}, "fkq access denied (groups: s (READ))", false},
		{"free folder", &Actor{Permissions: []string{Write}}, []string{"free/a", "b"}, "", true},
		{"a locked folder among the paths", &Actor{Groups: []string{"ops"}, Permissions: []string{Write}}, []string{"b", "locked/x/a"}, "fkq access denied to folder (locked/x) (WRITE)", true},
		{"root", &Actor{Permissions: []string{Write}}, []string{"a.pdf"}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loaded := false
			err := CheckWriter("s", c.w, func() (Folders, error) { loaded = true; return set, nil }, c.paths...)
			if got := errMsg(err); got != c.want {
				t.Errorf("CheckWriter = %q, want %q", got, c.want)
			}
			if loaded != c.loaded {
				t.Errorf("folder permissions read: %v, want %v", loaded, c.loaded)
			}
		})
	}
	boom := errors.New("disk")
	if err := CheckWriter("s", &Actor{Permissions: []string{Write}}, func() (Folders, error) { return nil, boom }, "a"); !errors.Is(err, boom) {
		t.Errorf("a failed read: %v, want it returned", err)
	}
}

func TestFolderDenied(t *testing.T) {
	if got := FolderDenied("", Read).Error(); got != "fkq access denied to folder (/) (READ)" {
		t.Errorf("root: %q", got)
	}
	if got := FolderDenied("a/b", Delete).Error(); got != "fkq access denied to folder (a/b) (DELETE)" {
		t.Errorf("a/b: %q", got)
	}
}

func errMsg(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
