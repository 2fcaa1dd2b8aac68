package server

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/ratelimit"
	"quire/storage"
)

// env is what the request API shares with every handler: the store
// reads come from, the applier writes go through, the clock, the logger,
// the links in answers, the index gate and the sign-in budget. Its
// methods are the request API: wrap (the request context, the site and
// permission checks, exactly-once writes), apply, the request-side guard,
// links and signed URLs.
type env struct {
	// db serves reads. Writes go through applier (apply).
	db *storage.DB
	// applier applies commands: the store itself or a cluster node,
	// wrapped so that every command of a keyed request carries its key
	// (requestkeys.go).
	applier storage.Applier
	// auth verifies tokens and signs URLs.
	auth *auth.Authenticator
	log  *slog.Logger
	now  func() time.Time
	// publicURL is the base of upload and download URLs handed to
	// clients (Deps.PublicURL, without a trailing slash).
	publicURL string
	// maxBodyBytes limits JSON request bodies (Deps.MaxBodyBytes).
	maxBodyBytes int
	// links checks Host headers for the links in answers (nil: the
	// configured public URL is always used).
	links *linkHosts
	// gate holds back writes feeding the fulltext index while it lags
	// (indexgate.go; nil without an indexer).
	gate *indexGate
	// limits are the rate limits of the routes that need no token and of
	// sign-ins (ratelimits.go).
	limits *ratelimit.Set
	// renderError answers a request with an error as the core's error
	// handler does (errorhandler.go): exactly-once writes render a run's
	// error before they record its answer.
	renderError func(c *fiber.Ctx, err error) error
	// pwGate lets one password check per client address run at a time
	// (passwords.go).
	pwGate addrGate
}
