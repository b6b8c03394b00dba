import { endianness } from 'node:os';
import type { Columns, ColumnType } from './columns.js';
import { encodeStruct, type ThriftStruct } from './thrift-compact.js';

/**
 * Parquet written directly, for tables whose bulk is number lists (the rl export's token ids: a row holds its whole
 * prompt, so the rows grow with the square of an agent's calls). Each column chunk is one PLAIN data page, uncompressed:
 * a list's values are copied as one memory block and its levels are two RLE runs, where DuckDB, arrow-rs and
 * hyparquet-writer spend ~30 ns per id (bench/tokens/README.md). Columns: optional string/int32/int64/float64 scalars
 * and optional lists of int32/float64 (3-level LIST, required elements). Read back by DuckDB, hyparquet and pyarrow in
 * the tests.
 */
type Scalar = 'string' | 'int32' | 'int64' | 'float64';
type NumberList = { list: 'int32' | 'float64' };
type Row = Record<string, unknown>;

const SCALARS: readonly ColumnType[] = ['string', 'int32', 'int64', 'float64'];
const isScalar = (t: ColumnType): t is Scalar => typeof t === 'string' && SCALARS.includes(t);
const isNumberList = (t: ColumnType): t is NumberList => typeof t === 'object' && 'list' in t && (t.list === 'int32' || t.list === 'float64');

/** Whether the plain writer can write these columns. */
export const plainParquetSupports = (columns: Columns): boolean => columns.every(([, t]) => isScalar(t) || isNumberList(t));

// Parquet's enums (parquet.thrift).
const PHYSICAL = { string: 6, int32: 1, int64: 2, float64: 5 } as const;
const OPTIONAL = 1;
const REQUIRED = 0;
const REPEATED = 2;
const PLAIN = 0;
const RLE = 3;
const UNCOMPRESSED = 0;
const DATA_PAGE = 0;

/** The bytes a Parquet file is written as: the magic, then row groups as they come, then the footer. */
export class PlainParquetFile {
  /** Bytes produced so far (the next byte's offset in the file). */
  offset = 0;
  rows = 0;
  private readonly rowGroups: ThriftStruct[] = [];

  constructor(private readonly columns: Columns) {
    if (!plainParquetSupports(columns)) throw new Error(`the plain Parquet writer takes scalars and number lists only: ${JSON.stringify(columns)}`);
    if (endianness() !== 'LE') throw new Error('the plain Parquet writer copies typed arrays as little-endian bytes: this host is big-endian');
  }

  start(): Buffer[] {
    return [this.take(Buffer.from('PAR1'))];
  }

  /** One row group of these rows: a PLAIN page per column. */
  rowGroup(rows: readonly Row[]): Buffer[] {
    const out: Buffer[] = [];
    const chunks: ThriftStruct[] = [];
    let groupBytes = 0;
    for (const [name, type] of this.columns) {
      const values = rows.map((r) => r[name]);
      const page = isNumberList(type) ? listPage(type, values as (ArrayLike<number> | null | undefined)[]) : scalarPage(type as Scalar, values);
      const pageBytes = page.data.reduce((n, b) => n + b.length, 0);
      const header = encodeStruct({
        1: { i32: DATA_PAGE },
        2: { i32: pageBytes },
        3: { i32: pageBytes },
        5: { struct: { 1: { i32: page.levels }, 2: { i32: PLAIN }, 3: { i32: RLE }, 4: { i32: RLE } } },
      });
      const at = this.offset;
      out.push(this.take(header), ...page.data.map((b) => this.take(b)));
      const size = header.length + pageBytes;
      groupBytes += size;
      const path = isNumberList(type) ? [name, 'list', 'element'] : [name];
      const meta: ThriftStruct = {
        1: { i32: PHYSICAL[isNumberList(type) ? type.list : (type as Scalar)] },
        2: { list: 'i32', of: [PLAIN, RLE] },
        3: { list: 'binary', of: path },
        4: { i32: UNCOMPRESSED },
        5: { i64: page.levels },
        6: { i64: size },
        7: { i64: size },
        9: { i64: at },
      };
      chunks.push({ 2: { i64: at }, 3: { struct: meta } });
    }
    this.rowGroups.push({ 1: { list: 'struct', of: chunks }, 2: { i64: groupBytes }, 3: { i64: rows.length } });
    this.rows += rows.length;
    return out;
  }

  /** The footer: the schema and every row group's place. */
  finish(): Buffer[] {
    const footer = encodeStruct({
      1: { i32: 1 },
      2: { list: 'struct', of: this.schema() },
      3: { i64: this.rows },
      4: { list: 'struct', of: this.rowGroups },
      6: { binary: 'roller (plain Parquet writer)' },
    });
    const length = Buffer.alloc(4);
    length.writeUInt32LE(footer.length);
    return [this.take(footer), this.take(length), this.take(Buffer.from('PAR1'))];
  }

  private schema(): ThriftStruct[] {
    const out: ThriftStruct[] = [{ 4: { binary: 'schema' }, 5: { i32: this.columns.length } }];
    for (const [name, type] of this.columns) {
      if (isNumberList(type)) {
        // LIST: converted type 3, logical type LIST (union field 3).
        out.push({ 3: { i32: OPTIONAL }, 4: { binary: name }, 5: { i32: 1 }, 6: { i32: 3 }, 10: { struct: { 3: { struct: {} } } } });
        out.push({ 3: { i32: REPEATED }, 4: { binary: 'list' }, 5: { i32: 1 } });
        out.push({ 1: { i32: PHYSICAL[type.list] }, 3: { i32: REQUIRED }, 4: { binary: 'element' } });
      } else if (type === 'string') {
        // UTF8: converted type 0, logical type STRING (union field 1).
        out.push({ 1: { i32: PHYSICAL.string }, 3: { i32: OPTIONAL }, 4: { binary: name }, 6: { i32: 0 }, 10: { struct: { 1: { struct: {} } } } });
      } else out.push({ 1: { i32: PHYSICAL[type as Scalar] }, 3: { i32: OPTIONAL }, 4: { binary: name } });
    }
    return out;
  }

  private take(b: Buffer): Buffer {
    this.offset += b.length;
    return b;
  }
}

/** RLE runs of levels (bit width ≤ 8: each run's value is one byte), adjacent equal runs merged. */
class LevelRuns {
  private readonly bytes: number[] = [];
  private value = -1;
  private count = 0;

  add(value: number, count: number): void {
    if (count === 0) return;
    if (value === this.value) this.count += count;
    else {
      this.flush();
      this.value = value;
      this.count = count;
    }
  }

  /** Length-prefixed, as a V1 data page holds them. */
  encoded(): Buffer {
    this.flush();
    const body = Buffer.from(this.bytes);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(body.length);
    return Buffer.concat([length, body]);
  }

  private flush(): void {
    if (this.count === 0) return;
    let header = this.count * 2; // run length << 1, low bit 0: an RLE run
    while (header >= 0x80) {
      this.bytes.push((header % 0x80) | 0x80);
      header = Math.floor(header / 0x80);
    }
    this.bytes.push(header, this.value);
    this.count = 0;
  }
}

/** An optional list column: rep levels 0 then 1 per element, def 0 null / 1 empty / 2 an element; values as blocks. */
function listPage(type: NumberList, lists: (ArrayLike<number> | null | undefined)[]): { data: Buffer[]; levels: number } {
  const rep = new LevelRuns();
  const def = new LevelRuns();
  const blocks: Buffer[] = [];
  let levels = 0;
  for (const list of lists) {
    if (list == null || list.length === 0) {
      rep.add(0, 1);
      def.add(list == null ? 0 : 1, 1);
      levels++;
      continue;
    }
    rep.add(0, 1);
    rep.add(1, list.length - 1);
    def.add(2, list.length);
    levels += list.length;
    const typed = type.list === 'int32' ? int32Block(list) : list instanceof Float64Array ? list : Float64Array.from(list);
    blocks.push(Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength));
  }
  // The blocks are views of the rows' own arrays: written as they are, never concatenated.
  return { data: [rep.encoded(), def.encoded(), ...blocks], levels };
}

/** Token ids (< 2^31) held as Uint32Array have int32's bytes: no copy. */
function int32Block(list: ArrayLike<number>): Int32Array | Uint32Array {
  if (list instanceof Int32Array || list instanceof Uint32Array) return list;
  return Int32Array.from(list);
}

/** An optional scalar column: def 1 for a value, 0 for null; values PLAIN. */
function scalarPage(type: Scalar, values: unknown[]): { data: Buffer[]; levels: number } {
  const def = new LevelRuns();
  const present = values.filter((v) => v !== null && v !== undefined);
  for (const v of values) def.add(v === null || v === undefined ? 0 : 1, 1);
  let body: Buffer;
  if (type === 'string') {
    const texts = present.map((v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)));
    body = Buffer.allocUnsafe(texts.reduce((n, t) => n + 4 + t.length, 0));
    let at = 0;
    for (const t of texts) {
      body.writeUInt32LE(t.length, at);
      t.copy(body, at + 4);
      at += 4 + t.length;
    }
  } else if (type === 'int64') {
    const a = BigInt64Array.from(present, (v) => BigInt(v as number));
    body = Buffer.from(a.buffer);
  } else {
    const a = type === 'int32' ? Int32Array.from(present as number[]) : Float64Array.from(present as number[]);
    body = Buffer.from(a.buffer);
  }
  return { data: [def.encoded(), body], levels: values.length };
}
