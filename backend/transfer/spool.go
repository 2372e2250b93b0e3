package transfer

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/memtray/memtray/backend/config"
)

// Upload spools are where an import job keeps its upload between the
// request and the job (the import checks the whole stream before it adds
// anything, so the stream is read twice). An upload is not redacted yet:
// the spool is encrypted with a key that lives only in memory, so what a
// kill leaves on disk is noise, and Open removes such leftovers.
const (
	spoolPrefix = ".import-"
	spoolSuffix = ".spool"
)

// spool is an upload written to a sealed temporary file in a directory.
type spool struct {
	path string
	size int64
	key  [32]byte
	iv   [aes.BlockSize]byte
}

// writeSpool copies r into a new spool in dir, encrypted (AES-256-CTR, a
// random key and IV per spool), and returns it. On error nothing is left.
func writeSpool(dir string, r io.Reader) (*spool, error) {
	s := &spool{}
	if _, err := rand.Read(s.key[:]); err != nil {
		return nil, fmt.Errorf("spool key: %w", err)
	}
	if _, err := rand.Read(s.iv[:]); err != nil {
		return nil, fmt.Errorf("spool key: %w", err)
	}
	f, err := os.CreateTemp(dir, spoolPrefix+"*"+spoolSuffix)
	if err != nil {
		return nil, err
	}
	s.path = f.Name()
	stream, err := s.stream()
	if err == nil {
		s.size, err = io.Copy(cipher.StreamWriter{S: stream, W: f}, r)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(s.path)
		return nil, err
	}
	return s, nil
}

func (s *spool) stream() (cipher.Stream, error) {
	block, err := aes.NewCipher(s.key[:])
	if err != nil {
		return nil, fmt.Errorf("spool cipher: %w", err)
	}
	return cipher.NewCTR(block, s.iv[:]), nil
}

// open returns the upload as written, decrypted.
func (s *spool) open() (io.ReadCloser, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	stream, err := s.stream()
	if err != nil {
		f.Close()
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{cipher.StreamReader{S: stream, R: f}, f}, nil
}

// remove deletes the spool file.
func (s *spool) remove() { os.Remove(s.path) }

// RemoveSpools deletes the spools a killed process left in dir (their key
// died with it) and the plain ones of versions before the spool was
// sealed, and returns how many it removed. Call it only where no other
// process uses dir: the daemon on its data dir, under the store's lock.
func RemoveSpools(dir string) int {
	return config.RemoveFiles(dir, func(name string) bool {
		return strings.HasPrefix(name, spoolPrefix) && (strings.HasSuffix(name, spoolSuffix) || strings.HasSuffix(name, ".jsonl"))
	})
}
