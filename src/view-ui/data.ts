/* The page's data: /api/KEY from the server, data/KEY.js in a static export — the same values either way. */
const waiting = new Map<string, ((v: Json) => void)[]>();
(window as Json).rollerData = (key: string, value: Json) => {
  for (const resolve of waiting.get(key) ?? []) resolve(value);
  waiting.delete(key);
};

function staticFileOf(key: string): string {
  const bytes = (c: string) => Array.from(new TextEncoder().encode(c)).map((b) => `_${b.toString(16).padStart(2, '0')}`).join('');
  return `data/${key.replace(/[^A-Za-z0-9._/-]|\.\./g, bytes)}.js`;
}

class ApiError extends Error {}

/**
 * A static export's data file: `location.protocol==="file:"&&rollerData(KEY,VALUE);` — from disk the page includes it
 * as a script (a file:// page may load scripts, never fetch); served over HTTP it is read as text and its VALUE parsed
 * as JSON, and a page of another site that includes it as a script gets nothing (its location is not file:).
 */
async function getStaticOverHttp(key: string): Promise<Json> {
  const res = await fetch(staticFileOf(key));
  if (!res.ok) throw new ApiError(`${staticFileOf(key)} is not in this export`);
  const text = await res.text();
  const head = `location.protocol==="file:"&&rollerData(${JSON.stringify(key)},`;
  if (!text.startsWith(head) || !text.endsWith(');\n')) throw new ApiError(`${staticFileOf(key)} is not a data file of this export`);
  return JSON.parse(text.slice(head.length, -3));
}

async function get(key: string, params?: Record<string, string | number>): Promise<Json> {
  if (STATIC && location.protocol !== 'file:') return getStaticOverHttp(key);
  if (STATIC) {
    return new Promise((resolve, reject) => {
      waiting.set(key, [...(waiting.get(key) ?? []), resolve]);
      const script = h('script', { src: staticFileOf(key) }) as HTMLScriptElement;
      script.onerror = () => reject(new ApiError(`${staticFileOf(key)} is not in this export`));
      script.onload = () => script.remove();
      document.head.appendChild(script);
    });
  }
  const query = params ? `?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}` : '';
  const res = await fetch(`api/${key.split('/').map(encodeURIComponent).join('/')}${query}`);
  const value = await res.json();
  if (!res.ok) throw new ApiError(value?.error?.message ?? `HTTP ${res.status}`);
  return value;
}

let runCache: Json = null;
const getRun = async (): Promise<Json> => (runCache ??= await get('run'));
