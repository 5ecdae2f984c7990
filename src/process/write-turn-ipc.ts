import cluster, { type Worker } from 'node:cluster';
import type { WriteTurns } from '../store/sqlite/write-turns.js';

const WANTED = 'petstore:write-turn-wanted';
const GRANTED = 'petstore:write-turn-granted';
const DONE = 'petstore:write-turn-done';
/**
 * A turn not given back within this long (a frozen or very slow worker) passes to the next: SQLite's own
 * lock then keeps them apart, as without turns. Commits take milliseconds, so a live holder never hits it.
 */
const TURN_LEASE_MS = 1000;

type TurnMessage = { readonly type?: unknown };

/**
 * In the primary of `serve --workers N` on SQLite: hands the write turn to one worker at a time, in the
 * order they asked. A worker that exits (even killed mid-commit: the kernel drops its SQLite lock and the
 * uncommitted batch with it) gives its turn up with its life.
 */
export function arbitrateWriteTurns(): void {
  const waiting: Worker[] = [];
  let holder: Worker | undefined;
  let grantedAt = 0;

  const passOn = () => {
    holder = waiting.shift();
    grantedAt = Date.now();
    // A worker that died meanwhile takes the error here; its 'exit' passes the turn on.
    if (holder?.isConnected()) holder.send({ type: GRANTED }, undefined, () => undefined);
  };

  cluster.on('message', (worker, message: TurnMessage) => {
    if (message.type === WANTED) {
      if (holder === undefined) {
        waiting.push(worker);
        passOn();
      } else if (holder !== worker && !waiting.includes(worker)) {
        waiting.push(worker);
      }
    } else if (message.type === DONE && holder === worker) {
      passOn();
    }
  });
  cluster.on('exit', (worker) => {
    const at = waiting.indexOf(worker);
    if (at !== -1) waiting.splice(at, 1);
    if (holder === worker) passOn();
  });
  setInterval(() => {
    if (holder !== undefined && Date.now() - grantedAt > TURN_LEASE_MS) passOn();
  }, TURN_LEASE_MS / 2).unref();
}

/**
 * In a worker: asks the primary for the write turn. Once the primary is gone (it died; or this worker is
 * stopping and let go of it) every request is granted at once, and SQLite's lock alone decides.
 */
export function workerWriteTurns(): WriteTurns {
  let pending: (() => void) | undefined;
  let holding = false;
  let alone = false;

  const grant = () => {
    const granted = pending;
    pending = undefined;
    holding = !alone;
    granted?.();
  };
  const send = (type: string) => {
    if (!process.connected) return false;
    process.send?.({ type }, undefined, {}, (error) => {
      if (error !== null) goAlone();
    });
    return true;
  };
  const goAlone = () => {
    alone = true;
    grant();
  };

  process.on('message', (message: TurnMessage) => {
    if (message.type !== GRANTED) return;
    // A grant nobody waits for (the lease moved on and back) is given back at once.
    if (pending === undefined || holding) send(DONE);
    else grant();
  });
  process.on('disconnect', goAlone);

  return {
    request(granted) {
      pending = granted;
      if (alone || !send(WANTED)) goAlone();
    },
    release() {
      if (!holding) return;
      holding = false;
      send(DONE);
    },
  };
}
