package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/server/internal/api"
	"quire/storage"
)

// Session consistency in a cluster (API.md, "Reading your writes on any
// member"): a write's answer carries the log index the write was applied
// at (Quire-Applied-Index, and the cookie quire_applied_index); a request
// that sends an index (the header Quire-Min-Applied-Index, or the cookie
// back) is answered by any member only once that member applied it,
// waiting up to sessionWait. So a client behind a load balancer reads its
// own writes on whichever member answers.

const (
	headerAppliedIndex    = "Quire-Applied-Index"
	headerMinAppliedIndex = "Quire-Min-Applied-Index"
	cookieAppliedIndex    = "quire_applied_index"
)

// cookieAppliedMaxAge is the cookie's lifetime in seconds: a member
// catches up within seconds, and a cookie that outlived its cluster (one
// rebuilt from scratch, whose indexes start again at 1) must not hold
// every request for long.
const cookieAppliedMaxAge = 300

// sessionWait bounds how long a member waits to apply a requested index.
const sessionWait = 5 * time.Second

// ClusterWaiter is a member that waits until its store applied a log
// index (cluster.Node.WaitApplied).
type ClusterWaiter interface {
	WaitApplied(ctx context.Context, index uint64) error
	AppliedIndex() uint64
}

// msgNotApplied answers a request whose index this member has not
// applied within sessionWait.
const msgNotApplied = "This member has applied the log up to index %d, not yet %d (the index a write answered in Quire-Applied-Index): try again, or another member"

// sessionIndex waits for the index a request names, and gives a write's
// answer the index it was applied at.
func (s *Server) sessionIndex(c *fiber.Ctx) error {
	w, ok := s.Deps.Cluster.(ClusterWaiter)
	if !ok {
		return c.Next()
	}
	var want uint64
	if h := c.Get(headerMinAppliedIndex); h != "" {
		v, err := strconv.ParseUint(h, 10, 64)
		if err != nil {
			return api.Invalid(headerMinAppliedIndex, "'"+headerMinAppliedIndex+"' must be a log index (a whole number) from Quire-Applied-Index")
		}
		want = v
	} else if v, err := strconv.ParseUint(c.Cookies(cookieAppliedIndex), 10, 64); err == nil {
		want = v
	}
	if want > 0 && w.AppliedIndex() < want {
		ctx, cancel := context.WithTimeout(c.UserContext(), sessionWait)
		err := w.WaitApplied(ctx, want)
		cancel()
		if err != nil {
			c.Set(fiber.HeaderRetryAfter, "1")
			return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"message": fmt.Sprintf(msgNotApplied, w.AppliedIndex(), want)})
		}
	}
	ctx, note := storage.WithIndexNote(c.UserContext())
	c.SetUserContext(ctx)
	err := c.Next()
	if idx := note.Max(); idx > 0 {
		c.Set(headerAppliedIndex, strconv.FormatUint(idx, 10))
		c.Cookie(&fiber.Cookie{Name: cookieAppliedIndex, Value: strconv.FormatUint(max(idx, want), 10), Path: "/", HTTPOnly: true, SameSite: "Lax", MaxAge: cookieAppliedMaxAge})
	}
	return err
}
