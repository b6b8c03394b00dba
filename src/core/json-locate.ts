/**
 * Line numbers of values inside a JSON text, by path, found in one pass without building the values.
 * Used to point a validation error at `file:line` as well as at its JSON path. The text must be valid
 * JSON (it was parsed before it was validated).
 */
export type JsonPath = readonly (string | number)[];

export function pathKey(path: JsonPath): string {
  return JSON.stringify(path);
}

/** For each wanted path (or its nearest existing ancestor), the 1-based line where its value starts. */
export function locateJsonPaths(text: string, wanted: readonly JsonPath[]): Map<string, number> {
  const targets = new Set<string>();
  for (const p of wanted) for (let n = 0; n <= p.length; n++) targets.add(pathKey(p.slice(0, n)));
  const found = new Map<string, number>();
  let i = 0;
  let line = 1;

  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 10) line++;
      else if (c !== 32 && c !== 9 && c !== 13) return;
      i++;
    }
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    let escaped = false;
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c)) throw new Error('unterminated string');
      i++;
      if (escaped) escaped = false;
      else if (c === 92) escaped = true;
      else if (c === 34) break;
    }
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: (string | number)[]): void => {
    ws();
    const key = pathKey(path);
    if (targets.has(key) && !found.has(key)) found.set(key, line);
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const k = str();
        ws();
        i++; // ':'
        path.push(k);
        value(path);
        path.pop();
        ws();
        if (text[i++] === '}') return;
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        path.push(n);
        value(path);
        path.pop();
        ws();
        if (text[i++] === ']') return;
      }
    } else if (c === '"') {
      str();
    } else {
      while (i < text.length && !',]} \t\r\n'.includes(text[i]!)) i++;
    }
  };
  value([]);

  const result = new Map<string, number>();
  for (const p of wanted) {
    for (let n = p.length; n >= 0; n--) {
      const at = found.get(pathKey(p.slice(0, n)));
      if (at !== undefined) {
        result.set(pathKey(p), at);
        break;
      }
    }
  }
  return result;
}

/** `$.steps[3].observation.results[0]` */
export function formatJsonPath(path: JsonPath): string {
  let out = '$';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(part)) out += `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}
