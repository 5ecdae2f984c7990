/** One instruction of a Dockerfile, continuation lines joined: `COPY a b ./` is { op: 'COPY', args: 'a b ./' }. */
export interface Instruction {
  readonly op: string;
  readonly args: string;
}

export interface Stage {
  /** The image it starts from, as written (`node:${NODE_VERSION}-bookworm-slim`). */
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

/** Comments and blank lines dropped, `\` continuations joined, split into stages at each FROM. */
export function parseDockerfile(text: string): { args: Instruction[]; stages: Stage[] } {
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const args: Instruction[] = [];
  const stages: { from: string; name: string | undefined; instructions: Instruction[] }[] = [];
  for (const line of logical) {
    const [, op = '', rest = ''] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    const instruction = { op: op.toUpperCase(), args: rest };
    if (instruction.op === 'FROM') {
      const [from = '', as, name] = rest.split(/\s+/);
      stages.push({ from, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0) {
      args.push(instruction);
    } else {
      stages[stages.length - 1]?.instructions.push(instruction);
    }
  }
  return { args, stages };
}

/** The arguments of every instruction `op` in a stage. */
export function all(stage: Stage, op: string): string[] {
  return stage.instructions.filter((instruction) => instruction.op === op).map((instruction) => instruction.args);
}

/** The last instruction `op` of a stage (the one Docker uses for CMD, USER, WORKDIR…), or throws. */
export function last(stage: Stage, op: string): string {
  const found = all(stage, op).at(-1);
  if (found === undefined) throw new Error(`no ${op} in the stage from ${stage.from}`);
  return found;
}

/** `ENV A=1 B=2` lines of a stage, as an environment (unquoted values only, as this Dockerfile writes them). */
export function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const args of all(stage, 'ENV')) {
    for (const pair of args.split(/\s+/)) {
      const [, key = '', value = ''] = /^(\w+)=([^"'\s]*)$/.exec(pair) ?? [];
      if (key === '') throw new Error(`ENV ${args}: write KEY=value pairs without quotes`);
      env[key] = value;
    }
  }
  return env;
}

/**
 * Whether `.dockerignore` leaves a top-level name in the build context: the last pattern matching it
 * decides, `!` re-including. Only top-level names and `*` are supported, which is all this file uses.
 */
export function inContext(dockerignore: string, name: string): boolean {
  let included = true;
  for (const line of dockerignore.split('\n').map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/\/$/, '');
    if (pattern.includes('/') || (pattern.includes('*') && pattern !== '*')) {
      throw new Error(`.dockerignore pattern "${line}" is more than this check understands`);
    }
    if (pattern === '*' || pattern === name) included = negated;
  }
  return included;
}

/** A systemd unit's settings by section and key; a key given twice keeps every value, in order. */
export function parseUnit(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header !== null) {
      section = header[1] as string;
      continue;
    }
    const [, key = '', value = ''] = /^(\w+)=(.*)$/.exec(line) ?? [];
    const name = `${section}.${key}`;
    settings.set(name, [...(settings.get(name) ?? []), value]);
  }
  return settings;
}

/** An EnvironmentFile: VARIABLE=value lines, comments and blank lines skipped. */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const [, key, value = ''] = /^\s*(\w+)=(.*)$/.exec(line) ?? [];
    if (key !== undefined) env[key] = value.trim();
  }
  return env;
}
