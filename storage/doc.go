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
//
// # Files by domain
//
// storage stays one package (issue 45): its transaction, keys and applier
// table are what enforce the one write path. Its files follow the server's
// domains (server/<domain>), so a change to one part of the API finds its
// records here:
//
//   - the store itself: db.go (Config, Open, Apply's transaction),
//     command.go (Ops, Command, the appliers table), keys.go (every key
//     prefix), format.go (the store format), fullopen.go, group.go (group
//     commit), diskguard.go, diskfree_*.go, du_*.go, prealloc_*.go,
//     trim_*.go, files.go, errors.go, limits.go, paging.go, reads.go,
//     wire.go (chunk commands' binary form), scheduler.go (the marks of
//     the core's daily jobs: the nightly disposition)
//   - the cluster: replica.go, digest.go, clusterstate.go, cmdids.go,
//     requests.go (exactly-once writes), session.go (read your writes),
//     backup.go
//   - documents: documents.go, tags.go, docattrs.go, attrdefs.go,
//     attrreads.go, attrvalues.go, versions.go, artifacts.go, archives.go,
//     publications.go, locks.go, retention.go, quota.go, stats.go,
//     purge.go (hard deletes and their cascade),
//     indexsrc.go (what the index holds of a document)
//   - content: content.go (chunks), contenttypes.go, examine.go,
//     watermarks.go, renditions.go
//   - search: search.go, fulltextdoc.go, texts.go, folders.go,
//     foldermove.go, folderperms.go, shares.go (the records; the rule
//     that reads them is package access, whose types storage names as
//     aliases), actionrights.go (the appliers' re-check, through access)
//   - flow: actions.go, workflows.go, rulesets.go, queues.go, reviews.go,
//     notifications.go, activity.go, agreements.go
//   - vocabulary: schemas.go, entities.go, sequences.go, mappings.go,
//     locales.go
//   - signatures: envelopes.go, secrets.go
//   - intake: intake.go (profiles, the journal, errors), webhooks.go
//   - admin: sites.go, siteconfig.go, apikeys.go, credgroups.go,
//     inference.go, shortlinks.go, events.go (event subscriptions and the
//     events' outbox)
//   - directory: users.go, sitegroups.go
package storage
