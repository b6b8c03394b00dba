/* roller view's page (app.ts says how it is built): the globals, and DOM helpers — every value enters as text. */

type Json = any;
type Child = Node | string | number | null | undefined | false | Child[];

const STATIC = document.documentElement.dataset.mode === 'static';
const main = document.getElementById('main')!;
const crumbs = document.getElementById('crumbs')!;
const statusLine = document.getElementById('status')!;


function h(tag: string, attrs: Record<string, string | number | boolean | ((e: Event) => void) | null | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v as EventListener);
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (Array.isArray(c)) append(el, c);
    else if (c !== null && c !== undefined && c !== false) el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

const SVG = 'http://www.w3.org/2000/svg';
function s(tag: string, attrs: Record<string, string | number>, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  append(el, children);
  return el;
}

// One formatter for every number (toLocaleString builds one per call: 8,000 of them were half a second on a 2,000-call timeline).
const NUMBER = new Intl.NumberFormat('en-US');
const fmt = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : NUMBER.format(n));
const usd = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : `$${n < 0.01 ? n.toFixed(4) : n.toFixed(2)}`);
const ms = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(1)} s`);
const pill = (text: string, cls = ''): HTMLElement => h('span', { class: `pill ${cls}` }, text);
const statusEl = (st: string | null | undefined): HTMLElement => h('span', { class: `status-${st ?? 'unknown'}` }, st ?? 'unknown');

/** Tokens as `roller usage` prints them: in · cache write · cache read · out. */
function tokensText(t: Json): string {
  if (!t) return '–';
  const cacheRead = t.cache_read ?? t.cached_input ?? 0;
  return `in ${fmt(t.input)} · cache write ${fmt(t.cache_creation)} · cache read ${fmt(cacheRead)} · out ${fmt(t.output)}`;
}
const totalTokens = (u: Json): number | null => (u ? u.input + (u.cached_input ?? u.cache_read ?? 0) + u.cache_creation + u.output : null);

/** Long text shown clipped, whole on a click (a 1 MB tool result does not lay out until asked). */
function longText(text: string, limit = 4000): HTMLElement {
  if (text.length <= limit) return h('pre', {}, text);
  const pre = h('pre', {}, text.slice(0, limit));
  const more = h('button', { onclick: () => { pre.textContent = text; more.remove(); } }, `show all ${fmt(text.length)} characters`);
  return h('div', {}, pre, more);
}
