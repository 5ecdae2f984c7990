/**
 * A bound on how many events a petstore records per millisecond, on average over any stretch: 100,000 a
 * second, where one process on two cores records about 14,500 (the bench's creates, SQLite).
 */
const EVENTS_PER_MS_BOUND = 100;

/**
 * The first event id after a restore from a backup whose last id was `lastSeq`, at `now`. The restored
 * file cannot know how many ids the lost history handed out, so the floor is taken from the clock: ids go
 * up by one per event, and fewer than EVENTS_PER_MS_BOUND events a millisecond, so every id ever handed
 * out by `now` is below `now` in ms × EVENTS_PER_MS_BOUND, earlier restores' floors included (given a
 * clock that is not set back). About 1.8 × 10^14 today: 15 digits, which event ids have at most (within
 * JavaScript's exact integers), until 2286.
 */
export function nextEventSeqFloor(lastSeq: number, now: Date): number {
  return Math.max(lastSeq + 1, now.getTime() * EVENTS_PER_MS_BOUND);
}
