package noise

import (
	"math"
	"strings"
	"testing"
)

// synth builds points offset + t*s1*a1 + u*s2*a2 + w*s3*a3 over a grid of
// uncorrelated t, u, w, so a1, a2, a3 are the principal axes with variances
// in the ratio var(t)s1² : var(u)s2² : var(w)s3².
func synth(offset, a1, a2, a3 []float64, s1, s2, s3 float64) (vecs [][]float32, coords [][2]float64, shares [2]float64) {
	ts := []float64{-2, -1, 0, 1, 2}
	ws := []float64{-1, 1}
	for _, t := range ts {
		for _, u := range ts {
			for _, w := range ws {
				v := make([]float32, len(offset))
				for j := range v {
					v[j] = float32(offset[j] + t*s1*a1[j] + u*s2*a2[j] + w*s3*a3[j])
				}
				vecs = append(vecs, v)
				coords = append(coords, [2]float64{t * s1, u * s2})
			}
		}
	}
	v1, v2, v3 := 2*s1*s1, 2*s2*s2, 1*s3*s3 // var(t) = var(u) = 2, var(w) = 1
	total := v1 + v2 + v3
	return vecs, coords, [2]float64{v1 / total, v2 / total}
}

func unit(v ...float64) []float64 {
	var l float64
	for _, x := range v {
		l += x * x
	}
	l = math.Sqrt(l)
	out := make([]float64, len(v))
	for i, x := range v {
		if l > 0 {
			out[i] = x / l
		}
	}
	return out
}

func TestProjectKnownAxes(t *testing.T) {
	for _, tt := range []struct {
		name       string
		offset     []float64
		a1, a2, a3 []float64
		s1, s2, s3 float64
	}{
		{"axis aligned", []float64{5, 5, 5}, unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1), 10, 2, 0},
		{"swapped order", []float64{0, 0, 0}, unit(0, 0, 1), unit(1, 0, 0), unit(0, 1, 0), 4, 3, 1},
		{"rotated in 5-D with a third axis", []float64{0.3, -0.2, 0.1, 0, 0.9}, unit(1, 1, 0, 0, 0), unit(0, 0, 1, -1, 0), unit(1, -1, 0, 0, 0), 3, 1.5, 0.5},
		{"embedding-like scale", []float64{0.1, 0.1, 0.1, 0.1}, unit(1, 1, 1, 1), unit(1, -1, 1, -1), unit(1, 1, -1, -1), 0.05, 0.02, 0.01},
		{"rank one", []float64{1, 2}, unit(3, 4), unit(-4, 3), unit(-4, 3), 2, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			vecs, want, shares := synth(tt.offset, tt.a1, tt.a2, tt.a3, tt.s1, tt.s2, tt.s3)
			p, err := Project(vecs)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Points) != len(vecs) {
				t.Fatalf("%d points for %d vectors", len(p.Points), len(vecs))
			}
			for k := 0; k < 2; k++ {
				if math.Abs(p.Explained[k]-shares[k]) > 1e-4 {
					t.Errorf("explained[%d] = %v, want %v", k, p.Explained[k], shares[k])
				}
				// Each axis is known up to its sign.
				sign := 0.0
				for i := range want {
					if sign == 0 && math.Abs(want[i][k]) > 1e-9 {
						sign = math.Copysign(1, p.Points[i][k]*want[i][k])
					}
				}
				if sign == 0 {
					sign = 1
				}
				tol := 1e-4 * math.Max(tt.s1, 1e-3) * 10
				for i := range want {
					if d := math.Abs(p.Points[i][k] - sign*want[i][k]); d > tol {
						t.Fatalf("point %d pc%d = %v, want %v (±)", i, k+1, p.Points[i][k], want[i][k])
					}
				}
			}
			again, _ := Project(vecs)
			for i := range p.Points {
				if again.Points[i] != p.Points[i] {
					t.Fatalf("not deterministic at %d: %v then %v", i, p.Points[i], again.Points[i])
				}
			}
		})
	}
}

func TestProjectEdges(t *testing.T) {
	for _, tt := range []struct {
		name    string
		vecs    [][]float32
		wantErr string
	}{
		{"empty", nil, ""},
		{"one vector", [][]float32{{1, 2, 3}}, ""},
		{"identical vectors", [][]float32{{1, 2}, {1, 2}, {1, 2}}, ""},
		{"ragged", [][]float32{{1, 2}, {1}}, "vector 1 has length 1"},
		{"not finite", [][]float32{{1, 2}, {float32(math.NaN()), 0}}, "not finite"},
		{"empty vectors", [][]float32{{}, {}}, "length 0"},
		{"too many", make([][]float32, MaxProjectRows+1), "at most"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Project(tt.vecs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Points) != len(tt.vecs) || p.Explained != [2]float64{} {
				t.Fatalf("%+v", p)
			}
			for _, pt := range p.Points {
				if pt != [2]float64{} {
					t.Fatalf("non-zero point %v", pt)
				}
			}
		})
	}
}
