// Package storage is Quire's single source of truth: documents, tags,
// metadata, sites, API keys and content chunks, all held in one Badger
// database. The resources and their fields are SERVICE-SPEC.md §2, the
// deletion states §3.2, the action states §3.4, the input limits §8.
//
// Every state change is a serializable Command applied by DB.Apply in one
// Badger transaction. Handlers build commands; they never write Badger
// directly. The same commands can be replicated through Raft by the cluster
// package, which is why Apply never reads the clock, generates ids or draws
// random numbers: all of that is decided by the caller and carried in the
// command.
//
// Reads (GetDocument, ListDocuments, OpenContent, ...) go straight to Badger.
// See DESIGN.md for the key layout and the content model.
package storage
