// Package crashtest is memtray's crash-safety harness (issue "Reliability
// and security", item 3), run from outside like a user's machine would:
// it starts the real `memtray serve` (the test binary re-executed as the
// program, see TestMain), drives it over its HTTP API with the install
// token through ingest bursts, adds, imports, steward runs and switches of
// the embedding model, kills it with SIGKILL at a random moment, restarts
// it and checks that it starts, that every memory acknowledged before the
// kill is there and intact, that the indexes agree with the records, that
// a steward run is applied wholly or not at all and that the vectors are
// all of the model the store records.
//
// `go test ./app/crashtest` runs the quick version, 20 kills in about 25 s
// (10 under -race, as in `make test`, whose daemons are raced too);
// MEMTRAY_SOAK_KILLS=N runs N (`make soak`), and with SOAK_OUT set the
// result is written to $SOAK_OUT/crash.json for the soak table
// (cmd/soakreport). MEMTRAY_CRASH_SEED repeats a run's random choices,
// MEMTRAY_CRASH_TRACE=1 logs each life. The package has no code outside
// its tests.
package crashtest
