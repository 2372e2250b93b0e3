package store

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
)

// The text index's internal value internalNames holds each record's
// count of the terms the names field makes of its text (listFields.names)
// as Close left them, so that Open does not find every record's names
// again (memory.NameTerms: ~2 s of CPU at 100k memories). It is
//
//	uvarint len | mapping version | uvarint seq |
//	{ uvarint len | id | uvarint tseq | uvarint count }...
//
// with the ids in byte order (the records bucket's), seq the store's
// sequence number when it was written. A count is trusted only for a
// record whose tseq (the last write that changed its text) is the one it
// was counted at, under the text mapping version it was counted by;
// every other record's names are counted from its text. Close writes it
// with the watermark (flushText); a kill before Close leaves an older
// one, whose counts of the records written since are not trusted, and a
// text index built anew holds none.

// nameCount is one record's entry in internalNames' value.
type nameCount struct {
	tseq  uint64
	count int32
}

// nameCounts walks internalNames' value in id order, for load, which walks
// the records in the same order.
type nameCounts struct {
	r    recReader
	id   []byte
	cur  nameCount
	done bool
}

// newNameCounts reads the header of internalNames' value v (nil: none). A
// value of another mapping version, or one that does not parse, gives
// no counts.
func newNameCounts(v []byte) *nameCounts {
	nc := &nameCounts{r: recReader{p: v}}
	if len(v) == 0 || string(nc.r.bytes(nc.r.uvarint())) != mappingVersion {
		nc.done = true
		return nc
	}
	nc.r.uvarint() // the seq it was written at
	nc.next()
	return nc
}

// next reads the following entry.
func (nc *nameCounts) next() {
	if nc.done || len(nc.r.p) == 0 {
		nc.done = true
		return
	}
	id := nc.r.bytes(nc.r.uvarint())
	tseq, count := nc.r.uvarint(), nc.r.uvarint()
	if nc.r.bad || count > uint64(maxNames) {
		nc.done = true
		return
	}
	nc.id, nc.cur = id, nameCount{tseq, int32(count)}
}

// maxNames bounds a stored count (nameLength saturates at int32's max).
const maxNames = 1<<31 - 1

// lookup returns the count stored for id at tseq, or -1. The ids asked
// for must come in byte order.
func (nc *nameCounts) lookup(id []byte, tseq uint64) int32 {
	for !nc.done {
		switch c := bytes.Compare(nc.id, id); {
		case c < 0:
			nc.next()
			continue
		case c == 0 && nc.cur.tseq == tseq:
			return nc.cur.count
		}
		break
	}
	return -1
}

// nameCountsValue is the value of internalNames: every entry's names
// count, or nil when the value there was written at the current sequence
// number (nothing changed since). Called with s.wmu held (flushText).
func (s *Store) nameCountsValue() []byte {
	s.mu.RLock()
	seq := s.seq
	if s.namesSavedAt == seq && seq != 0 {
		s.mu.RUnlock()
		return nil
	}
	type row struct {
		id string
		nameCount
	}
	rows := make([]row, 0, len(s.entries))
	for id, e := range s.entries {
		rows = append(rows, row{id, nameCount{e.tseq, e.names}})
	}
	s.mu.RUnlock()
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.id, b.id) })
	buf := binary.AppendUvarint(nil, uint64(len(mappingVersion)))
	buf = append(buf, mappingVersion...)
	buf = binary.AppendUvarint(buf, seq)
	for _, r := range rows {
		buf = binary.AppendUvarint(buf, uint64(len(r.id)))
		buf = append(buf, r.id...)
		buf = binary.AppendUvarint(buf, r.tseq)
		buf = binary.AppendUvarint(buf, uint64(max(r.count, 0)))
	}
	s.namesSavedAt = seq
	return buf
}

// savedNamesSeq returns the seq internalNames' value v was written at, when it
// is of the current mapping version, else 0.
func savedNamesSeq(v []byte) uint64 {
	r := recReader{p: v}
	if len(v) == 0 || string(r.bytes(r.uvarint())) != mappingVersion {
		return 0
	}
	seq := r.uvarint()
	if r.bad {
		return 0
	}
	return seq
}
