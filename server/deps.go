package server

import (
	"quire/server/admin"
	"quire/server/internal/api"
)

// What New takes lives with the request API, which hands it to every
// handler (api.Env); these names keep it server's to the rest of Quire.
type (
	// Deps is what the server needs from the rest of the node.
	Deps = api.Deps
	// Pipeline is what the server asks of the action pipeline.
	Pipeline = api.Pipeline
	// Destinations checks destinations users give against the outbound
	// policy.
	Destinations = api.Destinations
	// ClusterInfo is what the server asks of the node's cluster member.
	ClusterInfo = api.ClusterInfo
	// Clock is the daily scheduler's time.
	Clock = api.Clock
	// Timeouts bound slow and idle clients.
	Timeouts = api.Timeouts
)

// The cluster's join, readmission and verification contract lives with
// the admin handlers that serve it (server/admin, cluster.go); these names
// keep it server's for node, which implements it.
type (
	ClusterVerifier     = admin.ClusterVerifier
	ClusterJoinRequest  = admin.ClusterJoinRequest
	ClusterIdentity     = admin.ClusterIdentity
	ClusterJoinResponse = admin.ClusterJoinResponse
	ClusterError        = admin.ClusterError
	ClusterJoiner       = admin.ClusterJoiner
	ClusterReadmitter   = admin.ClusterReadmitter
)
