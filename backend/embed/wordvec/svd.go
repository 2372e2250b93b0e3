package wordvec

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// csr is a sparse matrix in compressed sparse row form.
type csr struct {
	rows, cols int
	ptr        []int64
	idx        []uint32
	val        []float32
}

// transpose returns mᵀ in CSR form (rows of the result have ascending
// columns).
func (m *csr) transpose() *csr {
	t := &csr{rows: m.cols, cols: m.rows, ptr: make([]int64, m.cols+1),
		idx: make([]uint32, len(m.idx)), val: make([]float32, len(m.val))}
	for _, j := range m.idx {
		t.ptr[j+1]++
	}
	for j := 0; j < m.cols; j++ {
		t.ptr[j+1] += t.ptr[j]
	}
	fill := slices.Clone(t.ptr[:m.cols])
	for i := 0; i < m.rows; i++ {
		for k := m.ptr[i]; k < m.ptr[i+1]; k++ {
			j := m.idx[k]
			t.idx[fill[j]], t.val[fill[j]] = uint32(i), m.val[k]
			fill[j]++
		}
	}
	return t
}

// parallelRows runs fn over [0, n) split into fixed chunks on workers
// goroutines; chunk boundaries do not depend on workers.
func parallelRows(n, workers int, fn func(lo, hi int)) {
	const chunks = 64
	size := (n + chunks - 1) / chunks
	if size == 0 {
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, chunks)
	for c := 0; c*size < n; c++ {
		next <- c
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				fn(c*size, min((c+1)*size, n))
			}
		}()
	}
	wg.Wait()
}

// mulDense returns m·x, x being m.cols x l row-major.
func (m *csr) mulDense(x []float64, l, workers int) []float64 {
	y := make([]float64, m.rows*l)
	parallelRows(m.rows, workers, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out := y[i*l : (i+1)*l]
			for k := m.ptr[i]; k < m.ptr[i+1]; k++ {
				v := float64(m.val[k])
				in := x[int(m.idx[k])*l : int(m.idx[k]+1)*l]
				for c := range out {
					out[c] += v * in[c]
				}
			}
		}
	})
	return y
}

// gram returns yᵀy (l x l) for y n x l row-major, summed per fixed chunk in
// order so the result does not depend on scheduling.
func gram(y []float64, n, l, workers int) []float64 {
	const chunks = 64
	size := (n + chunks - 1) / chunks
	parts := make([][]float64, chunks)
	parallelRows(n, workers, func(lo, hi int) {
		g := make([]float64, l*l)
		for i := lo; i < hi; i++ {
			r := y[i*l : (i+1)*l]
			for a, ra := range r {
				if ra == 0 {
					continue
				}
				ga := g[a*l : (a+1)*l]
				for b := a; b < l; b++ {
					ga[b] += ra * r[b]
				}
			}
		}
		parts[lo/size] = g
	})
	g := make([]float64, l*l)
	for _, p := range parts {
		for k, v := range p {
			g[k] += v
		}
	}
	for a := 0; a < l; a++ {
		for b := 0; b < a; b++ {
			g[a*l+b] = g[b*l+a]
		}
	}
	return g
}

// cholesky factors g = rᵀr in place (upper triangle r); false if g is not
// numerically positive definite.
func cholesky(g []float64, l int) ([]float64, bool) {
	r := make([]float64, l*l)
	for j := 0; j < l; j++ {
		s := g[j*l+j]
		for k := 0; k < j; k++ {
			s -= r[k*l+j] * r[k*l+j]
		}
		if !(s > 0) {
			return nil, false
		}
		d := math.Sqrt(s)
		r[j*l+j] = d
		for c := j + 1; c < l; c++ {
			t := g[j*l+c]
			for k := 0; k < j; k++ {
				t -= r[k*l+j] * r[k*l+c]
			}
			r[j*l+c] = t / d
		}
	}
	return r, true
}

// orthonormalize replaces y (n x l) by an orthonormal basis of its columns
// (shifted CholeskyQR, then CholeskyQR twice).
func orthonormalize(y []float64, n, l, workers int) error {
	for pass := 0; pass < 3; pass++ {
		g := gram(y, n, l, workers)
		r, ok := cholesky(g, l)
		if !ok {
			var tr float64
			for a := 0; a < l; a++ {
				tr += g[a*l+a]
			}
			if !(tr > 0) {
				return fmt.Errorf("wordvec: svd: zero matrix")
			}
			for a := 0; a < l; a++ {
				g[a*l+a] += 1e-10 * tr
			}
			if r, ok = cholesky(g, l); !ok {
				return fmt.Errorf("wordvec: svd: range basis is degenerate")
			}
		}
		// y = y r⁻¹ row by row (forward substitution with rᵀ).
		parallelRows(n, workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := y[i*l : (i+1)*l]
				for c := 0; c < l; c++ {
					s := row[c]
					for k := 0; k < c; k++ {
						s -= row[k] * r[k*l+c]
					}
					row[c] = s / r[c*l+c]
				}
			}
		})
	}
	return nil
}

// symEigen returns the eigenvalues (descending) and eigenvectors (columns of
// the l x l row-major result) of the symmetric matrix a, by cyclic Jacobi.
func symEigen(a []float64, l int) ([]float64, []float64) {
	a = slices.Clone(a)
	v := make([]float64, l*l)
	for i := 0; i < l; i++ {
		v[i*l+i] = 1
	}
	for sweep := 0; sweep < 100; sweep++ {
		var off, diag float64
		for p := 0; p < l; p++ {
			diag += a[p*l+p] * a[p*l+p]
			for q := p + 1; q < l; q++ {
				off += a[p*l+q] * a[p*l+q]
			}
		}
		if off <= 1e-30*diag || off == 0 {
			break
		}
		for p := 0; p < l; p++ {
			for q := p + 1; q < l; q++ {
				apq := a[p*l+q]
				if math.Abs(apq) < 1e-300 {
					continue
				}
				theta := (a[q*l+q] - a[p*l+p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := 0; k < l; k++ {
					akp, akq := a[k*l+p], a[k*l+q]
					a[k*l+p] = c*akp - s*akq
					a[k*l+q] = s*akp + c*akq
				}
				for k := 0; k < l; k++ {
					apk, aqk := a[p*l+k], a[q*l+k]
					a[p*l+k] = c*apk - s*aqk
					a[q*l+k] = s*apk + c*aqk
				}
				for k := 0; k < l; k++ {
					vkp, vkq := v[k*l+p], v[k*l+q]
					v[k*l+p] = c*vkp - s*vkq
					v[k*l+q] = s*vkp + c*vkq
				}
			}
		}
	}
	ord := make([]int, l)
	for i := range ord {
		ord[i] = i
	}
	slices.SortStableFunc(ord, func(x, y int) int { return cmp.Compare(a[y*l+y], a[x*l+x]) })
	vals := make([]float64, l)
	vecs := make([]float64, l*l)
	for c, o := range ord {
		vals[c] = a[o*l+o]
		// Fix the sign: the largest component is positive.
		var big float64
		for k := 0; k < l; k++ {
			if math.Abs(v[k*l+o]) > math.Abs(big) {
				big = v[k*l+o]
			}
		}
		sgn := 1.0
		if big < 0 {
			sgn = -1
		}
		for k := 0; k < l; k++ {
			vecs[k*l+c] = sgn * v[k*l+o]
		}
	}
	return vals, vecs
}

// randomizedSVD returns the top k left singular vectors of m (m.rows x k,
// row-major) and singular values, by a seeded randomized range finder with
// power iterations (Halko, Martinsson and Tropp 2011).
func randomizedSVD(m *csr, k, over, iters int, seed uint64, workers int) ([]float64, []float64, error) {
	l := min(k+over, m.rows, m.cols)
	if k > l {
		return nil, nil, fmt.Errorf("wordvec: svd: rank %d exceeds the matrix size", k)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d656d74726179))
	omega := make([]float64, m.cols*l)
	for i := range omega {
		omega[i] = rng.NormFloat64()
	}
	mt := m.transpose()
	q := m.mulDense(omega, l, workers)
	omega = nil
	if err := orthonormalize(q, m.rows, l, workers); err != nil {
		return nil, nil, err
	}
	for it := 0; it < iters; it++ {
		z := mt.mulDense(q, l, workers)
		if err := orthonormalize(z, m.cols, l, workers); err != nil {
			return nil, nil, err
		}
		q = m.mulDense(z, l, workers)
		if err := orthonormalize(q, m.rows, l, workers); err != nil {
			return nil, nil, err
		}
	}
	bt := mt.mulDense(q, l, workers) // (qᵀm)ᵀ
	g := gram(bt, m.cols, l, workers)
	bt = nil
	vals, w := symEigen(g, l)
	u := make([]float64, m.rows*k)
	parallelRows(m.rows, workers, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			qr := q[i*l : (i+1)*l]
			ur := u[i*k : (i+1)*k]
			for a, qa := range qr {
				wa := w[a*l : a*l+k]
				for c := range ur {
					ur[c] += qa * wa[c]
				}
			}
		}
	})
	sv := make([]float64, k)
	for i := range sv {
		sv[i] = math.Sqrt(math.Max(vals[i], 0))
	}
	return u, sv, nil
}
