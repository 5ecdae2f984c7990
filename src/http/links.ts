/** Builds the links the API sends (Location, Link): absolute under PUBLIC_URL, relative without it. */
export class Links {
  readonly #base: string;

  constructor(publicUrl: string | undefined) {
    this.#base = publicUrl ?? '';
  }

  /** Whether links are relative: no PUBLIC_URL says where the service is reached. */
  get relative(): boolean {
    return this.#base === '';
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
