//go:build linux

package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ELF constants this file needs (see elf(5)).
const (
	elfClass32  = 1
	elfClass64  = 2
	elfData2LSB = 1
	elfData2MSB = 2
	shtNobits   = 8 // a section that occupies no file space (.bss)
)

// elfEnd returns the offset just past the ELF file at the start of r (size
// bytes long): the furthest of the ELF header, the program and section header
// tables, every segment's file bytes and every section's file bytes. A type-2
// AppImage appends its squashfs image there. The reference runtime computes
// the same from the section header table's end and the last section's end;
// taking every extent also covers a file whose tables are not at its end.
// The header fields are outside input (a damaged or hostile file): each is
// checked against size before it is used.
func elfEnd(r io.ReaderAt, size int64) (int64, error) {
	var ident [16]byte
	if size < int64(len(ident)) {
		return 0, fmt.Errorf("not an ELF file: %d bytes", size)
	}
	if _, err := r.ReadAt(ident[:], 0); err != nil {
		return 0, fmt.Errorf("read the ELF identification: %w", err)
	}
	if string(ident[:4]) != "\x7fELF" {
		return 0, errors.New("not an ELF file: no \\x7fELF magic")
	}
	var bo binary.ByteOrder
	switch ident[5] {
	case elfData2LSB:
		bo = binary.LittleEndian
	case elfData2MSB:
		bo = binary.BigEndian
	default:
		return 0, fmt.Errorf("ELF data encoding %d is neither little- nor big-endian", ident[5])
	}
	// layout says where the fields this function reads are in one ELF class.
	type layout struct {
		ehsize                          int64 // the ELF header's size
		phoff, shoff, phentsize, phnum  int64 // ELF header field offsets
		shentsize, shnum                int64
		word                            int64 // size of an address or offset field
		phMin, pOffset, pFilesz         int64 // program header: minimum size, field offsets
		shMin, shType, shOffset, shSize int64 // section header: minimum size, field offsets
	}
	var l layout
	switch ident[4] {
	case elfClass64:
		l = layout{ehsize: 64, phoff: 0x20, shoff: 0x28, phentsize: 0x36, phnum: 0x38, shentsize: 0x3a, shnum: 0x3c, word: 8,
			phMin: 56, pOffset: 0x08, pFilesz: 0x20, shMin: 64, shType: 0x04, shOffset: 0x18, shSize: 0x20}
	case elfClass32:
		l = layout{ehsize: 52, phoff: 0x1c, shoff: 0x20, phentsize: 0x2a, phnum: 0x2c, shentsize: 0x2e, shnum: 0x30, word: 4,
			phMin: 32, pOffset: 0x04, pFilesz: 0x10, shMin: 40, shType: 0x04, shOffset: 0x10, shSize: 0x14}
	default:
		return 0, fmt.Errorf("ELF class %d is neither 32- nor 64-bit", ident[4])
	}
	if size < l.ehsize {
		return 0, fmt.Errorf("ELF header truncated: %d of %d bytes", size, l.ehsize)
	}
	eh := make([]byte, l.ehsize)
	if _, err := r.ReadAt(eh, 0); err != nil {
		return 0, fmt.Errorf("read the ELF header: %w", err)
	}
	word := func(b []byte, off int64) uint64 {
		if l.word == 8 {
			return bo.Uint64(b[off:])
		}
		return uint64(bo.Uint32(b[off:]))
	}
	half := func(b []byte, off int64) int64 { return int64(bo.Uint16(b[off:])) }

	end := l.ehsize
	// extent records [off, off+n) as part of the file, failing when it lies
	// beyond size (or overflows).
	extent := func(what string, off, n uint64) error {
		if off > uint64(size) || n > uint64(size)-off {
			return fmt.Errorf("%s [%d, +%d) lies beyond the file's %d bytes", what, off, n, size)
		}
		if e := int64(off + n); e > end {
			end = e
		}
		return nil
	}
	// table reads a header table of num entries of entsize bytes at off.
	table := func(what string, off uint64, entsize, num, min int64) ([]byte, error) {
		if num == 0 {
			return nil, nil
		}
		if entsize < min {
			return nil, fmt.Errorf("%s entry size %d is below %d", what, entsize, min)
		}
		n := uint64(entsize * num) // both at most 65535: no overflow
		if err := extent(what, off, n); err != nil {
			return nil, err
		}
		b := make([]byte, n)
		if _, err := r.ReadAt(b, int64(off)); err != nil {
			return nil, fmt.Errorf("read the %s: %w", what, err)
		}
		return b, nil
	}

	phentsize, phnum := half(eh, l.phentsize), half(eh, l.phnum)
	ph, err := table("program header table", word(eh, l.phoff), phentsize, phnum, l.phMin)
	if err != nil {
		return 0, err
	}
	for i := int64(0); i < phnum; i++ {
		e := ph[i*phentsize:]
		if err := extent(fmt.Sprintf("segment %d", i), word(e, l.pOffset), word(e, l.pFilesz)); err != nil {
			return 0, err
		}
	}

	shoff := word(eh, l.shoff)
	shentsize, shnum := half(eh, l.shentsize), half(eh, l.shnum)
	if shnum == 0 && shoff != 0 {
		return 0, errors.New("ELF extended section numbering (e_shnum 0) is not supported")
	}
	sh, err := table("section header table", shoff, shentsize, shnum, l.shMin)
	if err != nil {
		return 0, err
	}
	for i := int64(0); i < shnum; i++ {
		e := sh[i*shentsize:]
		if bo.Uint32(e[l.shType:]) == shtNobits {
			continue
		}
		if err := extent(fmt.Sprintf("section %d", i), word(e, l.shOffset), word(e, l.shSize)); err != nil {
			return 0, err
		}
	}
	return end, nil
}
