package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// cmdClusterRemove takes a node out of the cluster: DELETE
// /cluster/nodes/{nodeId} at any member (a follower has the leader do
// it). A removed node's certificate is refused by every member; stop its
// process. To come back it joins again with a new token and an empty
// data dir.
func cmdClusterRemove(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cluster remove", flag.ContinueOnError)
	fs.SetOutput(stderr)
	af := addAPIFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: quire cluster remove --url URL [--token T | --data-dir D] NODE_ID")
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	id := fs.Arg(0)
	if err := c.do(http.MethodDelete, "/cluster/nodes/"+url.PathEscape(id), nil); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "node %s removed from the cluster; stop its process\n", id)
	return nil
}

// cmdClusterLeave takes the member at --url out of the cluster (it asks
// the member for its id, then has it removed).
func cmdClusterLeave(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cluster leave", flag.ContinueOnError)
	fs.SetOutput(stderr)
	af := addAPIFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := af.client()
	if err != nil {
		return err
	}
	var st clusterStatus
	if err := c.do(http.MethodGet, "/cluster/status", &st); err != nil {
		return err
	}
	if st.NodeID == "" {
		return errors.New("the server at --url names no node id")
	}
	if err := c.do(http.MethodDelete, "/cluster/nodes/"+url.PathEscape(st.NodeID), nil); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "node %s left the cluster; stop its process\n", st.NodeID)
	return nil
}
