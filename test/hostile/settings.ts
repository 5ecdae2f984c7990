/** The knobs of the hostile suite: the seed (HOSTILE_SEED) is printed by every property, so a failure reproduces exactly. */
export const SEED = Number(process.env.HOSTILE_SEED ?? 20261121);
export const SCALE = Number(process.env.HOSTILE_SCALE ?? 1);
/** The 64 KiB body limit (docs/decisions/body-limits.md). */
export const BODY_LIMIT = 64 * 1024;
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Node's default --max-http-header-size: the request line and headers together. */
export const NODE_MAX_HEADER_BYTES = 16 * 1024;
export const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
