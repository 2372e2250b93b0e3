package ingest

// redactText masks secrets in s and counts them.
func redactText(s string) (string, int) { return s, 0 } // TEMP until backend/redact lands
