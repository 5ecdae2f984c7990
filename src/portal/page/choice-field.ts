import { el } from './dom.js';

/** A select of the forms that create and change an endpoint: its values, the default first, in words. */
export interface Choices<T extends string> {
  readonly values: readonly T[];
  readonly words: (value: T) => string;
  /** What the choices mean, in the select's hint. */
  readonly hint: string;
}

/** Fills a select with the choices, each in its words, and its hint with what they mean. */
export function addChoices<T extends string>(
  select: HTMLSelectElement,
  hint: HTMLParagraphElement,
  choices: Choices<T>,
): void {
  hint.textContent = choices.hint;
  for (const value of choices.values)
    select.append(el('option', { text: choices.words(value), attributes: { value } }));
}

/** The value chosen in a select filled by addChoices. */
export function chosen<T extends string>(select: HTMLSelectElement, choices: Choices<T>): T {
  const value = choices.values.find((candidate) => candidate === select.value);
  if (value === undefined) throw new Error(`the page offers no choice "${select.value}" here`);
  return value;
}
