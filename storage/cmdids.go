package storage

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Commands with an id (cluster/DESIGN.md, "Unknown outcomes resolved"):
// a cluster member gives every write command it proposes or forwards an
// id of its own (Command.ID). The applier records the id with the
// command's result in the command's transaction, and a command that
// comes again with a recorded id answers the recorded result and writes
// nothing. So a member whose forward broke off (the leader changed, the
// connection dropped: it cannot know whether the command was applied)
// asks the leader by sending the command again: the answer is the first
// result when it was applied, or the command is applied now, once. The
// records are kept CommandIDWindow by the commands' own times and pruned
// by later commands (at most 16 each), the way request records are.

// CommandIDWindow is how long a command id's record is kept: far longer
// than a member resolves an outcome for (leaderWait, 10 s), short enough
// that the records stay few (about 2 keys per write of the last 10
// minutes).
const CommandIDWindow = 10 * time.Minute

// MaxCommandIDBytes bounds Command.ID.
const MaxCommandIDBytes = 64

// commandRecord is what ci/<id> holds.
type commandRecord struct {
	At   time.Time       `json:"at"`
	Op   Op              `json:"op"`
	Type string          `json:"type,omitempty"`
	Val  json.RawMessage `json:"value,omitempty"`
	// Opaque: the result's type is not encoded (resultTypes).
	Opaque bool `json:"opaque,omitempty"`
}

// ErrAppliedWithoutResult is the answer to a command sent again whose
// first run was applied with a result that is not recorded: applied,
// nothing more to say (the caller answers as for an unknown outcome).
var ErrAppliedWithoutResult = errors.New("storage: the command was applied before; its result is not recorded")

func commandKey(id string) []byte { return []byte(pfxCommandID + id) }

func commandDueKey(at time.Time, id string) []byte {
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(at.UnixNano()))
	return []byte(pfxCommandDue + hex.EncodeToString(ts[:]) + "/" + id)
}

// applyOnceByID runs c's applier unless its id was recorded within the
// window, then answers the recorded result.
func applyOnceByID(t *tx, c *Command, fn applyFunc) (any, error) {
	if len(c.ID) > MaxCommandIDBytes || !CheckIdempotencyKey(c.ID) {
		return nil, Invalid("id", fmt.Sprintf("a command id is 1 to %d printable ASCII characters", MaxCommandIDBytes))
	}
	// One command in pruneCommandIDsEvery prunes (chosen by its time,
	// so every member prunes in the same commands): an iterator per
	// command was a visible share of a cluster write's CPU.
	if c.At.UnixNano()%pruneCommandIDsEvery == 0 {
		if err := pruneCommandIDs(t, c.At); err != nil {
			return nil, err
		}
	}
	var rec commandRecord
	switch err := t.getJSON(commandKey(c.ID), &rec); {
	case err == nil:
		if c.At.Sub(rec.At) < CommandIDWindow && rec.Op == c.Op {
			t.replayed = true
			if rec.Opaque {
				return nil, ErrAppliedWithoutResult
			}
			return DecodeResultValue(rec.Type, rec.Val)
		}
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	v, typ, raw, opaque, err := runRecorded(t, c, fn)
	if err != nil {
		return v, err
	}
	rec = commandRecord{At: c.At, Op: c.Op, Type: typ, Val: raw, Opaque: opaque}
	if err := t.setJSON(commandKey(c.ID), rec); err != nil {
		return nil, err
	}
	return v, t.set(commandDueKey(c.At, c.ID), nil)
}

// pruneCommandIDsEvery: one command in this many (by its time in
// nanoseconds) prunes up to pruneCommandIDsPerWrite records, so the
// records of a steady load are all pruned (16 per command on average,
// as for request records).
const (
	pruneCommandIDsEvery    = 8
	pruneCommandIDsPerWrite = 8 * pruneRequestsPerWrite
)

// pruneCommandIDs removes up to pruneCommandIDsPerWrite records older
// than the window at now (the command's time: every member removes the
// same).
func pruneCommandIDs(t *tx, now time.Time) error {
	return pruneDue(t, pfxCommandDue, pfxCommandID, now.Add(-CommandIDWindow), pruneCommandIDsPerWrite)
}
