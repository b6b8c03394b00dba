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

async function get(key: string, params?: Record<string, string | number>): Promise<Json> {
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
