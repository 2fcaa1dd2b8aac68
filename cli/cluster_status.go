package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
)

type clusterStatus struct {
	NodeID            string `json:"nodeId"`
	RaftAddress       string `json:"raftAddress"`
	State             string `json:"state"`
	LeaderID          string `json:"leaderId"`
	Term              uint64 `json:"term"`
	CommitIndex       uint64 `json:"commitIndex"`
	AppliedIndex      uint64 `json:"appliedIndex"`
	LastSnapshotIndex uint64 `json:"lastSnapshotIndex"`
	Halted            string `json:"halted"`
	Peers             []struct {
		NodeID      string `json:"nodeId"`
		RaftAddress string `json:"raftAddress"`
		Voter       bool   `json:"voter"`
		Leader      bool   `json:"leader"`
	} `json:"peers"`
}

// cmdClusterStatus prints GET /cluster/status of the member at --url.
func cmdClusterStatus(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cluster status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	af := addAPIFlags(fs)
	asJSON := fs.Bool("json", false, "print the server's JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := c.do(http.MethodGet, "/cluster/status", &raw); err != nil {
		return err
	}
	if *asJSON {
		fmt.Fprintln(stdout, string(raw))
		return nil
	}
	var st clusterStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "node %s (%s) is %s; leader %s; term %d; commit %d, applied %d, snapshot %d\n",
		st.NodeID, st.RaftAddress, st.State, orNone(st.LeaderID), st.Term, st.CommitIndex, st.AppliedIndex, st.LastSnapshotIndex)
	if st.Halted != "" {
		fmt.Fprintf(stdout, "HALTED: %s\n", st.Halted)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tRAFT ADDRESS\tVOTER\tLEADER")
	for _, p := range st.Peers {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%v\n", p.NodeID, p.RaftAddress, p.Voter, p.Leader)
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
