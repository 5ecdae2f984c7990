/**
 * Whose turn it is to write, among the processes of `serve --workers N` that share one SQLite file. One
 * process writes at a time and the others queue for their turn instead of polling SQLite's lock: a batch
 * starts the moment the one before it commits, and each waits once, for its turn, however many writes it
 * carries. SQLite's lock stays the safety: a process without turns (the CLI) still only waits for it.
 */
export interface WriteTurns {
  /** Calls `granted` once this process may write (at once when nobody else is writing). */
  request(granted: () => void): void;
  /** Ends this process's turn (it committed, or has nothing left to write). */
  release(): void;
}
