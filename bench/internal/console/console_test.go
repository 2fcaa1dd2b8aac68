package console

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestConsoleRows_AgreeWithConsole: the console rows' baseline sends as
// many tag requests at a time, each naming as many documents, as the
// console's bulk jobs do, and the search page's pause after a key leaves
// room for the 150 ms goal.
func TestConsoleRows_AgreeWithConsole(t *testing.T) {
	for _, c := range []struct {
		file, re string
		check    func(n int) bool
		what     string
	}{
		{"../../../console/js/bulk.js", `const PARALLEL = (\d+);`, func(n int) bool { return n == consoleBulkParallel }, "PARALLEL is consoleBulkParallel"},
		{"../../../console/js/bulkbar.js", `const TAG_BATCH = (\d+);`, func(n int) bool { return n == consoleTagBatch }, "TAG_BATCH is consoleTagBatch"},
		{"../../../console/pages/search.js", `const TYPING_MS = (\d+);`, func(n int) bool { return time.Duration(n)*time.Millisecond <= typingTarget/2 }, "TYPING_MS at most half of typingTarget"},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(c.re).FindSubmatch(b)
		if m == nil {
			t.Errorf("%s: no %s", c.file, c.re)
			continue
		}
		n, _ := strconv.Atoi(string(m[1]))
		if !c.check(n) {
			t.Errorf("%s: %s: want %s", c.file, m[0], c.what)
		}
	}
}
