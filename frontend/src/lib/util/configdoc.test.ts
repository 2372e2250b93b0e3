import { describe, expect, it } from 'vitest';
import { configDoc, parseConfigDoc, readableDefault } from './configdoc';

describe('config docs', () => {
  it('parses single and grouped rows, escapes and defaults', () => {
    const md = [
      '| Key | Type | Default | Description |',
      '| --- | --- | --- | --- |',
      '| `ingest.content_threshold` | number | `0.35` | `content_threshold` is the content score gate: quality / (quality + noise) below it is rejected. |',
      '| `recall.k`<br>`recall.max_chars` | integer<br>integer | `5`<br>`2000` | `k` is the most memories one recall returns; `max_chars` bounds the text of the block handed to the agent. |',
      '| `judge.max_per_hour`<br>`judge.max_per_day` | integer<br>integer | `120`<br>`1000` | `max_per_hour` and `max_per_day` cap judge calls; past a cap the gates decide alone. |',
      '| `steward.every` | duration | `"1h0m0s"` | `every` is the sweep\'s period; 0 turns the schedule off |',
      '| `steward.auto_apply` | list of strings | `["decay_stale","prune"]` | `auto_apply` lists decay\\_stale \\| prune &lt;x&gt; |',
    ].join('\n');
    const d = parseConfigDoc(md);
    expect(d['ingest.content_threshold']).toEqual({ type: 'number', default: '0.35', doc: 'The content score gate: quality / (quality + noise) below it is rejected.' });
    expect(d['recall.k'].doc).toBe('The most memories one recall returns.');
    expect(d['recall.max_chars']).toEqual({ type: 'integer', default: '2000', doc: 'Bounds the text of the block handed to the agent.' });
    expect(d['judge.max_per_day'].doc).toBe('Cap judge calls; past a cap the gates decide alone.');
    expect(d['steward.every'].doc).toBe("The sweep's period; 0 turns the schedule off.");
    expect(readableDefault(d['steward.every'])).toBe('1h');
    expect(d['steward.auto_apply'].doc).toBe('Lists decay_stale | prune <x>.');
    expect(readableDefault(d['steward.auto_apply'])).toBe('decay_stale, prune');
  });

  it('documents every field Settings lets the user change', () => {
    for (const k of ['listen', 'capture.anthropic_upstream', 'capture.openai_upstream', 'ingest.content_threshold', 'ingest.min_length',
      'judge.max_per_hour', 'judge.max_per_day', 'recall.k', 'recall.max_chars', 'recall.skills', 'steward.every', 'steward.auto_apply']) {
      expect(configDoc[k]?.doc, k).toMatch(/^[A-Z].{10,}\.$/);
      expect(configDoc[k]?.doc, k).not.toMatch(/`/);
    }
  });
});
