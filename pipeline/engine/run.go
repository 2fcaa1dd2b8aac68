// Package engine is what the pipeline's action engines, and the packages
// that do their work (ocr, pdfwork, convert, mail, ...), share: external
// programs (tesseract, qpdf, LibreOffice, ...) found and run in a process
// group of their own with bounded output, and the marks on an engine's
// error the pipeline reads (Retryable: try the action again later;
// NoSpace: a full disk, no fault of the action). It imports nothing of
// Quire's.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// waitDelay is how long an engine's output pipes stay open after
// the engine exited or was killed. A descendant that escaped the group
// kill (or a launcher that exits and leaves its worker holding stdout,
// as LibreOffice's does) cannot hold the run open longer than this.
var waitDelay = 5 * time.Second

// Run runs an external engine and returns its stdout; a failure
// carries the end of its stderr.
func Run(ctx context.Context, dir, prog string, args ...string) ([]byte, error) {
	out, _, err := runLog(ctx, dir, prog, 4096, args...)
	return out, err
}

// runLog is Run that also returns the first stderrMax bytes
// of the engine's stderr (its warnings: ocrmypdf names the pages it gave
// up on there); a failure carries them too.
func runLog(ctx context.Context, dir, prog string, stderrMax int, args ...string) ([]byte, string, error) {
	return RunEnv(ctx, dir, nil, prog, stderrMax, args...)
}

// RunEnv is Run with variables added to the engine's environment; it also
// returns the first stderrMax bytes of the engine's stderr, and a failure
// carries them.
func RunEnv(ctx context.Context, dir string, env []string, prog string, stderrMax int, args ...string) ([]byte, string, error) {
	stdout := LimitedBuffer{n: maxOutput}
	var stderr strings.Builder
	err := streamEnv(ctx, dir, env, &stdout, &limitedWriter{w: &stderr, n: stderrMax}, prog, args...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, stderr.String(), ctx.Err()
		}
		return nil, stderr.String(), &Error{Prog: filepath.Base(prog), Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.Bytes(), stderr.String(), nil
}

// Error is an engine that exited with an error; its message is the
// program's name, the exit status and the end of its stderr.
type Error struct {
	Prog   string
	Err    error
	Stderr string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s failed: %v: %s", e.Prog, e.Err, e.Stderr)
}
func (e *Error) Unwrap() error { return e.Err }

// Stream runs an external engine (tesseract, pdftoppm, pdfinfo,
// ocrmypdf, soffice, pdftotext) with its output going to stdout and
// stderr. Every engine run goes through here: the engine gets its own
// process group, the whole group is killed when ctx ends and again when
// the engine exits, and the output pipes are closed waitDelay after
// either, so no helper process it started outlives the run or holds the
// run open (LibreOffice's launcher leaves soffice.bin holding stdout).
func Stream(ctx context.Context, dir string, stdout, stderr io.Writer, prog string, args ...string) error {
	return streamEnv(ctx, dir, nil, stdout, stderr, prog, args...)
}

// streamEnv is Stream with variables added to the engine's
// environment (OMP_THREAD_LIMIT for tesseract).
func streamEnv(ctx context.Context, dir string, env []string, stdout, stderr io.Writer, prog string, args ...string) error {
	dir, args = absArgs(dir, args)
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	if dir != "" {
		// Scratch files of the engine's own (ocrmypdf, LibreOffice) go
		// to the job's directory, whose free space OCR checks and which
		// is removed after the run.
		env = append([]string{"TMPDIR=" + dir, "TMP=" + dir, "TEMP=" + dir}, env...)
	}
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return err
	}
	err := cmd.Wait()
	reapGroup(cmd)
	if errors.Is(err, exec.ErrWaitDelay) && ctx.Err() == nil {
		// The engine itself exited successfully; a descendant held its
		// output open until the delay closed it.
		return nil
	}
	return err
}

// absArgs makes a relative working directory absolute, and with it every
// argument that names a path inside it (as itself, after "=", or after
// "file://": LibreOffice's -env:UserInstallation=file://...). The engine
// runs in dir, where a path relative to the server's working directory
// names nothing: with make run's --data-dir ./data, pdfinfo was given
// data/tmp/quire-action-N/in.pdf to open inside data/tmp/quire-action-N
// (issue 46). Callers pass absolute paths already (node makes the data
// dir absolute, New the temp dir); this keeps a relative one from ever
// reaching an engine.
func absArgs(dir string, args []string) (string, []string) {
	if dir == "" || filepath.IsAbs(dir) {
		return dir, args
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, args
	}
	rel := filepath.Clean(dir)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		for _, pre := range []string{"", "=", "file://"} {
			j := strings.Index(a, pre+rel)
			if j < 0 || pre == "" && j != 0 {
				continue
			}
			k := j + len(pre) + len(rel)
			if k < len(a) && a[k] != filepath.Separator && a[k] != '/' {
				continue // another name that starts the same
			}
			out[i] = a[:j+len(pre)] + abs + a[k:]
			break
		}
	}
	return abs, out
}

// MaxText bounds the text an action keeps (characterMax -1 included): the
// text is stored with the document and indexed in one piece.
const MaxText = 8 << 20

// maxOutput bounds the stdout of an engine kept in memory (the text
// of one OCR page, a version line).
const maxOutput = 2 * MaxText

// LimitedBuffer keeps the first n bytes written and drops the rest.
type LimitedBuffer struct {
	b []byte
	n int
}

// NewLimitedBuffer is a LimitedBuffer that keeps n bytes.
func NewLimitedBuffer(n int) *LimitedBuffer { return &LimitedBuffer{n: n} }

func (l *LimitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// Bytes returns the bytes kept.
func (l *LimitedBuffer) Bytes() []byte { return l.b }

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	n := len(p)
	if l.n <= 0 {
		return n, nil
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	l.n -= len(p)
	_, err := l.w.Write(p)
	return n, err
}

// ContextReader reads r until ctx ends: a long copy stops with ctx's error.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
