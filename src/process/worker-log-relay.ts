import cluster, { type Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { finished, type Readable } from 'node:stream';
import type { DestinationStream } from 'pino';
import { MAX_BUFFERED_BYTES, stdoutBytes, stdoutDestination } from './log-stream.js';

/** In a worker, the pipe of its own to the primary that its log lines leave by (cluster stdio entry 4). */
const LOG_FD = 4;
const DROPPED = 'petstore:log-dropped';
const NEWLINE = 0x0a;
/** Writes of at most this many bytes to a pipe are never interleaved with another process's (Linux). */
const PIPE_BUF = 4096;

interface DroppedMessage {
  readonly type: typeof DROPPED;
  readonly lines: number;
}

function lineCount(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

/**
 * A worker's log destination under `serve --workers N`: the lines of one event-loop turn go to the primary
 * in one write to a pipe of its own, and the primary alone writes stdout, so no line is torn or interleaved
 * whatever its length (a pipe keeps only writes of up to 4 KiB whole) and no request waits for a write.
 * Emits 'drop' once per line lost, as pino's own destination does: past 16 MiB held here, or dropped by
 * the primary.
 */
export class WorkerLogStream extends EventEmitter {
  readonly #pipe = new Socket({ fd: LOG_FD, readable: false, writable: true });
  /** Lines of this turn, not yet handed to the pipe. */
  #queued = '';
  /** Stopping, or the primary has gone: lines wait for the exit, which writes them. */
  #closed = false;

  constructor() {
    super();
    this.#pipe.unref();
    this.#pipe.on('error', () => {
      this.#closed = true;
    });
    process.on('message', (message: Partial<DroppedMessage>) => {
      if (message.type === DROPPED) for (let i = 0; i < (message.lines ?? 0); i++) this.emit('drop');
    });
    // Lines a worker still holds when it exits (a stop, process.exit, a crash): written by itself, whole
    // lines at a time, each write small enough for a pipe to keep it whole where the lines allow.
    process.on('exit', () => {
      for (const piece of wholeLinePieces(this.#queued)) writeSync(1, piece);
    });
  }

  write(line: string): boolean {
    if (this.#queued.length + this.#pipe.writableLength + line.length > MAX_BUFFERED_BYTES) {
      this.emit('drop', line);
      return false;
    }
    if (this.#queued === '' && !this.#closed) setImmediate(() => this.#send());
    this.#queued += line;
    return true;
  }

  /** Stopping: sends what is held, closes the pipe, and calls back once the primary can read it all. */
  flush(done: () => void): void {
    this.#send();
    this.#closed = true;
    finished(this.#pipe.end(), () => done());
  }

  #send(): void {
    if (this.#queued === '' || this.#closed) return;
    this.#pipe.write(this.#queued);
    this.#queued = '';
  }
}

/** `text` (whole lines) cut at line ends into pieces of at most PIPE_BUF bytes where the lines allow. */
function wholeLinePieces(text: string): string[] {
  const pieces: string[] = [];
  let piece = '';
  let bytes = 0;
  for (const line of text.split(/(?<=\n)/)) {
    const size = Buffer.byteLength(line);
    if (piece !== '' && bytes + size > PIPE_BUF) {
      pieces.push(piece);
      piece = '';
      bytes = 0;
    }
    piece += line;
    bytes += size;
  }
  if (piece !== '') pieces.push(piece);
  return pieces;
}

/** stdout in the primary: whole lines in (returns how many it dropped), and a destination for its own. */
interface PrimaryStdout {
  lines(bytes: Buffer): number;
  readonly own: DestinationStream;
}

function primaryStdout(pretty: boolean, workers: number): PrimaryStdout {
  if (pretty) {
    const stream = stdoutDestination(true);
    const lines = (bytes: Buffer) => {
      stream.write(bytes.toString());
      return 0;
    };
    return { own: stream, lines };
  }
  // The workers' lines stay bytes from their pipes to stdout: never decoded, never encoded again.
  const bytes = stdoutBytes(workers);
  let dropped = 0;
  bytes.on('drop', (data: Buffer) => {
    dropped += lineCount(data);
  });
  return {
    own: { write: (line: string) => bytes.write(Buffer.from(line)) },
    lines(data) {
      dropped = 0;
      bytes.write(data);
      return dropped;
    },
  };
}

/** Writes the whole lines arriving from `worker`'s pipe; reports the lines stdout dropped back to it. */
function relay(worker: Worker, stdout: PrimaryStdout): void {
  let partial = Buffer.alloc(0);
  (worker.process.stdio[LOG_FD] as Readable).on('data', (chunk: Buffer) => {
    const end = chunk.lastIndexOf(NEWLINE);
    if (end === -1) {
      partial = Buffer.concat([partial, chunk]);
      return;
    }
    const dropped = stdout.lines(Buffer.concat([partial, chunk.subarray(0, end + 1)]));
    partial = Buffer.from(chunk.subarray(end + 1));
    if (dropped > 0 && worker.isConnected()) {
      const report: DroppedMessage = { type: DROPPED, lines: dropped };
      worker.send(report, undefined, () => undefined);
    }
  });
}

/**
 * In the primary of `serve --workers N`, before it forks: gives every worker a pipe for its log lines and
 * writes what they send to stdout, whole lines only, in the order each worker logged them. The lines
 * stdout drops (too slow) are counted by the worker that logged them, so /metrics, which sums the
 * workers, counts them. Returns the destination of the primary's own lines.
 */
export function relayWorkerLogs(pretty: boolean, workers: number): DestinationStream {
  cluster.setupPrimary({ stdio: [0, 1, 2, 'ipc', 'pipe'] });
  const stdout = primaryStdout(pretty, workers);
  cluster.on('fork', (worker) => relay(worker, stdout));
  return stdout.own;
}
