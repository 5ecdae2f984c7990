/** Annotation keyword: the sentence shown when a string does not match the schema's `pattern`. */
export const PATTERN_MESSAGE = 'x-pattern-message';
