package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bucketCalib holds one similarity calibration per embedding model (key:
// the model's name; value: the caller's encoding, package calib's JSON).
// It is created by the first SetCalibration; the records are small and
// kept when the store switches models, so switching back needs no new
// calibration.
var bucketCalib = []byte("calib")

// maxCalibration bounds one calibration record.
const maxCalibration = 64 << 10

// Calibration returns the calibration record stored for model; ok is
// false when there is none.
func (s *Store) Calibration(model string) (data []byte, ok bool, err error) {
	if err := s.checkOpen(); err != nil {
		return nil, false, err
	}
	err = s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCalib)
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(model)); v != nil {
			data, ok = append([]byte(nil), v...), true
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("read calibration of %s: %w", model, err)
	}
	return data, ok, nil
}

// SetCalibration stores data as model's calibration record, replacing
// any earlier one.
func (s *Store) SetCalibration(model string, data []byte) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	switch {
	case model == "" || len(model) > maxModel:
		return fmt.Errorf("store calibration: model name of %d bytes, want 1..%d", len(model), maxModel)
	case len(data) == 0 || len(data) > maxCalibration:
		return fmt.Errorf("store calibration of %s: %d bytes, want 1..%d", model, len(data), maxCalibration)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketCalib)
		if err != nil {
			return err
		}
		return b.Put([]byte(model), data)
	})
	if err != nil {
		return fmt.Errorf("store calibration of %s: %w", model, err)
	}
	return nil
}
