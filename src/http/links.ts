/** Builds the links the API sends (Location, Link): absolute under PUBLIC_URL, relative without it. */
export class Links {
  readonly #base: string;

  constructor(publicUrl: string | undefined) {
    this.#base = publicUrl ?? '';
  }

  to(path: string, query?: Record<string, string | number | undefined>): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) params.set(name, String(value));
    }
    const search = params.toString();
    return `${this.#base}${path}${search === '' ? '' : `?${search}`}`;
  }
}
