package admin

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"net/http"
	"sort"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/server/internal/api"
)

// certWarnDays: a certificate expiring within this many days is marked
// "expiring" in GET /system/health (as quire doctor warns).
const certWarnDays = 30

// HandleGetSystemHealth serves GET /system/health (Admins; Quire): one
// summary of what /readyz, /cluster/status, /version and the metrics say
// separately, for the web console's health page: the disk and its write
// gate, the index lag, the pipeline queue, the cluster members and
// leader, certificate expiry and the version. Always 200 (the state is
// in the body: "ready" is what /readyz would say).
func (s *Handlers) HandleGetSystemHealth(r *api.Request) error {
	now := r.Now
	ws := s.DB.WriteState()
	lsm, vlog := s.DB.Size()
	storageOut := fiber.Map{"writable": ws.Writable, "freeBytes": ws.Free, "reserveBytes": ws.Reserve, "lsmBytes": lsm, "vlogBytes": vlog}
	if !ws.Writable {
		storageOut["kind"], storageOut["reason"] = ws.Kind, ws.Reason
	}
	if !ws.Since.IsZero() {
		storageOut["since"] = api.FormatDate(ws.Since)
	}
	lag := s.Deps.Indexer.TextLag()
	ready := lag < api.ReadyLag
	pipe := fiber.Map{"running": false, "queued": 0, "oldestDueSeconds": 0.0}
	if s.Deps.Pipeline != nil {
		running, queued, oldest := s.Deps.Pipeline.Status()
		pipe = fiber.Map{"running": running, "queued": queued, "oldestDueSeconds": oldest.Seconds()}
		ready = ready && (running || !s.Leads())
	}
	out := fiber.Map{
		"version":  s.Deps.Version,
		"storage":  storageOut,
		"index":    fiber.Map{"queued": s.Deps.Indexer.Queued(), "lagSeconds": lag.Seconds()},
		"pipeline": pipe,
	}
	// The cluster: members and leader; a single server has one member,
	// itself, and leads.
	cl := fiber.Map{"clustered": false, "members": []fiber.Map{{"nodeId": "", "leader": true, "voter": true}}, "leaderId": ""}
	var memberIDs map[string]bool // the Raft configuration's servers (nil: not a member)
	if s.Deps.Cluster != nil {
		st := s.Deps.Cluster.Status()
		members := make([]fiber.Map, 0, len(st.Servers))
		memberIDs = make(map[string]bool, len(st.Servers))
		for _, p := range st.Servers {
			memberIDs[p.ID] = true
			members = append(members, fiber.Map{"nodeId": p.ID, "raftAddress": p.Address, "voter": p.Voter, "leader": p.ID == st.LeaderID})
		}
		cl = fiber.Map{"clustered": true, "nodeId": st.ID, "state": st.State, "leaderId": st.LeaderID, "members": members}
		if st.Halted != "" {
			cl["halted"] = st.Halted
		}
		if st.Unreadable != "" {
			cl["raftStateUnreadable"] = st.Unreadable
		}
		ok, _ := api.ClusterReady(s.Deps.Cluster)
		ready = ready && ok
	}
	out["cluster"] = cl
	// The server's own mail settings (the configuration file's [smtp]):
	// the only way reset codes and temporary passwords leave the server
	// (never a site's notification.smtp). Where they go, not the
	// credentials.
	mail := fiber.Map{"configured": false}
	if s.Deps.Pipeline != nil {
		if m := s.Deps.Pipeline.ServerMailSettings(); m.Host != "" || m.From != "" {
			mail = fiber.Map{"configured": m.Configured, "host": m.Host, "port": m.Port, "connectionSecurity": m.Security, "from": m.From}
		}
	}
	out["serverMail"] = mail
	// Certificates: the listener's (HTTPS) and every site's signing
	// certificates, soonest expiry first.
	type certRow struct {
		m        fiber.Map
		notAfter time.Time
	}
	var rows []certRow
	cert := func(kind, site, alias, subject string, notAfter time.Time) fiber.Map {
		days := int(notAfter.Sub(now).Hours() / 24)
		state := "ok"
		switch {
		case !now.Before(notAfter):
			state = "expired"
		case days < certWarnDays:
			state = "expiring"
		}
		c := fiber.Map{"kind": kind, "subject": subject, "notAfter": api.FormatDate(notAfter), "daysLeft": days, "state": state}
		if site != "" {
			c["siteId"], c["alias"] = site, alias
		}
		rows = append(rows, certRow{c, notAfter})
		return c
	}
	// The listeners' certificates carry their SHA-256 fingerprint: a
	// scanner or client that pins a self-signed certificate is given it.
	if c := s.Deps.TLSCertificate; c != nil {
		cert("listener", "", "", c.Subject.String(), c.NotAfter)["sha256"] = certSHA256(c)
	}
	if c := s.Deps.SMTPCertificate; c != nil {
		cert("smtp-intake", "", "", c.Subject.String(), c.NotAfter)["sha256"] = certSHA256(c)
	}
	// A cluster member's Raft TLS: the cluster CA, this node's own
	// certificate, and each peer's as it presented it to this node in a
	// mutual TLS handshake since this node started (a member this node
	// has not talked to is not listed: ask it; a removed one neither).
	if id := s.Deps.ClusterTLS; id != nil {
		cert("cluster-ca", "", "", id.CA.Subject.String(), id.CA.NotAfter)
		own := id.Leaf()
		self := id.NodeID
		c := cert("cluster-node", "", "", own.Subject.String(), own.NotAfter)
		c["nodeId"], c["self"] = self, true
		for _, p := range id.Peers() {
			if p.NodeID == self || (memberIDs != nil && !memberIDs[p.NodeID]) {
				continue
			}
			c := cert("cluster-node", "", "", p.Subject, p.NotAfter)
			c["nodeId"], c["seenAt"] = p.NodeID, api.FormatDate(p.SeenAt)
		}
	}
	all, err := s.DB.AllSecrets()
	if err != nil {
		return err
	}
	for site, secs := range all {
		for _, sec := range secs {
			cert("site", site, sec.Alias, sec.Subject, sec.NotAfter)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].notAfter.Before(rows[j].notAfter) })
	certs := make([]fiber.Map, 0, len(rows))
	for _, c := range rows {
		certs = append(certs, c.m)
	}
	out["certificates"] = certs
	out["ready"] = ready
	return r.Status(http.StatusOK).JSON(out)
}

// certSHA256 is a certificate's SHA-256 fingerprint in hex, as quire
// doctor and the log print it.
func certSHA256(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return hex.EncodeToString(sum[:])
}
