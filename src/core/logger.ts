export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Logs to stderr (stdout belongs to data) at or above `level`. */
export function createStderrLogger(level: LogLevel = 'warn'): Logger {
  const emit = (at: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[at] < order[level]) return;
    const tail = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
    process.stderr.write(`roller ${at}: ${msg}${tail}\n`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
