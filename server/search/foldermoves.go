package search

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"quire/guard"
	"quire/server/internal/api"
	"quire/server/internal/testhooks"
	"quire/storage"
)

// moveStep is how many documents one command of a folder move moves: a
// step must fit one Badger transaction (with 8 MiB memtables, about a
// megabyte of writes), and each document costs its record, path index and
// folder entries. (A variable so that a test moves a folder in several
// steps without creating hundreds of documents.)
const moveStep = 200

// folderMoves runs asynchronous folder moves (POST /folders/{indexKey}/
// moves). Jobs are recorded in storage, so a move a restart interrupted
// is resumed at start.
//
// A job a request started runs on the server that took the request (the
// request may wait for it), leader or not. Pending jobs are resumed by
// the leader only (SetLeader): when it takes over, and every
// retentionEvery for jobs a member left behind when it stopped. Steps are
// commands, so a job that two servers run at once (a member's and the
// leader's resumption) still moves each document once.
type folderMoves struct {
	s    *Handlers
	mu   sync.Mutex
	busy map[string]bool // site/jobId running
	wg   sync.WaitGroup
	ctx  context.Context
	stop context.CancelFunc
	// leadCtx is cancelled when this server stops leading; the jobs it
	// resumed run on it and are counted in leadWG too.
	leadCtx  context.Context
	leadStop context.CancelFunc
	leadWG   sync.WaitGroup
}

func NewFolderMoves(s *Handlers) *folderMoves {
	ctx, cancel := context.WithCancel(context.Background())
	lc, lcancel := context.WithCancel(ctx)
	lcancel() // not leading until lead
	return &folderMoves{s: s, busy: map[string]bool{}, ctx: ctx, stop: cancel, leadCtx: lc, leadStop: lcancel}
}

// Lead makes the server resume pending jobs, and resumes them now.
func (m *folderMoves) Lead() {
	m.mu.Lock()
	m.leadCtx, m.leadStop = context.WithCancel(m.ctx)
	m.mu.Unlock()
	m.Resume()
}

// StepDown cancels the jobs this server resumed and waits for them; they
// stay pending for the next leader.
func (m *folderMoves) StepDown() {
	m.mu.Lock()
	m.leadStop()
	m.mu.Unlock()
	m.leadWG.Wait()
}

// Resume starts every pending job found in storage that does not run
// here already (only while leading).
func (m *folderMoves) Resume() {
	m.mu.Lock()
	ctx := m.leadCtx
	m.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	jobs, err := m.s.DB.PendingFolderMoves()
	if err != nil {
		m.s.Log.Error("list pending folder moves", "err", err)
		return
	}
	for site, js := range jobs {
		for _, j := range js {
			m.start(ctx, true, site, j)
		}
	}
}

// Run moves a job's folder step by step in the background. The channel
// gets the outcome: nil once the move is done, else why it stopped (a
// failure is also recorded on the job; a shutdown leaves it pending, to
// resume at the next start).
func (m *folderMoves) Run(site string, j storage.FolderMoveJob) <-chan error {
	return m.start(m.ctx, false, site, j)
}

func (m *folderMoves) start(ctx context.Context, led bool, site string, j storage.FolderMoveJob) <-chan error {
	out := make(chan error, 1)
	key := site + "/" + j.JobID
	m.mu.Lock()
	if m.busy[key] || ctx.Err() != nil {
		m.mu.Unlock()
		out <- errMoveNotRun
		return out
	}
	m.busy[key] = true
	m.wg.Add(1)
	if led {
		m.leadWG.Add(1)
	}
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		if led {
			defer m.leadWG.Done()
		}
		defer func() {
			m.mu.Lock()
			delete(m.busy, key)
			m.mu.Unlock()
		}()
		// A panic fails the job like an error: recorded, not left running.
		err := guard.Run(m.s.Log, guard.FolderMove, func() error {
			return m.s.moveFolder(ctx, site, j.UserID, j.JobID, j.Source, j.Target, j.Name)
		}, "site", site, "job", j.JobID)
		out <- err
		var wr *storage.WriteRefusedError
		switch {
		case err == nil, errors.Is(err, context.Canceled):
		case errors.As(err, &wr):
			// A failed disk: the job is not the move's fault and stays
			// pending, to resume at the next start.
			m.s.Log.Warn("folder move stopped: the store refuses writes", "site", site, "job", j.JobID, "err", err)
		default:
			m.s.Log.Warn("folder move failed", "site", site, "job", j.JobID, "err", err)
			cmd, cerr := storage.NewCommand(storage.OpFinishFolderMove, site, j.UserID, time.Now().UTC(), storage.FinishFolderMove{JobID: j.JobID, Message: err.Error()})
			if cerr == nil {
				_, cerr = m.s.Deps.Applier.Apply(context.Background(), cmd)
			}
			if cerr != nil {
				m.s.Log.Error("record failed folder move", "job", j.JobID, "err", cerr)
			}
		}
	}()
	return out
}

// errMoveNotRun: the job is already running, the server is stopping (a
// pending job resumes at the next start) or the request stopped waiting.
var errMoveNotRun = api.ErrStatus(http.StatusServiceUnavailable, "the folder move continues in the background")

func (m *folderMoves) Shutdown() {
	m.stop()
	m.wg.Wait()
}

// moveFolder applies the steps of a move until it is done. Each step is
// its own command; a crash between steps leaves every document whole, in
// the source or in the target, and the job resumes.
func (s *Handlers) moveFolder(ctx context.Context, site, user, jobID, source, target, name string) error {
	for range 1 << 20 { // bounded: a step moves up to moveStep documents
		if err := ctx.Err(); err != nil {
			return err
		}
		cmd, err := storage.NewCommand(storage.OpMoveFolder, site, user, time.Now().UTC(), storage.MoveFolder{JobID: jobID, Source: source, Target: target, Limit: testhooks.MoveStep(moveStep), Name: name})
		if err != nil {
			return err
		}
		res, err := s.Deps.Applier.Apply(ctx, cmd)
		var wr *storage.WriteRefusedError
		if errors.As(err, &wr) && wr.Kind != storage.KindIOError {
			// A full disk: wait for space, then go on where it stopped.
			if err := s.waitWritable(ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if res.Value.(storage.MoveFolderResult).Done {
			return nil
		}
	}
	return errors.New("folder move did not finish")
}

// waitWritable waits until the store takes writes again or ctx ends.
func (s *Handlers) waitWritable(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for !s.DB.WriteState().Writable {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// checkMoveTarget validates a target folder ("" or "/" is the root).
func checkMoveTarget(key, p string) (string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return "", nil
	}
	q, err := CheckFolderPath(p)
	if err != nil {
		return "", api.Invalid(key, "invalid '"+key+"'")
	}
	return q, nil
}

// checkFolderName validates a folder's new name: one path segment, as
// CheckFolderPath takes it.
func checkFolderName(n string) (string, error) {
	if strings.Contains(n, "/") || strings.TrimSpace(n) == "" {
		return "", api.Invalid("name", "invalid 'name': one folder name, without '/'")
	}
	q, err := CheckFolderPath(n)
	if err != nil || q != n {
		return "", api.Invalid("name", "invalid 'name': one folder name, without '/'")
	}
	return q, nil
}

// requireMoveAccess checks the folder permissions a move needs: DELETE
// where the folder leaves, WRITE where it arrives.
func (s *Handlers) requireMoveAccess(r *api.Request, source, target string) error {
	if !s.FolderAllows(r, source, storage.FolderDelete) {
		return api.FolderDenied(source, storage.FolderDelete)
	}
	if !s.FolderAllows(r, target, storage.FolderWrite) {
		return api.FolderDenied(target, storage.FolderWrite)
	}
	return nil
}

// HandleMoveFolder serves POST /folders/{indexKey}/moves: the folder moves
// into the folder given by path, asynchronously (201).
func (s *Handlers) HandleMoveFolder(r *api.Request) error {
	k := api.PathParam(r, "indexKey")
	source, err := ParseFolderIndexKey(k)
	if err != nil {
		return err
	}
	var b struct {
		Path *string `json:"path"`
		// Name (Quire, issue 47): the folder's name in path, a rename;
		// default its own.
		Name *string `json:"name"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if b.Path == nil {
		return api.Invalid("path", "'path' is required")
	}
	target, err := checkMoveTarget("path", *b.Path)
	if err != nil {
		return err
	}
	name := ""
	if b.Name != nil {
		if name, err = checkFolderName(*b.Name); err != nil {
			return err
		}
		if _, own := path.Split(source); own == name {
			name = "" // its own name: a plain move
		}
	}
	if err := s.requireMoveAccess(r, source, target); err != nil {
		return err
	}
	if _, err := s.folderOfIndexKey(r, k); err != nil { // early answer; the applier decides
		return err
	}
	id := r.NewID()
	res, err := s.Apply(r, storage.OpStartFolderMove, storage.StartFolderMove{JobID: id, Source: source, Target: target, Name: name})
	if err != nil {
		return err
	}
	s.Moves.Run(r.Site, res.Value.(storage.FolderMoveJob))
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: "folder move request created"})
}

// HandleIndexFolderMove serves POST /indices/{indexType}/move: the source
// folder moves into the target folder before the answer.
func (s *Handlers) HandleIndexFolderMove(r *api.Request) error {
	if r.Params("indexType") != "folder" {
		return api.Invalid("indexType", "invalid 'indexType'")
	}
	var b struct {
		Source *string `json:"source"`
		Target *string `json:"target"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	var items []storage.ValidationItem
	if b.Source == nil || strings.Trim(*b.Source, "/") == "" {
		items = append(items, storage.ValidationItem{Key: "source", Msg: "'source' is required"})
	}
	if b.Target == nil {
		items = append(items, storage.ValidationItem{Key: "target", Msg: "'target' is required"})
	}
	if err := api.CheckErrors(items); err != nil {
		return err
	}
	source, err := CheckFolderPath(*b.Source)
	if err != nil {
		return api.Invalid("source", "invalid 'source'")
	}
	target, err := checkMoveTarget("target", *b.Target)
	if err != nil {
		return err
	}
	if err := s.requireMoveAccess(r, source, target); err != nil {
		return err
	}
	// The move is recorded as a job first (which validates it: not found,
	// into itself), like an asynchronous one, so that a crash half-way
	// leaves a job the next start resumes; the request waits for it. The
	// move runs on the server's context: a client that hangs up does not
	// stop it half-way.
	res, err := s.Apply(r, storage.OpStartFolderMove, storage.StartFolderMove{JobID: r.NewID(), Source: source, Target: target})
	if err != nil {
		return err
	}
	select {
	case err = <-s.Moves.Run(r.Site, res.Value.(storage.FolderMoveJob)):
	case <-r.UserContext().Done():
		return errMoveNotRun
	}
	if errors.Is(err, context.Canceled) {
		err = errMoveNotRun
	}
	if err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Folder moved"})
}
