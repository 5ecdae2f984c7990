import cluster, { type Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import { writeSync } from 'node:fs';
import type { DestinationStream } from 'pino';
import { MAX_BUFFERED_BYTES } from './log-stream.js';

const LINES = 'petstore:log-lines';
const DROPPED = 'petstore:log-dropped';
/** Writes of at most this many bytes to a pipe are never interleaved with another process's (Linux). */
const PIPE_BUF = 4096;

interface LinesMessage {
  readonly type: typeof LINES;
  readonly lines: string;
}

interface DroppedMessage {
  readonly type: typeof DROPPED;
  readonly lines: number;
}

function lineCount(text: unknown): number {
  return String(text).split('\n').length - 1;
}

/**
 * A worker's log destination under `serve --workers N`: the lines of one event-loop turn go to the primary
 * in one IPC message, and the primary alone writes stdout, so no line is torn or interleaved whatever its
 * length (a pipe keeps only writes of up to 4 KiB whole) and no request waits for a write. Emits 'drop'
 * once per line lost, as pino's own destination does: past 16 MiB held here, or dropped by the primary.
 */
export class WorkerLogStream extends EventEmitter {
  /** Lines of this turn, not yet sent. */
  #queued = '';
  /** Characters sent but not yet written to the channel. */
  #sending = 0;
  #messages = 0;
  #idle: (() => void)[] = [];

  constructor() {
    super();
    process.on('message', (message: Partial<DroppedMessage>) => {
      if (message.type === DROPPED) this.#dropped(message.lines ?? 0);
    });
    // Lines a worker stopping abruptly (process.exit, a crash) still holds: written by itself, whole lines
    // at a time, each write small enough for a pipe to keep it whole.
    process.on('exit', () => {
      for (const piece of wholeLinePieces(this.#queued)) writeSync(1, piece);
      this.#queued = '';
    });
  }

  write(line: string): boolean {
    if (this.#queued.length + this.#sending + line.length > MAX_BUFFERED_BYTES) {
      this.emit('drop', line);
      return false;
    }
    if (this.#queued === '') setImmediate(() => this.#send());
    this.#queued += line;
    return true;
  }

  /** Calls back once every line written so far has left for the primary (before the channel closes). */
  flush(done: () => void): void {
    this.#send();
    if (this.#messages === 0) done();
    else this.#idle.push(done);
  }

  #send(): void {
    const lines = this.#queued;
    if (lines === '') return;
    this.#queued = '';
    this.#sending += lines.length;
    this.#messages += 1;
    const message: LinesMessage = { type: LINES, lines };
    process.send?.(message, undefined, {}, (error: Error | null) => {
      this.#sending -= lines.length;
      this.#messages -= 1;
      if (error !== null) this.#dropped(lineCount(lines));
      if (this.#messages === 0) for (const done of this.#idle.splice(0)) done();
    });
  }

  #dropped(lines: number): void {
    for (let i = 0; i < lines; i++) this.emit('drop');
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

/**
 * In the primary of `serve --workers N`: writes what its workers log to `destination`, in the order each
 * sent it. The lines the destination drops (stdout too slow) are counted by the worker that logged them, so
 * /metrics, which sums the workers, counts them.
 */
export function relayWorkerLogs(destination: DestinationStream): void {
  let from: Worker | undefined;
  let dropped = 0;
  if (destination instanceof EventEmitter) {
    destination.on('drop', (data: unknown) => {
      if (from !== undefined) dropped += lineCount(data);
    });
  }
  cluster.on('message', (worker, message: Partial<LinesMessage>) => {
    if (message.type !== LINES || message.lines === undefined) return;
    from = worker;
    dropped = 0;
    destination.write(message.lines);
    from = undefined;
    if (dropped > 0 && worker.isConnected()) {
      const report: DroppedMessage = { type: DROPPED, lines: dropped };
      worker.send(report, undefined, () => undefined);
    }
  });
}
