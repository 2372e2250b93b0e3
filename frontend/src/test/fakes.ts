// Test doubles: a fetch that answers from a route table, and an EventSource
// the test drives.
import { vi } from 'vitest';

export type Route = (req: { method: string; url: string; body: unknown }) => { status?: number; body?: unknown } | undefined;

export function fakeFetch(routes: Record<string, Route | unknown>) {
  const calls: { method: string; url: string; body: unknown }[] = [];
  const f = vi.fn(async (url: string, init: RequestInit = {}) => {
    const method = init.method ?? 'GET';
    const body = typeof init.body === 'string' ? JSON.parse(init.body) : init.body;
    calls.push({ method, url, body });
    const path = url.split('?')[0];
    const r = routes[`${method} ${path}`] ?? routes[`${method} ${url}`];
    if (r === undefined) return new Response(JSON.stringify({ error: 'no such route', code: 'Not Found' }), { status: 404, headers: { 'Content-Type': 'application/json' } });
    const out = typeof r === 'function' ? (r as Route)({ method, url, body }) ?? {} : { body: r };
    const status = out.status ?? 200;
    if (status === 204) return new Response(null, { status });
    return new Response(JSON.stringify(out.body ?? null), { status, headers: { 'Content-Type': 'application/json' } });
  });
  vi.stubGlobal('fetch', f);
  return { fetch: f, calls };
}

export class FakeEventSource {
  static instances: FakeEventSource[] = [];
  url: string;
  readyState = 0;
  onopen: (() => void) | null = null;
  onmessage: ((m: MessageEvent) => void) | null = null;
  onerror: (() => void) | null = null;
  listeners = new Map<string, ((m: MessageEvent) => void)[]>();
  constructor(url: string) {
    this.url = url;
    FakeEventSource.instances.push(this);
  }
  addEventListener(type: string, fn: (m: MessageEvent) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  close() {
    this.readyState = 2;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  emit(type: string, data: unknown, id = '') {
    const m = new MessageEvent(type, { data: JSON.stringify(data), lastEventId: id });
    for (const fn of this.listeners.get(type) ?? []) fn(m);
  }
  fail() {
    this.readyState = 2;
    this.onerror?.();
  }
}
