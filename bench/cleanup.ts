/**
 * Everything the run has to undo (children, temporary directories, PostgreSQL schemas), undone in
 * reverse order whether the run ends normally, fails, or is interrupted.
 */
export class Cleanup {
  readonly #tasks: { readonly what: string; readonly task: () => Promise<void> | void; done: boolean }[] = [];

  /** Registers a task; the function returned runs it now (once), e.g. when the resource is no longer needed. */
  defer(what: string, task: () => Promise<void> | void): () => Promise<void> {
    const entry = { what, task, done: false };
    this.#tasks.push(entry);
    return async () => {
      if (entry.done) return;
      entry.done = true;
      await task();
    };
  }

  /** Runs every task not yet run; a failing task is reported and the others still run. */
  async runAll(): Promise<void> {
    for (const entry of [...this.#tasks].reverse()) {
      if (entry.done) continue;
      entry.done = true;
      try {
        await entry.task();
      } catch (error) {
        process.stderr.write(`bench: cleaning up ${entry.what} failed: ${reason(error)}\n`);
      }
    }
  }
}

/** An error's message, and its cause's (fetch's "fetch failed" says why only there). */
function reason(error: unknown): string {
  const { message, cause } = error as Error;
  return cause instanceof Error ? `${message} (${cause.message})` : message;
}
