import { describe, expect, it } from 'vitest';
import { turnLabel } from './turn';

describe('turnLabel', () => {
  // Bug: the feed said "#4" for the user's third prompt: the number was
  // the exchange's, which counts the tool loop's iterations too.
  it.each([
    ['the user turn, not the exchange', { user_turn: 3, turn: 4 }, 'turn 3'],
    ['the exchange when prompts were not counted', { turn: 7 }, 'exchange 7'],
    ['nothing for a document', {}, ''],
  ])('%s', (_, d, want) => {
    expect(turnLabel(d)).toBe(want);
  });
});
