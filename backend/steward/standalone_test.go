package steward

import (
	"strings"
	"testing"
)

func TestCompareStandalone(t *testing.T) {
	cases := []struct {
		name, a, b string
		want       int    // < 0: a reads better; > 0: b; 0: neither
		why        string // part of the explanation
	}{
		{name: "reply opener loses", a: "Yes, same cause: the cache is cold after deploys.", b: "The cache is cold after deploys.", want: 1, why: `"Yes,"`},
		{name: "right comma", a: "The cache is cold after deploys, so warm it.", b: "Right, the cache is cold after deploys.", want: -1, why: `"Right,"`},
		{name: "sure dash", a: "Sure — the cache is cold after deploys.", b: "The cache is cold after deploys, always.", want: 1, why: `"Sure —"`},
		{name: "no longer is not a reply", a: "No longer pinned: postgres runs 16 now.", b: "Postgres runs 16 now and is no longer pinned.", want: -1, why: "shorter"},
		{name: "question loses", a: "Is the cache cold after deploys?", b: "The cache is cold after deploys.", want: 1, why: "question"},
		{name: "leading pronoun loses", a: "It is cold after every deploy of the api.", b: "The cache is cold after every deploy.", want: 1, why: "pronouns"},
		{name: "pronoun with antecedent is fine", a: "The cache is cold after deploys because it is rebuilt.", b: "It is cold after deploys because it is rebuilt.", want: -1, why: "0 pronouns without an antecedent vs 1"},
		{name: "shorter wins last", a: "The cache is cold after each deploy.", b: "The cache is cold after deploys.", want: 1, why: "shorter"},
		{name: "equal", a: "The cache is cold.", b: "The cache is cold.", want: 0},
		{name: "white space does not count", a: "The cache  is cold.", b: "The cache is cold.", want: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := compareStandalone(c.a, c.b)
			if sign(got) != c.want || !strings.Contains(why, c.why) {
				t.Errorf("compareStandalone = %d %q, want %d with %q", got, why, c.want, c.why)
			}
			back, _ := compareStandalone(c.b, c.a)
			if sign(back) != -c.want {
				t.Errorf("not symmetric: %d then %d", got, back)
			}
		})
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// FuzzCompareStandalone: any two texts compare without panicking, the
// order is antisymmetric, and a choice always comes with its reason.
func FuzzCompareStandalone(f *testing.F) {
	for _, s := range [][2]string{
		{"Yes, same cause: the cache is cold.", "The cache is cold."},
		{"Sure — it is.", "Is it?"},
		{"", "   "},
		{"No longer pinned.", "It moved to docs/releases: see that."},
		{"ok.", "\xff\xfe"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, why := compareStandalone(a, b)
		ba, _ := compareStandalone(b, a)
		if sign(ab) != -sign(ba) {
			t.Fatalf("not antisymmetric: %d, %d", ab, ba)
		}
		if (ab != 0) != (why != "") {
			t.Fatalf("cmp %d with reason %q", ab, why)
		}
	})
}
