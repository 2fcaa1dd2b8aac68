package api

import "time"

// ReadyLag is how far behind storage the index may be for /readyz (and
// for "ready" in GET /system/health).
const ReadyLag = 5 * time.Second
