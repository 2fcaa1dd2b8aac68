package search

import (
	"quire/server/internal/api"
)

// Handlers serve finding and arranging documents: search,
// fulltext, folders and folder moves, folder permissions and shares.
type Handlers struct {
	*api.Env
	// moves runs asynchronous folder moves.
	Moves *folderMoves
}
