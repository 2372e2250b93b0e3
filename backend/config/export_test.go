package config

import (
	"encoding/json"
	"fmt"
)

// Save writes c to path atomically (temp file, fsync, rename), mode 0600.
// Only the tests need it: the daemon writes the config file by merging
// changes into the JSON a user keeps (see the daemon's settings).
func Save(path string, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o600)
}
