// Words for a search hit's score: the composite is a product of factors
// (backend/search/score.go, Composite), and a person reads it best as one
// sentence: "very relevant 0.96 · decision x1.5 · keyword x1.2 ·
// importance 0.8 lowers it". Pure functions, so they are tested alone.
import type { Memory, ScoreBreakdown } from '../api/models';

/** How a factor moves the score: the base (relevance), up (> 1), down (< 1) or not at all. */
export type Effect = 'base' | 'up' | 'down' | 'neutral';

/** One factor of the composite, in the order Composite multiplies them. */
export interface Factor {
  key: keyof ScoreBreakdown;
  label: string;
  value: number;
  effect: Effect;
  /** The product of the factors so far, this one included. */
  running: number;
}

/** The factors of the composite, in the order the score is computed. */
export const FACTOR_ORDER: [keyof ScoreBreakdown, string][] = [
  ['relevance', 'relevance'], ['importance', 'importance'], ['recency', 'recency'], ['access', 'access'],
  ['anti_sticky', 'anti-sticky'], ['kind_boost', 'kind'], ['surface', 'surface'], ['project_boost', 'project'],
  ['feedback', 'feedback'], ['keyword', 'keyword'],
];

/** A factor within this of 1 neither raises nor lowers the score in words (and its bar is grey). */
export const NEUTRAL = 0.005;

function num(v: unknown, dflt: number): number {
  const n = Number(v);
  return Number.isFinite(n) ? n : dflt;
}

/** effectOf says how a multiplying factor moves the score. */
export function effectOf(v: number): Effect {
  if (Math.abs(v - 1) < NEUTRAL) return 'neutral';
  return v > 1 ? 'up' : 'down';
}

/** factors lists the composite's factors in computing order with their running product. */
export function factors(b: ScoreBreakdown): Factor[] {
  let running = 1;
  return FACTOR_ORDER.map(([key, label]) => {
    const value = num(b[key], 1);
    running *= value;
    return { key, label, value, effect: key === 'relevance' ? 'base' : effectOf(value), running };
  });
}

/** relevanceWords puts the 0..1 relevance into words. */
export function relevanceWords(r: number): string {
  if (r >= 0.85) return 'very relevant';
  if (r >= 0.6) return 'relevant';
  if (r >= 0.35) return 'somewhat relevant';
  return 'barely relevant';
}

/** fmt2 prints a factor with two decimals, dropping zeros that say nothing (1.50 -> 1.5, 0.80 -> 0.8). */
export function fmt2(v: number): string {
  const s = v.toFixed(2);
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** age puts a span of days into words: "3 days", "5 weeks", "2 months", "1 year". */
export function ageWords(days: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (days < 14) return plural(Math.max(0, Math.round(days)), 'day');
  if (days < 60) return plural(Math.round(days / 7), 'week');
  if (days < 365) return plural(Math.round(days / 30), 'month');
  return plural(Math.round(days / 365), 'year');
}

/** The parts of a memory the sentence names, when known. */
export type HitMemory = Pick<Memory, 'kind' | 'created_at'> & Partial<Pick<Memory, 'last_reinforced_at' | 'access_count'>>;

/** One phrase of the sentence, with how it moves the score. */
export interface Phrase {
  key: string;
  text: string;
  effect: Effect;
}

/**
 * scorePhrases explains a hit's score, phrase by phrase in the order the
 * score is computed: the relevance in words, then each factor that moves
 * it (boosts as "x1.5", damping as "... lowers it"), then what diversity
 * took off. Factors at 1 are left out. m (the hit's memory) names the kind
 * and the age; now is when the age is measured.
 */
export function scorePhrases(b: ScoreBreakdown, m?: HitMemory, now: Date = new Date()): Phrase[] {
  const out: Phrase[] = [];
  for (const f of factors(b)) {
    const v = f.value;
    if (f.key === 'relevance') {
      out.push({ key: f.key, text: `${relevanceWords(v)} ${fmt2(v)}`, effect: 'base' });
      continue;
    }
    if (f.effect === 'neutral') continue;
    const up = f.effect === 'up';
    const x = `x${fmt2(v)}`;
    let text: string;
    switch (f.key) {
      case 'importance':
        text = up ? `importance ${fmt2(v)}` : `importance ${fmt2(v)} lowers it`;
        break;
      case 'recency': {
        const from = [m?.created_at, m?.last_reinforced_at].filter((s): s is string => !!s && !s.startsWith('0001-'))
          .map((s) => new Date(s).getTime()).filter((t) => Number.isFinite(t));
        const days = from.length ? (now.getTime() - Math.max(...from)) / 86400000 : NaN;
        text = `${Number.isFinite(days) ? `${ageWords(days)} old` : 'age'} ${x}${up ? '' : ' lowers it'}`;
        break;
      }
      case 'access':
        text = `${m?.access_count ? `used ${m.access_count} time${m.access_count === 1 ? '' : 's'}` : 'used before'} ${x}`;
        break;
      case 'anti_sticky':
        text = `retrieved often, rarely confirmed ${x} lowers it`;
        break;
      case 'kind_boost':
        text = `${m?.kind || 'kind'} ${x}${up ? '' : ' lowers it'}`;
        break;
      case 'surface':
        text = `code symbol ${x}${up ? '' : ' lowers it'}`;
        break;
      case 'project_boost':
        text = `this project ${x}`;
        break;
      case 'feedback':
        text = up ? `rated helpful ${x}` : `rated unhelpful ${x} lowers it`;
        break;
      case 'keyword':
        text = `keyword ${x}${up ? '' : ' lowers it'}`;
        break;
      default:
        text = `${f.label} ${x}`;
    }
    out.push({ key: String(f.key), text, effect: f.effect });
  }
  const d = num(b.diversity, 0);
  if (d > 0) out.push({ key: 'diversity', text: `resembles a hit above it −${fmt2(d)}`, effect: 'down' });
  return out;
}

/** scoreSentence is scorePhrases as one line, the phrases joined by " · ". */
export function scoreSentence(b: ScoreBreakdown, m?: HitMemory, now: Date = new Date()): string {
  return scorePhrases(b, m, now).map((p) => p.text).join(' · ');
}
