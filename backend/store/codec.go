package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/memtray/memtray/backend/memory"
)

// A record value in the recs bucket is
//
//	[1]recVersion | uvarint seq | uvarint tseq | uvarint ord |
//	varint created | varint cooldown | [1]flags | [1]kind |
//	uvarint len | project | uvarint len | source |
//	uvarint jsonLen | json | embedding
//
// where json is the memory.Memory without its embedding and embedding is the
// vector as packed little-endian float32 (4 bytes per dimension). seq is the
// store sequence number of the record's last write, tseq that of the last
// write that changed what the text index holds (text, project, kind, source),
// ord the sequence number of its first insertion (iteration order). The
// fields between ord and the JSON (created_at and cooldown_until in unix
// nanoseconds, superseded flag, kind, project, source) repeat what filters
// need, so Open builds its indexes without decoding JSON.
const recVersion = 2

// recHeader is the bookkeeping and filter fields stored in front of a record.
type recHeader struct {
	seq, tseq, ord    uint64
	created, cooldown int64
	superseded        bool
	kind              memory.Kind
	project, source   string
}

// withFields copies m's filter fields into h.
func (h recHeader) withFields(m *memory.Memory) recHeader {
	h.created, h.cooldown = unixNano(m.CreatedAt), unixNano(m.CooldownUntil)
	h.superseded = m.SupersededBy != ""
	h.kind, h.project, h.source = m.Kind, m.Project, m.Source
	return h
}

// encodeRecord packs m (whose Embedding is written as packed floats) under
// h; h's filter fields are taken from m.
func encodeRecord(h recHeader, m *memory.Memory) ([]byte, error) {
	h = h.withFields(m)
	emb := m.Embedding
	m.Embedding = nil
	js, err := json.Marshal(m)
	m.Embedding = emb
	if err != nil {
		return nil, fmt.Errorf("encode record %s: %w", m.ID, err)
	}
	buf := make([]byte, 0, 1+8*binary.MaxVarintLen64+len(h.project)+len(h.source)+len(js)+4*len(emb))
	buf = appendRecordHead(buf, h, js)
	for _, f := range emb {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
	}
	return buf, nil
}

// appendRecordHead appends to buf a record's value up to its embedding:
// the format version, h's fields and the memory's JSON js.
func appendRecordHead(buf []byte, h recHeader, js []byte) []byte {
	buf = append(buf, recVersion)
	buf = binary.AppendUvarint(buf, h.seq)
	buf = binary.AppendUvarint(buf, h.tseq)
	buf = binary.AppendUvarint(buf, h.ord)
	buf = binary.AppendVarint(buf, h.created)
	buf = binary.AppendVarint(buf, h.cooldown)
	var flags byte
	if h.superseded {
		flags = 1
	}
	buf = append(buf, flags, kindCode(h.kind))
	buf = binary.AppendUvarint(buf, uint64(len(h.project)))
	buf = append(buf, h.project...)
	buf = binary.AppendUvarint(buf, uint64(len(h.source)))
	buf = append(buf, h.source...)
	buf = binary.AppendUvarint(buf, uint64(len(js)))
	return append(buf, js...)
}

var errCorrupt = errors.New("corrupt record")

// recReader walks the fields of a stored value.
type recReader struct {
	p   []byte
	bad bool
}

func (r *recReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *recReader) varint() int64 {
	v, n := binary.Varint(r.p)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *recReader) bytes(n uint64) []byte {
	if r.bad || n > uint64(len(r.p)) {
		r.bad = true
		return nil
	}
	b := r.p[:n]
	r.p = r.p[n:]
	return b
}

// splitRecord returns the header, the JSON part and the packed embedding of
// a stored value. The returned slices alias b; in is used to share the
// header's strings (nil: no sharing).
func splitRecord(b []byte, in interner) (recHeader, []byte, []byte, error) {
	var h recHeader
	if len(b) < 1 || b[0] != recVersion {
		return h, nil, nil, fmt.Errorf("%w: unknown record version", errCorrupt)
	}
	r := recReader{p: b[1:]}
	h.seq, h.tseq, h.ord = r.uvarint(), r.uvarint(), r.uvarint()
	h.created, h.cooldown = r.varint(), r.varint()
	fk := r.bytes(2)
	if !r.bad {
		h.superseded = fk[0]&1 != 0
		if fk[1] >= 1 && int(fk[1]) <= len(memory.Kinds) {
			h.kind = memory.Kinds[fk[1]-1]
		}
	}
	project := r.bytes(r.uvarint())
	source := r.bytes(r.uvarint())
	js := r.bytes(r.uvarint())
	if r.bad {
		return h, nil, nil, fmt.Errorf("%w: truncated", errCorrupt)
	}
	h.project, h.source = in.getBytes(project), in.getBytes(source)
	emb := r.p
	if len(emb)%4 != 0 {
		return h, nil, nil, fmt.Errorf("%w: embedding length %d is not a multiple of 4", errCorrupt, len(emb))
	}
	return h, js, emb, nil
}

// decodeRecord decodes a stored value fully; the embedding is copied out of b.
func decodeRecord(b []byte) (recHeader, memory.Memory, error) {
	var m memory.Memory
	h, js, emb, err := splitRecord(b, nil)
	if err != nil {
		return h, m, err
	}
	if err := decodeFields(js, &m); err != nil {
		return h, m, err
	}
	m.Embedding = unpackVector(emb)
	return h, m, nil
}

// decodeFields decodes the JSON part of a record into m: the one rule by
// which a record's fields are readable. Open decodes every record by it
// (load, fillListFields) and every read decodes by it (decodeRecord), so a
// record Open keeps is one every read can decode — a field of the wrong
// type (importance "high") fails here, at Open, as it would fail a Get —
// and a record Open skips is skipped by every read (skipUnreadable).
func decodeFields(js []byte, m *memory.Memory) error {
	if err := json.Unmarshal(js, m); err != nil {
		return fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return nil
}

// ErrUnreadable is wrapped by the error of a write naming a record whose
// stored bytes do not decode (Open found it unreadable and every read
// skips it). The same error wraps memory.ErrNotFound: to every caller the
// memory is not there to change. Only a delete of it succeeds (it removes
// the bytes for good: there is nothing the trash could restore).
var ErrUnreadable = errors.New("unreadable record")

// unreadableError is a write's error for record id, which does not
// decode (err says why). It is ErrUnreadable and memory.ErrNotFound.
type unreadableError struct {
	id  string
	err error
}

// Error names the record, why it cannot be read and what repairs it.
func (e *unreadableError) Error() string {
	return fmt.Sprintf("memory %s cannot be read (%v): every read skips it and it cannot be changed; "+
		"`memtray doctor` names it, `memtray doctor --salvage` saves what the store can still read, and `memtray delete %s` removes it for good",
		e.id, e.err, e.id)
}

// Is makes the error ErrUnreadable and memory.ErrNotFound.
func (e *unreadableError) Is(target error) bool {
	return target == ErrUnreadable || target == memory.ErrNotFound
}

// Unwrap returns the decoding error (errCorrupt).
func (e *unreadableError) Unwrap() error { return e.err }

// decodeForWrite is decodeRecord for a write about to change record id
// (value v): a record that does not decode is an *unreadableError.
func decodeForWrite(id string, v []byte) (recHeader, memory.Memory, error) {
	h, m, err := decodeRecord(v)
	if errors.Is(err, errCorrupt) {
		return h, m, &unreadableError{id: id, err: err}
	}
	return h, m, err
}

// unpackVector copies packed little-endian float32s into a new slice.
func unpackVector(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// NewID returns a new memory id, as the store gives a memory stored
// without one (Options.NewID, else random): for a caller that names the
// memory before it is stored (a turn mark written with it, Insert.Marks).
func (s *Store) NewID() string {
	if s.opts.NewID != nil {
		return s.opts.NewID()
	}
	return newID()
}

// newID returns a random 128-bit id in lowercase hex.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// MaxIDLen bounds the length of a caller-supplied memory id.
const MaxIDLen = 64

// ValidID reports whether id may name a memory: 1 to 64 characters of
// ASCII letters, digits and "-_.:". Ids the store generates are 32
// lowercase hex characters.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':':
		default:
			return false
		}
	}
	return true
}

// checkVector validates an embedding against the store's dimension. The
// zero vector is allowed (an embedder's answer for a text without a usable
// token): such a record is stored and found by text, never by vector.
func checkVector(v []float32, dim int) error {
	if len(v) != dim {
		return fmt.Errorf("embedding has %d dimensions, the store uses %d: %w", len(v), dim, memory.ErrModelMismatch)
	}
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return &memory.ValidationError{Problems: []string{"embedding contains NaN or Inf"}}
		}
	}
	return nil
}

// SoundVector reports whether v is a vector a store of dimension dim
// accepts: dim numbers, none NaN or Inf. A stored vector that is not (a
// damaged one, kept by writes until it is embedded anew) must not be
// copied anywhere else.
func SoundVector(v []float32, dim int) bool { return checkVector(v, dim) == nil }

// isZero reports whether every component of v is zero.
func isZero(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}

// normalized returns a unit-length copy of v (the vector index's form); the
// zero vector stays zero.
func normalized(v []float32) []float32 {
	var sq float64
	for _, f := range v {
		sq += float64(f) * float64(f)
	}
	out := make([]float32, len(v))
	if sq == 0 {
		return out
	}
	inv := 1 / math.Sqrt(sq)
	for i, f := range v {
		out[i] = float32(float64(f) * inv)
	}
	return out
}
