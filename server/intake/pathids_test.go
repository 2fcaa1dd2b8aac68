package intake_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestPathIDs_StayUnderRoot (issue 43, finding 3): ids that become path
// segments never lead out of intake.folder_root. Site ids ".", ".." and
// ids with "\" are refused wherever they arrive (POST /sites, a token's
// group, siteId); profile names that are Windows device names are
// refused; a watched folder whose site segment is no safe name, or whose
// site folder is a link out of the root, is refused when enabled; and
// every watched folder an answer reports is under the root.
func TestPathIDs_StayUnderRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "intake")
	outside := filepath.Join(base, "elsewhere")
	for _, d := range []string{root, filepath.Join(outside, "scan")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := quiretest.NewServer(t, intakeRoot(root))
	admin := s.Admin()
	watch := func(name string) map[string]any {
		return map[string]any{"intakeProfile": map[string]any{"name": name, "watchFolder": map[string]any{"stableSeconds": 1}}}
	}
	for _, id := range []string{"..", ".", `a\b`, `..\..`} {
		if r := s.Do(http.MethodPost, "/sites", map[string]any{"site": map[string]any{"id": id}}, admin); r.Status != http.StatusBadRequest {
			t.Errorf("POST /sites id %q: %d %s, want 400", id, r.Status, r.Body)
		}
	}
	// A token group names the site "..": every use of it is refused.
	dots := s.Token("dotty", ".._govern")
	for _, p := range []string{"/documents?siteId=..", "/sites/%2E%2E/intakeProfiles", "/documents"} {
		if r := s.Do(http.MethodGet, p, nil, dots); r.Status < 400 {
			t.Errorf("GET %s with group .._govern: %d %s", p, r.Status, r.Body)
		}
	}
	if r := s.Do(http.MethodPost, "/sites/%2E%2E/intakeProfiles", watch("scan"), dots); r.Status < 400 {
		t.Errorf("a profile of site '..': %d %s", r.Status, r.Body)
	}
	for _, name := range []string{"con", "nul", "aux", "prn", "com1", "lpt9"} {
		if r := s.Do(http.MethodPost, "/sites/default/intakeProfiles", watch(name), admin); r.Status != http.StatusBadRequest {
			t.Errorf("profile name %q: %d %s, want 400", name, r.Status, r.Body)
		}
	}
	// A site whose id is no safe folder name gets no watched folder.
	for _, site := range []string{"...", "com1", "a:b"} {
		servertest.MustStatus(t, s.Do(http.MethodPost, "/sites", map[string]any{"site": map[string]any{"id": site}}, admin), http.StatusCreated)
		r := s.Do(http.MethodPost, "/sites/"+site+"/intakeProfiles", watch("scan"), admin)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "watchFolder") {
			t.Errorf("a watched folder of site %q: %d %s, want 400 on watchFolder", site, r.Status, r.Body)
		}
	}
	// The site's folder is a link out of the root.
	if err := os.Symlink(outside, filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites", map[string]any{"site": map[string]any{"id": "linked"}}, admin), http.StatusCreated)
	if r := s.Do(http.MethodPost, "/sites/linked/intakeProfiles", watch("scan"), admin); r.Status != http.StatusBadRequest {
		t.Errorf("a watched folder through a link out of the root: %d %s, want 400", r.Status, r.Body)
	}
	// What is made is under the root.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/default/intakeProfiles", watch("scan"), admin), http.StatusCreated)
	for _, site := range []string{"default", "..."} {
		r := s.Do(http.MethodGet, "/sites/"+site+"/intakeProfiles", nil, admin)
		for _, p := range quiretest.List(t, r.JSON(t), "intakeProfiles") {
			wf, ok := quiretest.Obj(t, p)["watchFolder"].(map[string]any)
			if !ok {
				continue
			}
			dir, _ := wf["path"].(string)
			if rel, err := filepath.Rel(root, dir); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Errorf("site %s: watched folder %q is not under %s", site, dir, root)
			}
		}
	}
}
