/** Appends `value` to the list kept under `key` (made when first needed): in place, never a copy per item. */
export function addTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
