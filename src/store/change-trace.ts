/**
 * The trace a change is made in, as a W3C `traceparent`: a store records it with the change's events, so
 * that every webhook attempt for them joins that trace. Called where the write is asked for (the request's
 * context), not where a batch of writes runs. Null when tracing is off or nothing is traced.
 */
export type ChangeTrace = () => string | null;

/** Tracing off: no event carries a trace. */
export const NO_TRACE: ChangeTrace = () => null;
