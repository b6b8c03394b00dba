/**
 * The part of Thrift's compact protocol Parquet's metadata needs to be written (page headers, the file footer): structs
 * of i32, i64, binary, bool, struct and list fields. Written, never read here (the readers are DuckDB and hyparquet).
 */
export type ThriftValue =
  | { i32: number }
  | { i64: number }
  | { binary: string | Uint8Array }
  | { bool: boolean }
  | { struct: ThriftStruct }
  | { list: 'i32'; of: number[] }
  | { list: 'binary'; of: string[] }
  | { list: 'struct'; of: ThriftStruct[] };
/** Field id → value; undefined fields are left out. */
export type ThriftStruct = Record<number, ThriftValue | undefined>;

const TYPE = { bool_true: 1, bool_false: 2, i32: 5, i64: 6, binary: 8, list: 9, struct: 12 } as const;
const ELEMENT = { i32: 5, binary: 8, struct: 12 } as const;

export function encodeStruct(struct: ThriftStruct): Buffer {
  const out: number[] = [];
  writeStruct(out, struct);
  return Buffer.from(out);
}

function writeStruct(out: number[], struct: ThriftStruct): void {
  let last = 0;
  for (const id of Object.keys(struct).map(Number).sort((a, b) => a - b)) {
    const value = struct[id];
    if (value === undefined) continue;
    const type = 'bool' in value ? (value.bool ? TYPE.bool_true : TYPE.bool_false) : 'i32' in value ? TYPE.i32 : 'i64' in value ? TYPE.i64 : 'binary' in value ? TYPE.binary : 'struct' in value ? TYPE.struct : TYPE.list;
    const delta = id - last;
    if (delta > 0 && delta <= 15) out.push((delta << 4) | type);
    else {
      out.push(type);
      varint(out, zigzag(id));
    }
    last = id;
    writeValue(out, value);
  }
  out.push(0);
}

function writeValue(out: number[], value: ThriftValue): void {
  if ('bool' in value) return;
  if ('i32' in value) return varint(out, zigzag(value.i32));
  if ('i64' in value) return varint(out, zigzag(value.i64));
  if ('binary' in value) return binary(out, value.binary);
  if ('struct' in value) return writeStruct(out, value.struct);
  const size = value.of.length;
  const element = ELEMENT[value.list];
  if (size < 15) out.push((size << 4) | element);
  else {
    out.push(0xf0 | element);
    varint(out, size);
  }
  for (const item of value.of) {
    if (value.list === 'i32') varint(out, zigzag(item as number));
    else if (value.list === 'binary') binary(out, item as string);
    else writeStruct(out, item as ThriftStruct);
  }
}

function binary(out: number[], value: string | Uint8Array): void {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  varint(out, bytes.length);
  for (const b of bytes) out.push(b);
}

/** Zigzag of an integer up to 2^52 in magnitude (sizes and offsets), in plain arithmetic: no 32-bit truncation. */
const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1);

/** ULEB128 of a non-negative integer below 2^53. */
export function varint(out: number[], n: number): void {
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
}
