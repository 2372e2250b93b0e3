package store

import (
	"strings"
	"testing"
)

func TestCalibrationRecord(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	if _, ok, err := s.Calibration("m1"); ok || err != nil {
		t.Fatalf("fresh store: ok %v err %v", ok, err)
	}
	for _, tt := range []struct {
		name, model, data, want string
	}{
		{"no model", "", "{}", "model name"},
		{"long model", strings.Repeat("m", maxModel+1), "{}", "model name"},
		{"empty", "m1", "", "0 bytes"},
		{"too big", "m1", strings.Repeat("x", maxCalibration+1), "bytes, want"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.SetCalibration(tt.model, []byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	if err := s.SetCalibration("m1", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCalibration("m2", []byte(`{"b":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCalibration("m1", []byte(`{"a":3}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir) // survives a restart
	for model, want := range map[string]string{"m1": `{"a":3}`, "m2": `{"b":2}`} {
		got, ok, err := s.Calibration(model)
		if !ok || err != nil || string(got) != want {
			t.Fatalf("%s: %q %v %v, want %q", model, got, ok, err, want)
		}
	}
}
