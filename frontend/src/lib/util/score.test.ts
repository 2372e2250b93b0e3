import { describe, expect, it } from 'vitest';
import type { ScoreBreakdown } from '../api/models';
import { ageWords, effectOf, factors, fmt2, relevanceWords, scorePhrases, scoreSentence } from './score';

const ones: ScoreBreakdown = {
  relevance: 1, importance: 1, recency: 1, access: 1, anti_sticky: 1, kind_boost: 1, surface: 1,
  project_boost: 1, feedback: 1, keyword: 1, composite: 1,
};
const now = new Date('2026-11-27T12:00:00Z');

describe('score words', () => {
  it('says the issue\'s example in the order the score is computed', () => {
    const b = { ...ones, relevance: 0.96, importance: 0.8, kind_boost: 1.5, keyword: 1.2, composite: 1.3824 };
    expect(scoreSentence(b, { kind: 'decision', created_at: now.toISOString() }, now))
      .toBe('very relevant 0.96 · importance 0.8 lowers it · decision x1.5 · keyword x1.2');
  });

  it.each([
    ['recency with the age', { recency: 0.7 }, { kind: 'fact', created_at: '2026-10-30T12:00:00Z' }, '4 weeks old x0.7 lowers it'],
    ['the age runs from the last reinforcement', { recency: 0.9 },
      { kind: 'fact', created_at: '2025-01-01T00:00:00Z', last_reinforced_at: '2026-11-24T12:00:00Z' }, '3 days old x0.9 lowers it'],
    ['recency without a memory', { recency: 0.5 }, undefined, 'age x0.5 lowers it'],
    ['access', { access: 1.4 }, { kind: 'fact', created_at: '', access_count: 4 }, 'used 4 times x1.4'],
    ['anti-sticky', { anti_sticky: 0.86 }, undefined, 'retrieved often, rarely confirmed x0.86 lowers it'],
    ['symbol', { surface: 0.2 }, undefined, 'code symbol x0.2 lowers it'],
    ['project', { project_boost: 2.5 }, undefined, 'this project x2.5'],
    ['helpful', { feedback: 1.15 }, undefined, 'rated helpful x1.15'],
    ['unhelpful', { feedback: 0.7 }, undefined, 'rated unhelpful x0.7 lowers it'],
    ['diversity', { diversity: 0.0744 }, undefined, 'resembles a hit above it −0.07'],
  ])('%s', (_name, over, m, phrase) => {
    const phrases = scorePhrases({ ...ones, relevance: 0.5, ...over } as ScoreBreakdown, m, now).map((p) => p.text);
    expect(phrases).toEqual(['somewhat relevant 0.5', phrase]);
  });

  it('leaves out factors at 1 and says how each moves the score', () => {
    const p = scorePhrases({ ...ones, relevance: 0.2, importance: 0.999, keyword: 1.4, recency: 0.6 }, undefined, now);
    expect(p.map((x) => [x.key, x.effect])).toEqual([['relevance', 'base'], ['recency', 'down'], ['keyword', 'up']]);
    expect(p[0].text).toBe('barely relevant 0.2');
  });

  it('lists the factors in computing order with the running product', () => {
    const f = factors({ ...ones, relevance: 0.8, importance: 0.5, kind_boost: 1.5, composite: 0.6 });
    expect(f.map((x) => x.key)).toEqual(['relevance', 'importance', 'recency', 'access', 'anti_sticky', 'kind_boost', 'surface',
      'project_boost', 'feedback', 'keyword']);
    expect(f[f.length - 1].running).toBeCloseTo(0.6);
    expect(f[1].running).toBeCloseTo(0.4);
  });

  it('treats a missing or broken factor as 1', () => {
    const f = factors({ ...ones, keyword: undefined as unknown as number, feedback: NaN });
    expect(f.find((x) => x.key === 'keyword')?.value).toBe(1);
    expect(f.find((x) => x.key === 'feedback')?.effect).toBe('neutral');
  });

  it.each([
    [0.96, 'very relevant'], [0.85, 'very relevant'], [0.6, 'relevant'], [0.4, 'somewhat relevant'], [0.1, 'barely relevant'],
  ])('relevance %f is %s', (r, w) => expect(relevanceWords(r)).toBe(w));

  it('formats factors and ages', () => {
    expect([fmt2(1.5), fmt2(0.8), fmt2(1), fmt2(0.456), fmt2(2.5)]).toEqual(['1.5', '0.8', '1', '0.46', '2.5']);
    expect([ageWords(0.2), ageWords(1), ageWords(20), ageWords(90), ageWords(800)]).toEqual(['0 days', '1 day', '3 weeks', '3 months', '2 years']);
    expect([effectOf(1.004), effectOf(1.2), effectOf(0.5)]).toEqual(['neutral', 'up', 'down']);
  });
});
