package server

import "quire/server/internal/api"

// searchHandlers serve finding and arranging documents: search,
// fulltext, folders and folder moves, folder permissions and shares.
type searchHandlers struct {
	*api.Env
	// moves runs asynchronous folder moves.
	moves *folderMoves
}
