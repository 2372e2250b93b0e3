//go:build linux

package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// elfExtents is the oracle for elfEnd, from the standard library's parser:
// the end of the headers, segments and sections.
func elfExtents(t *testing.T, path string) int64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// e_shoff, e_shentsize, e_shnum of a 64-bit little-endian ELF.
	shoff := int64(binary.LittleEndian.Uint64(raw[0x28:]))
	end := shoff + int64(binary.LittleEndian.Uint16(raw[0x3a:]))*int64(len(f.Sections))
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS {
			end = max(end, int64(s.Offset+s.FileSize))
		}
	}
	for _, p := range f.Progs {
		end = max(end, int64(p.Off+p.Filesz))
	}
	return end
}

// tinyELF builds a small valid ELF of the given class and byte order: the
// header, one program header, 100 bytes of segment, two section headers
// (a NOBITS one that claims much more than the file, and one over the
// segment). It returns the file and its end.
func tinyELF(class elf.Class, bo binary.ByteOrder) ([]byte, int64) {
	is64 := class == elf.ELFCLASS64
	ehsize, phsize, shsize := 52, 32, 40
	if is64 {
		ehsize, phsize, shsize = 64, 56, 64
	}
	segOff := ehsize + phsize
	shoff := segOff + 100
	size := shoff + 2*shsize
	b := make([]byte, size)
	copy(b, "\x7fELF")
	b[4] = byte(class)
	b[5] = byte(elf.ELFDATA2LSB)
	if bo == binary.BigEndian {
		b[5] = byte(elf.ELFDATA2MSB)
	}
	b[6] = 1 // EI_VERSION
	put16 := func(off, v int) { bo.PutUint16(b[off:], uint16(v)) }
	bo.PutUint32(b[0x14:], 1) // e_version
	putw := func(off, v int) {
		if is64 {
			bo.PutUint64(b[off:], uint64(v))
		} else {
			bo.PutUint32(b[off:], uint32(v))
		}
	}
	if is64 {
		putw(0x20, ehsize) // e_phoff
		putw(0x28, shoff)  // e_shoff
		put16(0x34, ehsize)
		put16(0x36, phsize)
		put16(0x38, 1)
		put16(0x3a, shsize)
		put16(0x3c, 2)
		putw(ehsize+0x08, segOff) // p_offset
		putw(ehsize+0x20, 100)    // p_filesz
		s0, s1 := shoff, shoff+shsize
		bo.PutUint32(b[s0+4:], uint32(elf.SHT_NOBITS))
		putw(s0+0x18, segOff)
		putw(s0+0x20, 1<<20) // NOBITS: ignored
		bo.PutUint32(b[s1+4:], uint32(elf.SHT_PROGBITS))
		putw(s1+0x18, segOff)
		putw(s1+0x20, 100)
	} else {
		putw(0x1c, ehsize)
		putw(0x20, shoff)
		put16(0x28, ehsize)
		put16(0x2a, phsize)
		put16(0x2c, 1)
		put16(0x2e, shsize)
		put16(0x30, 2)
		putw(ehsize+0x04, segOff)
		putw(ehsize+0x10, 100)
		s0, s1 := shoff, shoff+shsize
		bo.PutUint32(b[s0+4:], uint32(elf.SHT_NOBITS))
		putw(s0+0x10, segOff)
		putw(s0+0x14, 1<<20)
		bo.PutUint32(b[s1+4:], uint32(elf.SHT_PROGBITS))
		putw(s1+0x10, segOff)
		putw(s1+0x14, 100)
	}
	return b, int64(size)
}

func TestELFEndRealBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	want := elfExtents(t, exe)
	got, err := elfEnd(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatalf("elfEnd(the test binary): %v", err)
	}
	if got != want || got != int64(len(raw)) {
		t.Errorf("elfEnd(the test binary) = %d, want %d (debug/elf), file %d bytes", got, want, len(raw))
	}
	// Something appended (an AppImage's squashfs image) does not move it.
	withPayload := append(append([]byte{}, raw...), bytes.Repeat([]byte("hsqs payload"), 1000)...)
	if got, err := elfEnd(bytes.NewReader(withPayload), int64(len(withPayload))); err != nil || got != want {
		t.Errorf("elfEnd(binary + payload) = %d, %v; want %d", got, err, want)
	}
}

func TestELFEndSynthetic(t *testing.T) {
	for _, tc := range []struct {
		name  string
		class elf.Class
		bo    binary.ByteOrder
	}{
		{"64-bit little-endian", elf.ELFCLASS64, binary.LittleEndian},
		{"64-bit big-endian", elf.ELFCLASS64, binary.BigEndian},
		{"32-bit little-endian", elf.ELFCLASS32, binary.LittleEndian},
		{"32-bit big-endian", elf.ELFCLASS32, binary.BigEndian},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, want := tinyELF(tc.class, tc.bo)
			if f, err := elf.NewFile(bytes.NewReader(b)); err != nil {
				t.Fatalf("debug/elf rejects the synthetic ELF: %v", err)
			} else {
				f.Close()
			}
			got, err := elfEnd(bytes.NewReader(b), int64(len(b)))
			if err != nil || got != want {
				t.Errorf("elfEnd = %d, %v; want %d", got, err, want)
			}
		})
	}
}

func TestELFEndRejects(t *testing.T) {
	good, _ := tinyELF(elf.ELFCLASS64, binary.LittleEndian)
	mutate := func(f func(b []byte) []byte) []byte {
		return f(append([]byte{}, good...))
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not an ELF file"},
		{"short", []byte("\x7fELF"), "not an ELF file"},
		{"not ELF", mutate(func(b []byte) []byte { b[0] = 'M'; return b }), "no \\x7fELF magic"},
		{"bad class", mutate(func(b []byte) []byte { b[4] = 3; return b }), "class 3"},
		{"bad data encoding", mutate(func(b []byte) []byte { b[5] = 0; return b }), "data encoding 0"},
		{"header truncated", good[:40], "header truncated"},
		{"section table beyond the file", mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[0x28:], 1<<40)
			return b
		}), "section header table"},
		{"section table offset overflows", mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[0x28:], ^uint64(0)-10)
			return b
		}), "section header table"},
		{"section entry too small", mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint16(b[0x3a:], 8)
			return b
		}), "entry size 8"},
		{"segment beyond the file", mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[64+0x20:], 1<<30)
			return b
		}), "segment 0"},
		{"section beyond the file", mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[len(b)-64+0x20:], 1<<30)
			return b
		}), "section 1"},
		{"extended numbering", mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint16(b[0x3c:], 0)
			return b
		}), "extended section numbering"},
		{"file cut before its sections", good[:len(good)-10], "beyond the file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			end, err := elfEnd(bytes.NewReader(tc.data), int64(len(tc.data)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("elfEnd = %d, %v; want an error with %q", end, err, tc.want)
			}
		})
	}
}

// FuzzELFEnd feeds damaged headers to the parser: it must not panic, and an
// offset it accepts lies within the file, past the ELF header.
func FuzzELFEnd(f *testing.F) {
	for _, c := range []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64} {
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			b, _ := tinyELF(c, bo)
			f.Add(b)
		}
	}
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		end, err := elfEnd(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if end < 52 || end > int64(len(data)) {
			t.Fatalf("elfEnd = %d for %d bytes", end, len(data))
		}
		// The AppImage check on top of it must not panic either.
		payloadOffset(bytes.NewReader(data), int64(len(data)))
	})
}
