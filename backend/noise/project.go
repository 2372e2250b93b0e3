package noise

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Bounds of Project: it refuses more work than a UI view needs.
const (
	// MaxProjectRows bounds the vectors one projection takes.
	MaxProjectRows = 2000
	// MaxProjectDim bounds their length.
	MaxProjectDim = 8192
)

// projectSeed seeds the power iteration's start vectors: the same input
// always gives the same projection.
const projectSeed = 0x6d656d7472617921

// powerIterations and powerTol bound each component's power iteration.
const (
	powerIterations = 300
	powerTol        = 1e-10
)

// Projection is a set of vectors projected onto their first two principal
// components.
type Projection struct {
	// Points has one (pc1, pc2) coordinate pair per input vector, in order.
	Points [][2]float64
	// Explained is the share of the total variance along each component (0..1).
	Explained [2]float64
}

// Project centres vecs and projects them onto their first two principal
// components, found by power iteration on the covariance (X^T X, applied as
// X^T (X v), never formed) with deflation, from a fixed seed. Each axis's
// sign is fixed so its largest component is positive. Fewer than two
// distinct vectors give zero coordinates; vectors of different lengths,
// non-finite values or more than MaxProjectRows x MaxProjectDim are errors.
func Project(vecs [][]float32) (Projection, error) {
	n := len(vecs)
	p := Projection{Points: make([][2]float64, n)}
	if n == 0 {
		return p, nil
	}
	if n > MaxProjectRows {
		return Projection{}, fmt.Errorf("noise: project %d vectors: at most %d", n, MaxProjectRows)
	}
	dim := len(vecs[0])
	if dim == 0 || dim > MaxProjectDim {
		return Projection{}, fmt.Errorf("noise: project vectors of length %d: want 1..%d", dim, MaxProjectDim)
	}
	// Centre into one flat row-major matrix.
	x := make([]float64, n*dim)
	mean := make([]float64, dim)
	for i, v := range vecs {
		if len(v) != dim {
			return Projection{}, fmt.Errorf("noise: project: vector %d has length %d, vector 0 %d", i, len(v), dim)
		}
		for j, f := range v {
			g := float64(f)
			if math.IsNaN(g) || math.IsInf(g, 0) {
				return Projection{}, fmt.Errorf("noise: project: vector %d is not finite", i)
			}
			x[i*dim+j] = g
			mean[j] += g
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	var total float64
	for i := 0; i < n; i++ {
		row := x[i*dim : (i+1)*dim]
		for j := range row {
			row[j] -= mean[j]
			total += row[j] * row[j]
		}
	}
	if total == 0 {
		return p, nil
	}
	rng := rand.New(rand.NewPCG(projectSeed, projectSeed>>1))
	var axes [][]float64
	for k := 0; k < 2; k++ {
		v, lambda, err := principal(x, n, dim, axes, rng)
		if err != nil {
			return Projection{}, err
		}
		if lambda <= total*1e-12 {
			break // no variance left: the remaining coordinates stay 0
		}
		axes = append(axes, v)
		p.Explained[k] = math.Min(1, lambda/total)
		for i := 0; i < n; i++ {
			p.Points[i][k] = dot(x[i*dim:(i+1)*dim], v)
		}
	}
	return p, nil
}

// principal finds the dominant eigenvector of X^T X orthogonal to prev (the
// deflation) and its eigenvalue, the variance along it times n.
func principal(x []float64, n, dim int, prev [][]float64, rng *rand.Rand) ([]float64, float64, error) {
	v := make([]float64, dim)
	for j := range v {
		v[j] = rng.Float64()*2 - 1
	}
	deflate(v, prev)
	if !normalize(v) {
		return nil, 0, errors.New("noise: project: degenerate start vector")
	}
	xv := make([]float64, n)
	w := make([]float64, dim)
	for it := 0; it < powerIterations; it++ {
		for i := 0; i < n; i++ {
			xv[i] = dot(x[i*dim:(i+1)*dim], v)
		}
		clear(w)
		for i := 0; i < n; i++ {
			row := x[i*dim : (i+1)*dim]
			for j := range w {
				w[j] += xv[i] * row[j]
			}
		}
		deflate(w, prev)
		if !normalize(w) {
			return v, 0, nil // v lies in the null space: nothing left
		}
		var diff float64
		for j := range w {
			d := w[j] - v[j]
			diff += d * d
		}
		v, w = w, v
		if diff < powerTol {
			break
		}
	}
	// The Rayleigh quotient is the variance along v (times n), exactly.
	var rq float64
	for i := 0; i < n; i++ {
		c := dot(x[i*dim:(i+1)*dim], v)
		rq += c * c
	}
	// A deterministic sign: the largest component positive.
	big := 0
	for j := range v {
		if math.Abs(v[j]) > math.Abs(v[big]) {
			big = j
		}
	}
	if v[big] < 0 {
		for j := range v {
			v[j] = -v[j]
		}
	}
	return v, rq, nil
}

// deflate removes from v its components along the unit vectors prev.
func deflate(v []float64, prev [][]float64) {
	for _, u := range prev {
		c := dot(v, u)
		for j := range v {
			v[j] -= c * u[j]
		}
	}
}

// normalize scales v to unit length; false if it is (nearly) zero.
func normalize(v []float64) bool {
	l := math.Sqrt(dot(v, v))
	if l < 1e-300 {
		return false
	}
	for j := range v {
		v[j] /= l
	}
	return true
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
