package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// The binary wire form of chunk commands. A PutChunks command carries up
// to a few MiB of content; as JSON each value was base64-encoded and
// parsed again at every hop (the follower's forward, the leader, every
// node's FSM), which cost more CPU than writing the chunks (cluster/DESIGN.md,
// "Batched apply and the chunk encoding"). Version 2 of the wire form is
//
//	0x02 | uvarint n | n bytes: the command's JSON without data |
//	uvarint chunks | per chunk: uvarint len | sha | uvarint size | uvarint len | value
//
// The values are copied once into the encoding and, when decoded, are
// slices of the encoded bytes (no copy); the decoded command keeps its
// wire form, so a leader proposing a forwarded command puts the bytes it
// received into the log as they are.
const (
	wireJSON   = 1
	wireChunks = 2
)

// encodeChunks returns the version 2 form of c, whose payload is p.
func encodeChunks(c *Command, p PutChunks) ([]byte, error) {
	hdr, err := json.Marshal(&Command{Op: c.Op, Site: c.Site, User: c.User, At: c.At, Rules: c.Rules})
	if err != nil {
		return nil, err
	}
	n := 1 + binary.MaxVarintLen64 + len(hdr) + binary.MaxVarintLen64
	for _, ch := range p.Chunks {
		n += 3*binary.MaxVarintLen64 + len(ch.SHA) + len(ch.Value)
	}
	b := make([]byte, 0, n)
	b = append(b, wireChunks)
	b = binary.AppendUvarint(b, uint64(len(hdr)))
	b = append(b, hdr...)
	b = binary.AppendUvarint(b, uint64(len(p.Chunks)))
	for _, ch := range p.Chunks {
		if ch.Size < 0 {
			return nil, fmt.Errorf("encode %s: chunk of size %d", c.Op, ch.Size)
		}
		b = binary.AppendUvarint(b, uint64(len(ch.SHA)))
		b = append(b, ch.SHA...)
		b = binary.AppendUvarint(b, uint64(ch.Size))
		b = binary.AppendUvarint(b, uint64(len(ch.Value)))
		b = append(b, ch.Value...)
	}
	return b, nil
}

var errWireShort = errors.New("decode command: truncated chunk command")

// decodeChunks parses the version 2 form (b[0] == wireChunks).
func decodeChunks(b []byte) (*Command, error) {
	r := wireReader{b: b[1:]}
	hdr := r.bytes()
	var c Command
	if r.err == nil {
		if err := json.Unmarshal(hdr, &c); err != nil {
			return nil, fmt.Errorf("decode command: %w", err)
		}
		if c.Op != OpPutChunks || len(c.Data) > 0 {
			return nil, fmt.Errorf("decode command: a binary %q command", c.Op)
		}
	}
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)) {
		return nil, errWireShort
	}
	p := PutChunks{Chunks: make([]Chunk, 0, n)}
	for i := uint64(0); i < n && r.err == nil; i++ {
		sha := r.bytes()
		size := r.uvarint()
		val := r.bytes()
		if size > 1<<62 {
			return nil, errWireShort
		}
		p.Chunks = append(p.Chunks, Chunk{SHA: string(sha), Size: int64(size), Value: val})
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, errors.New("decode command: trailing bytes after a chunk command")
	}
	c.local = p
	c.wire = b
	return &c, nil
}

type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errWireShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes reads a length-prefixed field as a slice of the input.
func (r *wireReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errWireShort
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}
