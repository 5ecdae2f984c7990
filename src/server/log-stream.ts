import { type DestinationStream, type LoggerOptions, pino } from 'pino';
import type { LogLevel } from '../config.js';

/**
 * Where a key could appear in a log line: never written, whatever the level. The service logs no
 * headers itself; these paths cover a debugging serializer or a library that does.
 */
const REDACT = ['req.headers.authorization', 'headers.authorization', 'authorization'];

/** pino options for the service: JSON lines, or pino-pretty's readable lines when a person is watching. */
export function loggerOptions(level: LogLevel, pretty: boolean): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    ...(pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
          },
        }
      : {}),
  };
}

/** Log bytes held while stdout is slow, at most; past that lines are dropped rather than memory grown. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/**
 * Where JSON lines go: stdout, written asynchronously so a request never waits for the pipe or the disk
 * (pino flushes what is buffered when the process exits). Processes that share one stdout (the workers
 * of `serve --workers N`) write each line synchronously instead: an asynchronous write may carry many
 * lines, and writes to a pipe above 4 KiB may interleave with another process's mid-line. Pretty lines
 * have their own worker thread.
 */
export function logDestination(pretty: boolean, sharedStdout: boolean): DestinationStream | undefined {
  if (pretty) return undefined;
  return sharedStdout
    ? pino.destination({ dest: 1, sync: true })
    : pino.destination({ dest: 1, sync: false, maxLength: MAX_BUFFERED_BYTES });
}
