/**
 * Building the page's DOM. Text goes in through `textContent` and text nodes only, never as markup: endpoint
 * URLs, descriptions and errors are text a partner or a receiver chose.
 */

interface ElementOptions {
  readonly className?: string;
  readonly text?: string;
  /** Attributes named by the code; their values may be data (set as attribute text, never parsed). */
  readonly attributes?: Readonly<Record<string, string>>;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: ElementOptions = {},
  children: readonly (Node | string)[] = [],
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (options.className !== undefined) element.className = options.className;
  if (options.text !== undefined) element.textContent = options.text;
  for (const [name, value] of Object.entries(options.attributes ?? {})) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

/** The element of the page with this id, of this kind: the page's HTML and its code must agree. */
export function byId<T extends HTMLElement>(id: string, kind: new () => T): T {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) throw new Error(`the page has no ${kind.name} #${id}`);
  return element;
}

let lastId = 0;

/** An id no other element has, to tie a label to its control. */
export function uniqueId(prefix: string): string {
  lastId += 1;
  return `${prefix}-${lastId}`;
}

/** A time as the reader's locale writes it, with the exact instant in `datetime`. */
export function timeElement(iso: string): HTMLTimeElement {
  return el('time', { text: new Date(iso).toLocaleString(), attributes: { datetime: iso } });
}

export function button(text: string, label?: string): HTMLButtonElement {
  return el('button', {
    text,
    attributes: { type: 'button', ...(label === undefined ? {} : { 'aria-label': label }) },
  });
}

/** Moves focus to a list's item, the first of those just added: "show more" may hide itself at the end. */
export function focusChild(list: HTMLElement, index: number): void {
  const item = list.children[index];
  if (!(item instanceof HTMLElement)) return;
  item.tabIndex = -1;
  item.focus();
}
