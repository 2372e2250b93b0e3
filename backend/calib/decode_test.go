package calib

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	ok := `{"model":"m","set":"s","rules":1,"thresholds":{"ingest.duplicate_similarity":0.9,"ingest.source_similarity":0.7,` +
		`"steward.merge_similarity":0.7,"search.vector_floor":0.3,"recall.skill_floor":0.35}}`
	for _, tt := range []struct{ name, data, want string }{
		{"valid", ok, ""},
		{"not JSON", "{", "stored calibration"},
		{"no model", strings.Replace(ok, `"model":"m"`, `"model":" "`, 1), "no model"},
		{"missing threshold", strings.Replace(ok, `"search.vector_floor":0.3,`, "", 1), "search.vector_floor missing"},
		{"zero", strings.Replace(ok, `0.35`, `0`, 1), "recall.skill_floor missing or out of range"},
		{"above 1", strings.Replace(ok, `0.9`, `1.5`, 1), "out of range"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Decode([]byte(tt.data))
			if tt.want == "" {
				if err != nil || r.Model != "m" || r.Thresholds[VectorFloor] != 0.3 {
					t.Fatalf("%+v, %v", r, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"model":"m","thresholds":{"ingest.duplicate_similarity":0.9,"ingest.source_similarity":0.7,"steward.merge_similarity":0.7,"search.vector_floor":0.3,"recall.skill_floor":0.35}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"model":"m","thresholds":{"search.vector_floor":NaN}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data)
		if err != nil {
			return
		}
		for _, rule := range Rules {
			if v := r.Thresholds[rule.Name]; !(v > 0 && v <= 1) {
				t.Fatalf("accepted %s = %v", rule.Name, v)
			}
		}
		if _, err := r.Encode(); err != nil {
			t.Fatalf("accepted a result it cannot encode: %v", err)
		}
	})
}
