package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memtray/memtray/backend/config"
)

// TokenFile is the name of the install token's file in the data dir.
const TokenFile = "token"

// LoadOrCreateToken returns the install's API token from dataDir, creating a
// random 256-bit one (file mode 0600) on first use.
func LoadOrCreateToken(dataDir string) (string, error) {
	tok, err := ReadToken(dataDir)
	if err == nil {
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return RotateToken(dataDir)
}

// ReadToken reads the install token without creating one.
func ReadToken(dataDir string) (string, error) {
	path := filepath.Join(dataDir, TokenFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if len(tok) != 64 {
		return "", fmt.Errorf("token file %s is malformed: run `memtray token rotate`", path)
	}
	return tok, nil
}

// RotateToken writes a new random token, replacing any old one.
func RotateToken(dataDir string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	tok := hex.EncodeToString(b[:])
	if err := config.WriteFileAtomic(filepath.Join(dataDir, TokenFile), []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("save token: %w", err)
	}
	return tok, nil
}
