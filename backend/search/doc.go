// Package search is memtray's read pipeline (docs/architecture.md, "A
// prompt recalled").
//
// The pure parts are plain functions with table tests: RRF fuses ranked
// lists, Composite computes the composite score with every factor visible,
// Keywords picks the distinctive terms of a prompt by IDF, Coverage measures
// how much of a query's IDF weight a memory contains, ApplyFloors drops weak
// results and MMR reorders for diversity. The Engine wires them to a store and
// an embedder: embed the query, vector and BM25 candidates (overfetched, the
// two legs run concurrently), RRF, composite, floors, MMR, session exclusion,
// top K.
package search
