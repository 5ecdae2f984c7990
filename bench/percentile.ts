/** The percentile `p` (0–100) of ascending `sorted`, by nearest rank; undefined when there is none. */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
