export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * Structured logs on one stream: `json` writes one object per line for log
 * shippers; `text` writes `time level message key=value…` for people.
 */
export function createLogger(
  format: LogFormat,
  write: (line: string) => void = (l) => process.stderr.write(l),
  minLevel: LogLevel = 'info',
): Logger {
  const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
  const emit = (level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void => {
    if (order[level] < order[minLevel]) return;
    const time = new Date().toISOString();
    if (format === 'json') {
      write(`${JSON.stringify({ time, level, msg, ...fields })}\n`);
      return;
    }
    let line = `${time} ${level.toUpperCase().padEnd(5)} ${msg}`;
    for (const [k, v] of Object.entries(fields)) line += ` ${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`;
    write(`${line}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
