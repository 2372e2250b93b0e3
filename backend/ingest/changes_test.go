package ingest

import "testing"

// TestChangeLog: a line that only reports which files and symbols a change
// touched is status; one that also gives a reason, a constraint, a
// behaviour, code or a setting, or says where a subject lives, is not.
// Each group below fails without its rule.
func TestChangeLog(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		// A path-led entry whose rest only reports a change.
		{"**`lib/shop/cart.ex`** — Added `has_many :lines, Shop.Line`", false}, // code: how the relation is declared
		{"**`lib/shop/cart.ex`** — Added `lines` relation and `total/1`", true},
		{"`web/checkout.ts` (MODIFIED - step 2): Updated `submitOrder` and `retryOrder`", true},
		{"**`lib/shop/cart.ex`** — Changed `total/1` to round half-even so invoices match the ledger", false}, // a reason
		{"**`lib/shop/cart.ex`** — Cart aggregate: owns lines and computes totals", false},                    // what the file is, not a change
		{"**`lib/shop/cart.ex`** (NEW)", false},                                                               // a heading: its items say what it is

		// A bare "Added X" line.
		{"Added `fetch_rates/1` and `cache_rates/2`", true},
		{"Registered `Shop.Line` in the domain resources", true},
		{"Updated cart_view.ex and line_view.ex", true},
		{"Added `fetch_rates/1`, which returns cached rates when the rates API is down", false}, // a behaviour
		{"Changed `order_key/1` to skip archived orders", false},                                // a purpose
		{"Added `price_for/2` for currency conversion at checkout", false},                      // what it is for
		{"Added `CART_TTL=900` to the worker environment", false},                               // a setting
		{"Created the refund notes file at `docs/refunds.md`", false},                           // described, not named
		{"Updated checkout retry handling: `web/retry.ts`, `web/api.ts`", false},                // where a subject lives

		// Tests: they hold what they check.
		{"Added tests for the cart totals and the empty cart", true},
		{"tests/test_cart.py: Covers rounding of negative totals", true},
		{"Added tests for rounding because the ledger rejects half-cent totals", false}, // a reason
		{"tests/test_cart.py: Runs only with `SHOP_DB=sqlite` set, since fixtures use sqlite", false},

		// Not a change log at all.
		{"The cart total rounds half-even because the ledger rejects half cents.", false},
		{"`lib/shop/cart.ex` now preloads lines before computing totals.", false},
	}
	for _, tc := range tests {
		if got := changeLog(tc.line, lower(tc.line)); got != tc.want {
			t.Errorf("changeLog(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
