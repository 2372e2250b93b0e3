// Vitest setup: jsdom lacks EventSource; the stores get a fake in tests.
export {};
