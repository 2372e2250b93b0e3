// The config fields' explanations, from docs/configuration.md: the page
// cmd/configdoc generates from the config struct's doc comments (a Go test
// fails when it is stale), read at build time, so Settings says what the
// code says and never drifts from it.
import page from '../../../../docs/configuration.md?raw';

/** One documented key: its JSON type, default (as the config file writes it) and doc line. */
export interface KeyDoc {
  type: string;
  default: string;
  doc: string;
}

/** Splits a Markdown table row on its unescaped pipes. */
function cells(row: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < row.length; i++) {
    const c = row[i];
    if (c === '\\' && row[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (c === '|') {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  return out.slice(1, -1); // the row's leading and trailing pipes
}

/** Markdown inline text as plain text: escapes, entities and backticks undone. */
export function plain(md: string): string {
  return md
    .replace(/\\([\\`*_{}[\]()#+\-.!|<>])/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
}

/**
 * Parses the key tables of the configuration page. A row may document
 * several keys (joined by <br>) with one paragraph: each key gets the
 * sentence that starts with its name when the paragraph has one per key
 * ("`k` is ...; `max_chars` bounds ..."), else the whole paragraph.
 */
export function parseConfigDoc(md: string): Record<string, KeyDoc> {
  const out: Record<string, KeyDoc> = {};
  for (const line of md.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const c = cells(line);
    if (c.length < 4) continue;
    const keys = c[0].split('<br>').map((k) => k.replace(/`/g, '').trim());
    const types = c[1].split('<br>');
    const defs = c[2].split('<br>');
    const doc = c.slice(3).join(' | ');
    const parts = doc.split(/;\s+(?=`)/);
    keys.forEach((key, i) => {
      const name = key.split('.').pop()!;
      const own = keys.length > 1 && parts.length === keys.length ? parts.find((p) => p.startsWith('`' + name.replace(/_/g, '\\_') + '`') || p.startsWith('`' + name + '`')) : undefined;
      // "`k` is the most ..." reads as "The most ...": the label names the field.
      let text = plain((own ?? doc).replace(/^`[^`]+`(?:\s+and\s+`[^`]+`)?\s+(?:is\s+|are\s+)?/, '')).trim();
      if (!/[.!?]$/.test(text)) text += '.';
      out[key] = { type: (types[i] ?? types[0]).trim(), default: plain((defs[i] ?? defs[0]).trim()), doc: text[0].toUpperCase() + text.slice(1) };
    });
  }
  return out;
}

/** The documented keys of this build. */
export const configDoc: Record<string, KeyDoc> = parseConfigDoc(page);

/** A default as a person reads it: durations short ("1h0m0s" is 1h), strings unquoted, lists joined. */
export function readableDefault(d: KeyDoc): string {
  let v: unknown;
  try {
    v = JSON.parse(d.default);
  } catch {
    return d.default;
  }
  if (Array.isArray(v)) return v.length ? v.join(', ') : 'none';
  if (typeof v === 'string') {
    if (d.type === 'duration') return v.replace(/(\d)h0m0s$/, '$1h').replace(/(\d)m0s$/, '$1m').replace(/^0s$/, '0 (off)');
    return v === '' ? 'empty' : v;
  }
  return String(v);
}
