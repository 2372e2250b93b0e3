package search

import (
	"github.com/memtray/memtray/backend/store"
	"math"
	"reflect"
	"testing"
)

func TestKeywordFloor(t *testing.T) {
	cases := map[int]float64{0: 0.5, 1: 0.5, 10: 0.5, 100: 0.15 * math.Log(100), 100000: 0.15 * math.Log(100000)}
	for n, want := range cases {
		if got := KeywordFloor(n); !near(got, want) {
			t.Errorf("KeywordFloor(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestKeywords(t *testing.T) {
	df := map[string]int{"the": 90, "ledger": 2, "credit": 5, "balanc": 20, "common": 60, "rare": 1}
	terms := []string{"the", "credit", "ledger", "balanc", "common", "ledger", "unknown", "rare"}
	cases := []struct {
		name string
		n    int
		max  int
		want []string
	}{
		// n=100: floor = 0.15 ln 100 = 0.69; common: ln(100/60)=0.51 < floor
		{"floor and order", 100, 5, []string{"rare", "ledger", "credit", "balanc"}},
		{"max", 100, 2, []string{"rare", "ledger"}},
		{"zero max", 100, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kws := Keywords(terms, df, c.n, c.max)
			var got []string
			for _, k := range kws {
				got = append(got, k.Term)
				if !near(k.IDF, math.Log(float64(c.n)/float64(df[k.Term]))) {
					t.Errorf("%s: idf %v", k.Term, k.IDF)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Keywords = %v, want %v", got, c.want)
			}
		})
	}
}

func TestCoverage(t *testing.T) {
	df := map[string]int{"a": 1, "b": 1, "c": 50}
	n := 100
	idfA := SmoothIDF(1, n)
	idfC := SmoothIDF(50, n)
	idfZ := SmoothIDF(0, n)
	doc := map[string]bool{"a": true, "c": true}
	cases := []struct {
		name  string
		query []string
		want  float64
	}{
		{"empty query", nil, 0},
		{"all present", []string{"a", "c"}, 1},
		{"duplicates count once", []string{"a", "a", "c"}, 1},
		{"one of two rare", []string{"a", "b"}, 0.5},
		{"common term weighs less", []string{"b", "c"}, idfC / (idfA + idfC)},
		{"unknown term weighs most", []string{"a", "zzz"}, idfA / (idfA + idfZ)},
	}
	for _, c := range cases {
		if got := Coverage(c.query, doc, df, n); !near(got, c.want) {
			t.Errorf("%s: Coverage = %v, want %v", c.name, got, c.want)
		}
	}
	if !(idfZ > idfA && idfA > idfC && idfC > 0) {
		t.Errorf("SmoothIDF not decreasing in df: %v %v %v", idfZ, idfA, idfC)
	}
}

func TestExpandedCoverage(t *testing.T) {
	df := map[string]int{"bill": 2, "invoic": 3, "custom": 10}
	n := 100
	idfBill, idfCust := SmoothIDF(2, n), SmoothIDF(10, n)
	alts := map[string][]store.Term{"bill": {{Text: "invoic", Boost: 0.3}, {Text: "account", Boost: 0.15}}}
	cases := []struct {
		name string
		doc  []string
		want float64
	}{
		{"own term", []string{"bill", "custom"}, 1},
		{"synonym earns its weight", []string{"invoic", "custom"}, (0.3*idfBill + idfCust) / (idfBill + idfCust)},
		{"best alternative", []string{"invoic", "account"}, 0.3 * idfBill / (idfBill + idfCust)},
		{"nothing", []string{"parrot"}, 0},
	}
	for _, c := range cases {
		doc := map[string]bool{}
		for _, d := range c.doc {
			doc[d] = true
		}
		if got := ExpandedCoverage([]string{"bill", "custom"}, doc, df, n, alts); !near(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
