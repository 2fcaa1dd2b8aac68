package intake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"quire/guard"
	"quire/safepath"
	"quire/storage"
)

// Watched folders. A profile with watchFolder enabled has the folder
// <root>/<siteId>/<name> (root: the server's intake.folder_root; the site
// id URL-escaped). The OS shares it (Samba, a Windows share); Quire polls
// it, never relying on inotify, which network file systems do not deliver.
// A file is taken once its size and modification time have not changed
// for the profile's stableSeconds, then moved to done/ (or deleted); a
// file that fails goes to failed/ with <name>.error.txt beside it.
// Subfolders become path segments ({folder}).
//
// Exactly once: a file's journal key names the site, the profile, its
// path, size and modification time, and the intake command writes the
// journal record in the same transaction as the document. A crash before
// the commit leaves no document (the file is taken again); a crash after it
// and before the move finds the record on the next poll and only moves
// the file. Only the leader polls (Start and Stop follow leadership).

// Watch folder layout.
const (
	DoneDir   = "done"
	FailedDir = "failed"
	// ErrorSuffix is appended to a failed file's name for its error text.
	ErrorSuffix = ".error.txt"
	// maxWatchDepth bounds the subfolders walked below a profile's folder.
	maxWatchDepth = 8
	// maxWatchFiles bounds the files looked at per profile and poll.
	maxWatchFiles = 10000
)

// WatchDir is the watched folder of a site's profile ("" without a
// root): <root>/<site, URL-escaped>/<profile>, built by safepath.Join, so
// a site or profile that is no safe folder name on every OS (".", "..",
// a device name, a drive colon), or a folder below the root that is a
// link out of it, is an error and no folder (issue 43, finding 3).
func WatchDir(root, site, profile string) (string, error) {
	if root == "" {
		return "", nil
	}
	return safepath.Join(root, url.PathEscape(site), profile)
}

// Ignored reports file names a watched folder leaves alone: hidden and
// temporary files (a scanner's or Windows' partial writes).
func Ignored(name string) bool {
	l := strings.ToLower(name)
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~") ||
		strings.HasSuffix(l, ".tmp") || strings.HasSuffix(l, ".part") || strings.HasSuffix(l, ErrorSuffix) ||
		l == "thumbs.db" || l == "desktop.ini"
}

// Watcher polls the watched folders of every site's profiles.
type Watcher struct {
	in   *Intake
	root string
	poll time.Duration
	log  *slog.Logger

	mu      sync.Mutex
	seen    map[string]fileState // by absolute path
	cancel  context.CancelFunc
	done    chan struct{}
	pokeCh  chan struct{}
	running bool
}

type fileState struct {
	size  int64
	mtime time.Time
	since time.Time // when size and mtime were first seen as they are
}

// NewWatcher returns a stopped watcher of the folders under root, polled
// every poll.
func NewWatcher(in *Intake, root string, poll time.Duration, log *slog.Logger) *Watcher {
	if poll <= 0 {
		poll = 2 * time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	return &Watcher{in: in, root: root, poll: poll, log: log.With("component", "intake"), seen: map[string]fileState{}, pokeCh: make(chan struct{}, 1)}
}

// Start polls until Stop (the leader's work): the watched folders (none
// without a root) and, every pruneEvery, the journal (PruneJournal).
func (w *Watcher) Start() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done, w.running = cancel, make(chan struct{}), true
	w.seen = map[string]fileState{} // stability is measured afresh by each leader
	go guard.Do(w.log, guard.Background, func() { w.loop(ctx, w.done) })
}

// Stop ends polling and waits for a file being taken (its intake is
// committed or not; the journal makes the next leader's poll right).
func (w *Watcher) Stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	if !w.running {
		w.mu.Unlock()
		return
	}
	cancel, done := w.cancel, w.done
	w.running = false
	w.mu.Unlock()
	cancel()
	<-done
}

// Poke asks for a poll now (a profile changed).
func (w *Watcher) Poke() {
	if w == nil {
		return
	}
	select {
	case w.pokeCh <- struct{}{}:
	default:
	}
}

func (w *Watcher) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(w.poll)
	defer t.Stop()
	var pruned time.Time
	for {
		if w.root != "" {
			w.Scan(ctx)
		}
		if now := w.in.cfg.Now(); now.Sub(pruned) >= pruneEvery && ctx.Err() == nil {
			pruned = now
			if n, err := w.PruneJournal(ctx); err != nil {
				w.log.Warn("prune the intake journal", "err", err)
			} else if n > 0 {
				w.log.Info("pruned the intake journal", "entries", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.pokeCh:
		}
	}
}

// Scan looks at every watched folder once: files stable long enough are
// taken.
func (w *Watcher) Scan(ctx context.Context) {
	profiles, err := w.in.cfg.Store.WatchedIntakeProfiles()
	if err != nil {
		w.log.Warn("list watched intake profiles", "err", err)
		return
	}
	live := map[string]bool{}
	for site, list := range profiles {
		for i := range list {
			if ctx.Err() != nil {
				return
			}
			p := &list[i]
			dir, err := WatchDir(w.root, site, p.Name)
			if err != nil {
				w.log.Warn("intake folder refused", "site", site, "profile", p.Name, "err", err)
				continue
			}
			w.scanProfile(ctx, site, p, dir, live)
		}
	}
	w.mu.Lock()
	for k := range w.seen {
		if !live[k] {
			delete(w.seen, k)
		}
	}
	w.mu.Unlock()
}

// Prepare creates a profile's folder with done/ and failed/.
func Prepare(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, DoneDir), filepath.Join(dir, FailedDir)} {
		if err := os.MkdirAll(d, 0o775); err != nil {
			return err
		}
	}
	return nil
}

func (w *Watcher) scanProfile(ctx context.Context, site string, p *storage.IntakeProfile, dir string, live map[string]bool) {
	if err := Prepare(dir); err != nil {
		w.log.Warn("intake folder", "dir", dir, "err", err)
		return
	}
	now := w.in.cfg.Now()
	stable := time.Duration(p.Watch.StableSeconds) * time.Second
	n := 0
	// Folders a taken file left or entered: synced once at the end of
	// the scan, not once per file (a move lost to a power cut meanwhile
	// is harmless: the file is found again, the journal answers it, and
	// it is only moved).
	dirty := map[string]bool{}
	defer func() {
		for d := range dirty {
			if err := syncDir(d); err != nil {
				w.log.Warn("sync intake folder", "dir", d, "err", err)
			}
		}
	}()
	_ = filepath.WalkDir(dir, func(abs string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			if d != nil && d.IsDir() && abs != dir {
				return fs.SkipDir
			}
			return nil
		}
		rel, rerr := filepath.Rel(dir, abs)
		if rerr != nil || rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == DoneDir || rel == FailedDir || Ignored(d.Name()) || strings.Count(rel, "/") >= maxWatchDepth {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || Ignored(d.Name()) {
			return nil // symbolic links, devices, temporary files
		}
		if n++; n > maxWatchFiles {
			return fs.SkipAll
		}
		info, err := d.Info()
		if err != nil || info.Size() == 0 {
			return nil // gone, or a scanner's empty placeholder: wait
		}
		live[abs] = true
		w.mu.Lock()
		st, ok := w.seen[abs]
		if !ok || st.size != info.Size() || !st.mtime.Equal(info.ModTime()) {
			w.seen[abs] = fileState{size: info.Size(), mtime: info.ModTime(), since: now}
			w.mu.Unlock()
			return nil
		}
		w.mu.Unlock()
		if now.Sub(st.since) < stable {
			return nil
		}
		w.take(ctx, site, p, dir, rel, st, dirty)
		return nil
	})
}

// take ingests one stable file and moves it away.
func (w *Watcher) take(ctx context.Context, site string, p *storage.IntakeProfile, dir, rel string, st fileState, dirty map[string]bool) {
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	folder, name := path.Split(rel)
	src := Source{Kind: KindFolder, Name: name, Folder: strings.TrimSuffix(folder, "/"), Date: st.mtime,
		Key: folderKey(p.Name, rel, st.size, st.mtime.UnixNano())}
	f, err := os.OpenFile(abs, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return // gone meanwhile, or a link: the next poll decides
	}
	info, err := f.Stat()
	if err != nil || info.Size() != st.size || !info.ModTime().Equal(st.mtime) || !info.Mode().IsRegular() {
		f.Close()
		w.mu.Lock()
		delete(w.seen, abs) // changed since: measure again
		w.mu.Unlock()
		return
	}
	res, err := w.in.Take(ctx, site, p, src, &stableReader{f: f, size: st.size})
	f.Close()
	if err != nil {
		if ctx.Err() != nil || !Permanent(err) {
			// Stopped, or the store refused for now (full disk, no
			// leader): the file stays and is taken again later.
			w.log.Warn("intake of a watched file deferred", "site", site, "profile", p.Name, "file", rel, "err", err)
			return
		}
		w.log.Warn("intake of a watched file failed", "site", site, "profile", p.Name, "file", rel, "err", err)
		if ferr := w.in.Fail(site, p.Name, src, err); ferr != nil {
			w.log.Warn("record intake error", "err", ferr)
		}
		if to, merr := moveAside(dir, FailedDir, rel, err.Error()); merr != nil {
			w.log.Warn("move failed intake file", "file", rel, "err", merr)
		} else if merr := syncDir(to); merr != nil {
			w.log.Warn("sync failed intake folder", "dir", to, "err", merr)
		}
		dirty[filepath.Dir(abs)] = true
		w.forget(abs)
		return
	}
	dirty[filepath.Dir(abs)] = true
	if p.Watch.OnSuccess == IntakeDeleteAfter {
		err = os.Remove(abs)
	} else {
		var to string
		if to, err = moveAside(dir, DoneDir, rel, ""); err == nil {
			dirty[to] = true
		}
	}
	if err != nil {
		w.log.Warn("clear taken intake file", "file", rel, "documentId", res.DocumentID, "err", err)
	}
	w.forget(abs)
}

// IntakeDeleteAfter is storage.IntakeDelete (the onSuccess that deletes).
const IntakeDeleteAfter = storage.IntakeDelete

func (w *Watcher) forget(abs string) {
	w.mu.Lock()
	delete(w.seen, abs)
	w.mu.Unlock()
}

// Permanent reports an error that retrying the same file cannot fix:
// the file goes to failed/.
func Permanent(err error) bool {
	var ve *storage.ValidationError
	var ae *storage.AccessError
	var ce *storage.ConflictError
	var nf *storage.NotFoundError
	return errors.As(err, &ve) || errors.As(err, &ae) || errors.As(err, &ce) || errors.As(err, &nf) ||
		errors.As(err, new(*TooLargeError)) || errors.Is(err, ErrEmpty)
}

// moveAside moves dir/rel to dir/<to>/rel (a free name: " (n)" before the
// extension when taken) and, with msg, writes <name>.error.txt beside it.
// It returns the folder the file went to, for the caller to sync.
func moveAside(dir, to, rel, msg string) (string, error) {
	dst := filepath.Join(dir, to, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o775); err != nil {
		return "", err
	}
	ext := filepath.Ext(dst)
	base := strings.TrimSuffix(dst, ext)
	for i := 1; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if i > 1000 {
			return "", fmt.Errorf("no free name for %s", rel)
		}
		dst = fmt.Sprintf("%s (%d)%s", base, i, ext)
	}
	if err := os.Rename(filepath.Join(dir, filepath.FromSlash(rel)), dst); err != nil {
		return "", err
	}
	if msg != "" {
		if err := os.WriteFile(dst+ErrorSuffix, []byte(msg+"\n"), 0o664); err != nil {
			return "", err
		}
	}
	return filepath.Dir(dst), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// errChanged fails a read of a file that grew or shrank meanwhile: it is
// taken again once stable.
var errChanged = errors.New("the file changed while it was read")

// stableReader reads an open file and fails when it holds other than the
// size it had when it was found stable (a scanner still writing).
type stableReader struct {
	f    *os.File
	size int64
	n    int64
}

func (r *stableReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.n += int64(n)
	if r.n > r.size || (err != nil && r.n != r.size) {
		return n, errChanged
	}
	return n, err
}

// The journal's pruning. A watched file's entry is finished once the file
// is no longer at its path with its size and modification time (moved to
// done/, deleted, or replaced by another file) and the entry is older than
// journalGrace (which covers a move not synced yet); another source's
// entry (a mail's Message-ID, which a client may send again) once it is
// older than journalKeep. The leader decides from what it sees and drops
// the entries through the log (OpPruneIntakeJournal); the applier drops
// only entries not written again since.
const (
	journalGrace = time.Hour
	journalKeep  = 7 * 24 * time.Hour
	pruneEvery   = 10 * time.Minute
	// maxPruneScan bounds the entries one pruning looks at.
	maxPruneScan = 100000
)

// folderKey is a watched file's journal key.
func folderKey(profile, rel string, size, mtime int64) string {
	return fmt.Sprintf("folder\x00%s\x00%s\x00%d\x00%d", profile, rel, size, mtime)
}

// parseFolderKey reads folderKey's parts (ok false: not a folder key).
func parseFolderKey(key string) (profile, rel string, size, mtime int64, ok bool) {
	parts := strings.Split(key, "\x00")
	if len(parts) != 5 || parts[0] != "folder" {
		return "", "", 0, 0, false
	}
	if _, err := fmt.Sscan(parts[3], &size); err != nil {
		return "", "", 0, 0, false
	}
	if _, err := fmt.Sscan(parts[4], &mtime); err != nil {
		return "", "", 0, 0, false
	}
	return parts[1], parts[2], size, mtime, true
}

// PruneJournal drops the journal entries of finished intakes (see
// journalGrace) and returns how many.
func (w *Watcher) PruneJournal(ctx context.Context) (int, error) {
	now := w.in.cfg.Now()
	var refs []storage.IntakeJournalRef
	looked := 0
	err := w.in.cfg.Store.EachIntakeJournal(func(site, hash string, rec storage.IntakeRecord) bool {
		looked++
		if w.finished(site, rec, now) {
			refs = append(refs, storage.IntakeJournalRef{Site: site, KeyHash: hash, At: rec.At})
		}
		return looked < maxPruneScan && ctx.Err() == nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for len(refs) > 0 && ctx.Err() == nil {
		batch := refs[:min(len(refs), storage.MaxIntakePrune)]
		refs = refs[len(batch):]
		cmd, err := storage.NewCommand(storage.OpPruneIntakeJournal, "", "", now.UTC(), storage.PruneIntakeJournal{Entries: batch})
		if err != nil {
			return n, err
		}
		res, err := w.in.cfg.Applier.Apply(ctx, cmd)
		if err != nil {
			return n, err
		}
		if k, ok := res.Value.(int); ok {
			n += k
		}
	}
	return n, nil
}

// finished reports whether a journal entry can go.
func (w *Watcher) finished(site string, rec storage.IntakeRecord, now time.Time) bool {
	age := now.Sub(rec.At)
	profile, rel, size, mtime, ok := parseFolderKey(rec.Key)
	if !ok || w.root == "" {
		return age >= journalKeep
	}
	if age < journalGrace {
		return false
	}
	dir, err := WatchDir(w.root, site, profile)
	if err != nil {
		return age >= journalKeep
	}
	info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	return info.Size() != size || info.ModTime().UnixNano() != mtime
}
