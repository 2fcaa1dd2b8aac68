package api

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/ratelimit"
	"quire/storage"
)

// Env is what the request API shares with every handler: the store
// reads come from, the applier writes go through, the clock, the logger,
// the links in answers, the index gate and the sign-in budget. Its
// methods are the request API: Wrap (the request context, the site and
// permission checks, exactly-once writes), Apply, the request-side guard,
// links and signed URLs.
type Env struct {
	// Deps are what New was given, with its defaults filled in;
	// Deps.Applier applies every command (Apply), wrapped so that each
	// command of a keyed request carries its key (requestkeys.go).
	Deps Deps
	// DB serves reads (Deps.Store). Writes go through Apply.
	DB *storage.DB
	// Log is the HTTP component's logger, Now the clock (Deps.Now).
	Log *slog.Logger
	Now func() time.Time
	// Dest checks destinations users give (webhook URLs, a site's LLM
	// URL and SMTP host) against the outbound policy (Deps.Pipeline; nil:
	// none).
	Dest Destinations
	// Backups tracks the long streams (online backups, archives) that
	// shutdown stops.
	Backups *Backups
	// Links checks Host headers for the links in answers (nil: the
	// configured public URL is always used).
	Links *linkHosts
	// Gate holds back writes feeding the fulltext index while it lags
	// (indexgate.go; nil without an indexer).
	Gate *indexGate
	// Limits are the rate limits of the routes that need no token and of
	// sign-ins (the core's ratelimits.go).
	Limits *ratelimit.Set
	// RenderError answers a request with an error as the core's error
	// handler does (the core's errorhandler.go): exactly-once writes render a run's
	// error before they record its answer.
	RenderError func(c *fiber.Ctx, err error) error
	// RouteFlags are the route table's flags of each route ("METHOD
	// path"; the core's routes.go builds them from its rows).
	RouteFlags map[string]RouteFlags
	// PasswordGate lets one password check per client address run at a time
	// (passwords.go).
	PasswordGate addrGate
}
