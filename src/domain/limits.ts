/** Request bodies are JSON objects of a few fields: 64 KiB is generous and bounds what one request costs. */
export const BODY_LIMIT_BYTES = 64 * 1024;
