package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
	"time"

	"quire/cluster"
)

// cmdClusterVerify runs POST /cluster/verify at the member at --url: the
// leader takes a digest of every member's store at one log index and
// compares them (cluster/DESIGN.md, "Replicas proven equal"). It prints
// each member's digest and fails (exit 1) when a member differs or no
// digest is held by a majority.
func cmdClusterVerify(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cluster verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	af := addAPIFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	c.http.Timeout = 6 * time.Minute // the walk of a large store
	var rep cluster.VerifyReport
	if err := c.do(http.MethodPost, "/cluster/verify", &rep); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "digests at index %d\n", rep.Index)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSHA-256\tDOCUMENTS\tVERSIONS\tTAGS\tATTRIBUTES\tCHUNKS\tKEYS\tTOOK\tEQUAL")
	for _, m := range rep.Members {
		if m.Err != "" {
			fmt.Fprintf(tw, "%s\t(no digest: %s)\t\t\t\t\t\t\t\t\n", m.NodeID, m.Err)
			continue
		}
		d := m.Digest
		equal := fmt.Sprint(m.Equal)
		if m.NotComparable != "" {
			equal = m.NotComparable
		}
		fmt.Fprintf(tw, "%s\t%.16s\t%d\t%d\t%d\t%d\t%d\t%d\t%v\t%s\n", m.NodeID, d.SHA256, d.Documents, d.Versions, d.Tags, d.Attributes, d.Chunks, d.Keys, d.Took.Round(time.Millisecond), equal)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case rep.Undecided:
		return errors.New("cluster verify: the members' digests differ and none is held by a majority")
	case len(rep.Divergent) > 0:
		return fmt.Errorf("cluster verify: %v differ from the majority: demoted; rebuild with quire cluster rejoin", rep.Divergent)
	}
	if len(rep.NotComparable) > 0 {
		// Neither equal nor divergent: their code takes another version's
		// digest (a rolling upgrade); nothing is wrong, nothing was proven.
		fmt.Fprintf(stdout, "every member that answered with the leader's digest version (%d) holds the same data; not compared: %v (another digest version: verify again once every member runs the same release)\n", rep.Version, rep.NotComparable)
		return nil
	}
	fmt.Fprintln(stdout, "every member that answered holds the same data")
	return nil
}
