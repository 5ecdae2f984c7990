import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './usage-error.js';

type Options = NonNullable<ParseArgsConfig['options']>;
/** parseArgs' answer for these options, named so the declaration build can write it. */
type Parsed<T extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T; allowPositionals: boolean; strict: true }>
>;

/**
 * parseArgs, with an unknown option told in one line that names the one meant when it is a near miss
 * (`--scope` for `--scopes`: one is a prefix of the other), or else the options there are.
 */
export function parseOptions<T extends Options>(args: string[], options: T, allowPositionals = false): Parsed<T> {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec((error as Error).message)?.[1];
    if (unknown === undefined) throw error;
    const names = Object.keys(options).map((name) => `--${name}`);
    const meant = names.find((name) => name.startsWith(unknown) || unknown.startsWith(name));
    const hint =
      meant !== undefined
        ? `did you mean "${meant}"?`
        : names.length > 0
          ? `it takes ${names.join(', ')}`
          : 'it takes none';
    throw new UsageError(`unknown option "${unknown}"; ${hint}`);
  }
}
