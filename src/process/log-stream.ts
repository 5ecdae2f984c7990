import type { EventEmitter } from 'node:events';
import { type DestinationStream, type LoggerOptions, pino } from 'pino';
import type { LogLevel } from '../config/values.js';

/**
 * Where a key could appear in a log line: never written, whatever the level. The service logs no
 * headers itself; these paths cover a debugging serializer or a library that does.
 */
const REDACT = ['req.headers.authorization', 'headers.authorization', 'authorization'];

/** pino options for every process: JSON lines at `level`, the key redacted. */
export function loggerOptions(level: LogLevel): LoggerOptions {
  return { level, redact: { paths: REDACT, censor: '[redacted]' } };
}

/** Log bytes held per serving process while stdout is slow, at most; past that lines are dropped rather than memory grown. */
export const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

const PRETTY = { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' };

/**
 * stdout for `serve`, the one process writing it: asynchronously, so a request never waits for the pipe or
 * the disk (pino flushes what is buffered when the process exits); past 16 MiB held, lines are dropped and
 * counted (log-drops.ts). At a terminal, pino-pretty's readable lines, from a thread of their own.
 */
export function stdoutDestination(pretty: boolean): DestinationStream {
  if (pretty) return pino.transport({ target: 'pino-pretty', options: PRETTY });
  return pino.destination({ dest: 1, sync: false, maxLength: MAX_BUFFERED_BYTES });
}

/** A destination of bytes: emits 'drop' with the bytes it dropped. */
export type BytesDestination = EventEmitter & { write(bytes: Buffer): boolean };

/**
 * stdout for the primary of `serve --workers N`, which writes its workers' lines as the bytes they arrive
 * in (worker-log-relay.ts), asynchronously, holding up to 16 MiB per worker.
 */
export function stdoutBytes(workers: number): BytesDestination {
  const maxLength = workers * MAX_BUFFERED_BYTES;
  // sonic-boom's types know strings only; in buffer mode it takes Buffers, and only them.
  return pino.destination({ dest: 1, sync: false, maxLength, contentMode: 'buffer' }) as unknown as BytesDestination;
}
