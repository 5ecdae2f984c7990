import { type DestinationStream, type LoggerOptions, pino } from 'pino';
import type { LogLevel } from '../config.js';

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

/**
 * stdout, in the one process that writes it: `serve`, or the primary of `serve --workers N`, which writes
 * its `processes` workers' lines as well (worker-log-relay.ts). Written asynchronously, so a request never
 * waits for the pipe or the disk (pino flushes what is buffered when the process exits); past 16 MiB held
 * per serving process, lines are dropped and counted. At a terminal, pino-pretty's readable lines, from a
 * thread of their own.
 */
export function stdoutDestination(pretty: boolean, processes = 1): DestinationStream {
  if (pretty) {
    return pino.transport({
      target: 'pino-pretty',
      options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
    });
  }
  return pino.destination({ dest: 1, sync: false, maxLength: processes * MAX_BUFFERED_BYTES });
}
