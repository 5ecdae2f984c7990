/**
 * A node:test reporter that prints, once the run ends, the files that took longest and the whole run's wall
 * time, so every `npm test` shows where the time goes. Plain JavaScript: node loads reporters before the
 * `--import tsx` hook is in place. A file's time is that of its process, start to end, from the
 * `test:complete` that node emits for the file itself; where a Node line emits none, the sums of the
 * top-level tests by the file that defines them stand in (a file's time less its process start).
 */
import { relative } from 'node:path';

/** How many of the slowest files are listed. */
const SHOWN = 12;

/** @param {AsyncIterable<{ type: string, data: { name?: string, file?: string, nesting?: number, details?: { duration_ms?: number } } }>} source */
export default async function* slowestFiles(source) {
  const started = performance.now();
  /** @type {Map<string, number>} */
  const wholeFile = new Map();
  /** @type {Map<string, number>} */
  const topLevelSum = new Map();
  for await (const { type, data } of source) {
    if (data.nesting !== 0 || data.file === undefined) continue;
    const ms = data.details?.duration_ms ?? 0;
    if (type === 'test:complete' && data.name === data.file) wholeFile.set(data.file, ms);
    else if (type === 'test:pass' || type === 'test:fail') {
      topLevelSum.set(data.file, (topLevelSum.get(data.file) ?? 0) + ms);
    }
  }
  // Not both: a top-level test's file is where test() was called, which may be a helper of several files.
  const durations = wholeFile.size > 0 ? wholeFile : topLevelSum;
  const byFile = new Map([...durations].map(([file, ms]) => [relative(process.cwd(), file), ms]));
  const slowest = [...byFile].sort(([, a], [, b]) => b - a).slice(0, SHOWN);
  const width = Math.max(0, ...slowest.map(([file]) => file.length));
  yield `\nslowest of ${byFile.size} test files (s):\n`;
  for (const [file, ms] of slowest) yield `  ${file.padEnd(width)}  ${(ms / 1000).toFixed(1).padStart(6)}\n`;
  yield `whole run: ${((performance.now() - started) / 1000).toFixed(1)} s wall\n`;
}
