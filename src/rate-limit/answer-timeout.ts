/**
 * Settles as `answer` does, or rejects with `late()` when it has not settled within `ms`, judged only after
 * the event loop has read the input it has waiting. After a stall (a long synchronous task, a long garbage
 * collection) the loop runs its due timers before it polls the sockets, so a plain timer would call an answer
 * that arrived during the stall late: on a busy process every Redis call in flight would time out at once.
 * The timer's end waits one setImmediate, which runs after the poll, so only an answer still missing then is.
 */
export function answerWithin<T>(answer: Promise<T>, ms: number, late: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(late());
      });
    }, ms);
    const settle = () => {
      settled = true;
      clearTimeout(timer);
    };
    answer.then(
      (value) => {
        if (settled) return;
        settle();
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settle();
        reject(error);
      },
    );
  });
}
