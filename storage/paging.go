package storage

import "errors"

// errStop ends an iteration early.
var errStop = errors.New("stop")
