import { StoreUnavailableError } from '../store-errors.js';

/** Inputs in one statement at most: the arrays stay small, and one slow batch holds few callers. */
const MAX_BATCH = 256;

export interface StatementBatchOptions<I, O, R> {
  /** Runs one input alone: for a batch of one, and for each input when a batch is refused. */
  readonly one: (input: I) => Promise<O>;
  /** Runs a batch as one statement (one commit); resolves with what the statement returned. */
  readonly many: (inputs: readonly I[]) => Promise<R>;
  /** Gives each input its result (or its error) from what a committed batch returned. */
  readonly settle: (inputs: readonly I[], result: R) => Array<O | Error>;
  /** Schedules the flush of a new batch, so the inputs that arrive meanwhile join it. */
  readonly gather: (flush: () => void) => void;
}

interface Job<I, O> {
  readonly input: I;
  readonly resolve: (output: O) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit for one kind of write on PostgreSQL: while a batch is being committed, the inputs that arrive
 * queue up and go together in the next, one statement and one commit (one WAL flush) for all. Every promise
 * settles after the commit. A batch the database refuses for anything but an outage committed nothing, so
 * its inputs are run one by one, in order (one of them may be the one refused).
 */
export class StatementBatch<I, O, R> {
  readonly #options: StatementBatchOptions<I, O, R>;
  #queue: Job<I, O>[] = [];
  #flushing = false;

  constructor(options: StatementBatchOptions<I, O, R>) {
    this.#options = options;
  }

  run(input: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ input, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        this.#options.gather(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    const { one, many, settle } = this.#options;
    while (this.#queue.length > 0) {
      const jobs = this.#queue.splice(0, MAX_BATCH);
      const inputs = jobs.map((job) => job.input);
      if (jobs.length === 1) {
        const [job] = jobs as [Job<I, O>];
        await one(job.input).then(job.resolve, job.reject);
        continue;
      }
      let result: R;
      try {
        result = await many(inputs);
      } catch (error) {
        if (error instanceof StoreUnavailableError) {
          for (const job of jobs) job.reject(error);
          continue;
        }
        // One at a time: all at once could hold every pool connection waiting on one lock.
        for (const job of jobs) await one(job.input).then(job.resolve, job.reject);
        continue;
      }
      // Committed: from here on nothing may send the batch to the fallback (it would be written twice).
      for (const [i, output] of settle(inputs, result).entries()) {
        const job = jobs[i] as Job<I, O>;
        if (output instanceof Error) job.reject(output);
        else job.resolve(output);
      }
    }
    this.#flushing = false;
  }
}
