/**
 * A Parquet table's columns, declared once: the DuckDB type each is written as, and the `features` a Hugging Face
 * dataset card declares for it (the Hub's YAML: `dtype`, `list`, `struct`).
 */
export type ColumnType = 'string' | 'int64' | 'int32' | 'float64' | 'bool' | 'timestamp' | { list: ColumnType } | { struct: Columns };
export type Columns = readonly (readonly [name: string, type: ColumnType])[];

const DUCKDB: Record<Exclude<ColumnType, object>, string> = {
  string: 'VARCHAR',
  int64: 'BIGINT',
  int32: 'INTEGER',
  float64: 'DOUBLE',
  bool: 'BOOLEAN',
  timestamp: 'TIMESTAMPTZ',
};
const HF: Record<Exclude<ColumnType, object>, string> = {
  string: 'string',
  int64: 'int64',
  int32: 'int32',
  float64: 'float64',
  bool: 'bool',
  timestamp: 'timestamp[us, tz=UTC]',
};

const quoteName = (name: string) => `"${name.replace(/"/g, '""')}"`;

export function duckdbType(type: ColumnType): string {
  if (typeof type === 'string') return DUCKDB[type];
  if ('list' in type) return `${duckdbType(type.list)}[]`;
  return `STRUCT(${type.struct.map(([n, t]) => `${quoteName(n)} ${duckdbType(t)}`).join(', ')})`;
}

/** read_json's `columns` argument: every column typed, nothing inferred. */
export function duckdbColumns(columns: Columns): string {
  return `{${columns.map(([n, t]) => `${quoteName(n)}: '${duckdbType(t).replace(/'/g, "''")}'`).join(', ')}}`;
}

type Feature = { name: string } & ({ dtype: string } | { list: unknown } | { struct: unknown });

/** A column as the Hub's `dataset_info.features` entry. */
export function hfFeature(name: string, type: ColumnType): Feature {
  return { name, ...hfType(type) } as Feature;
}

function hfType(type: ColumnType): { dtype: string } | { list: unknown } | { struct: unknown } {
  if (typeof type === 'string') return { dtype: HF[type] };
  if ('struct' in type) return { struct: type.struct.map(([n, t]) => hfFeature(n, t)) };
  const inner = hfType(type.list);
  // As `datasets` writes them: a list of structs lists its fields, a list of a plain type is a sequence of it.
  if ('dtype' in inner) return { sequence: inner.dtype } as never;
  return { list: 'struct' in inner ? inner.struct : inner };
}
