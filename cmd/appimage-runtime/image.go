//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/squashfs"
)

// appImageMagic is the type-2 AppImage mark at offset 8 of the ELF
// (EI_ABIVERSION and the padding after it): "AI" and the type, 2.
const appImageMagic = "AI\x02"

// squashfsMagic starts a squashfs superblock ("hsqs", little-endian).
const squashfsMagic = "hsqs"

// image is an open type-2 AppImage: the ELF runtime and, from offset on,
// the squashfs image that holds the AppDir.
type image struct {
	path   string
	file   *os.File
	size   int64 // the whole file's
	offset int64 // where the squashfs image starts: the ELF's end
	fs     *squashfs.FileSystem
}

// openImage opens the AppImage at path: it checks the type-2 mark, finds the
// squashfs image after the ELF and opens it read-only.
func openImage(path string) (*image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open the AppImage: %w", err)
	}
	img, err := readImage(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return img, nil
}

func readImage(f *os.File, path string) (*image, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat the AppImage: %w", err)
	}
	offset, err := payloadOffset(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	fsys, err := squashfs.Read(file.New(f, true), st.Size()-offset, offset, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: read the squashfs image at offset %d: %w", path, offset, err)
	}
	return &image{path: path, file: f, size: st.Size(), offset: offset, fs: fsys}, nil
}

// payloadOffset checks that r (size bytes) is a type-2 AppImage and returns
// where its squashfs image starts.
func payloadOffset(r io.ReaderAt, size int64) (int64, error) {
	offset, err := elfEnd(r, size)
	if err != nil {
		return 0, err
	}
	var mark [len(appImageMagic)]byte
	if _, err := r.ReadAt(mark[:], 8); err != nil {
		return 0, fmt.Errorf("read the AppImage mark: %w", err)
	}
	if string(mark[:]) != appImageMagic {
		return 0, fmt.Errorf("not a type-2 AppImage: bytes 8-10 are %q, not %q", mark[:], appImageMagic)
	}
	var magic [len(squashfsMagic)]byte
	if _, err := r.ReadAt(magic[:], offset); err != nil {
		return 0, fmt.Errorf("no squashfs image after the runtime (offset %d of %d bytes): %w", offset, size, err)
	}
	if string(magic[:]) != squashfsMagic {
		return 0, fmt.Errorf("no squashfs image after the runtime: offset %d starts with %q, not %q", offset, magic[:], squashfsMagic)
	}
	return offset, nil
}

// Close closes the AppImage file.
func (img *image) Close() error {
	if err := img.fs.Close(); err != nil {
		img.file.Close()
		return fmt.Errorf("close the squashfs image: %w", err)
	}
	return img.file.Close()
}

// hash returns the SHA-256 of the squashfs image, in hex: the extract
// cache's key, so that one cache entry serves one content.
func (img *image) hash() (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(img.file, img.offset, img.size-img.offset)); err != nil {
		return "", fmt.Errorf("hash the squashfs image: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
