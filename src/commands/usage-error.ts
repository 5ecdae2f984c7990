/** The command line was wrong (exit status 2), as opposed to a failure while running (exit status 1). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
