import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import ts from 'typescript';

/**
 * `npm run pack:client [-- --out <dir>]`: the typed client alone as a package, `petstore-client`, packed into
 * `<dir>/petstore-client-<version>.tgz` (default dist/), for projects that call the service but do not run it.
 * Installing the service's own package would pull every server dependency and build better-sqlite3.
 *
 * The package keeps the build's layout: client/ holds the built client as tsc emitted it, and schemas/ a
 * generated .d.ts for each schema module the client's types import (`../schemas/pet.js`), with only those
 * types, expanded by the compiler to plain TypeScript. The TypeBox schemas stay the one source of the types,
 * and the package needs no typebox. Run after `npm run build` (the npm script does both).
 */

const ROOT = resolve(import.meta.dirname, '..');
const BUILT_CLIENT = join(ROOT, 'dist', 'client');
const SCHEMAS = '../schemas/';

const { values } = parseArgs({ options: { out: { type: 'string', default: join(ROOT, 'dist') } } });
const outDir = resolve(values.out);

/** The type names each schema module (`pet`, `order`…) must provide: what the client's .d.ts files import. */
function schemaImports(declarationFiles: string[]): Map<string, Set<string>> {
  const byModule = new Map<string, Set<string>>();
  for (const file of declarationFiles) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    for (const { fileName } of ts.preProcessFile(source.text, true, true).importedFiles) {
      const allowed = fileName.startsWith('./') || fileName.startsWith('node:') || fileName.startsWith(SCHEMAS);
      if (!allowed) throw new Error(`${file} imports ${fileName}: the client package has no dependencies`);
    }
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
      const specifier = statement.moduleSpecifier;
      if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith(SCHEMAS)) continue;
      const bindings = ts.isImportDeclaration(statement)
        ? statement.importClause?.namedBindings
        : statement.exportClause;
      if (bindings === undefined || !(ts.isNamedImports(bindings) || ts.isNamedExports(bindings))) {
        throw new Error(`${file}: only named imports from ${specifier.text} can be expanded`);
      }
      const module = specifier.text.slice(SCHEMAS.length).replace(/\.js$/, '');
      const names = byModule.get(module) ?? new Set<string>();
      for (const element of bindings.elements) names.add((element.propertyName ?? element.name).text);
      byModule.set(module, names);
    }
  }
  return byModule;
}

/** What in an expanded type would still need a declaration from elsewhere, or would lose its type. */
function notPlain(node: ts.Node): ts.Node | undefined {
  const kinds = [ts.SyntaxKind.AnyKeyword, ts.SyntaxKind.TypeReference, ts.SyntaxKind.ImportType];
  if (kinds.includes(node.kind)) return node;
  return ts.forEachChild(node, notPlain);
}

/** Each schema module's declaration file: `export type Name = <its type, expanded>;` for each name asked for. */
function expandedSchemas(byModule: Map<string, Set<string>>): Map<string, string> {
  const modules = [...byModule.keys()].map((module) => join(ROOT, 'src', 'schemas', `${module}.ts`));
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  const program = ts.createProgram(modules, config?.options ?? {});
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter();
  const flags =
    ts.NodeBuilderFlags.NoTruncation | ts.NodeBuilderFlags.InTypeAlias | ts.NodeBuilderFlags.MultilineObjectLiterals;
  const files = new Map<string, string>();
  for (const [module, names] of byModule) {
    const path = join(ROOT, 'src', 'schemas', `${module}.ts`);
    const source = program.getSourceFile(path);
    const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (source === undefined || moduleSymbol === undefined) throw new Error(`${path} is not a module`);
    const exported = checker.getExportsOfModule(moduleSymbol);
    const declarations = [...names].sort().map((name) => {
      const symbol = exported.find((each) => each.name === name && each.flags & ts.SymbolFlags.TypeAlias);
      if (symbol === undefined) throw new Error(`${path} exports no type ${name}`);
      const node = checker.typeToTypeNode(checker.getDeclaredTypeOfSymbol(symbol), undefined, flags);
      const left = node === undefined ? undefined : notPlain(node);
      if (node === undefined || left !== undefined) {
        const what = left === undefined ? '' : `: ${printer.printNode(ts.EmitHint.Unspecified, left, source)}`;
        throw new Error(`${name} in ${path} does not expand to plain TypeScript${what}`);
      }
      const alias = ts.factory.createTypeAliasDeclaration(
        [ts.factory.createModifier(ts.SyntaxKind.ExportKeyword)],
        name,
        undefined,
        node,
      );
      return printer.printNode(ts.EmitHint.Unspecified, alias, source);
    });
    const header = `/** Generated by dev/pack-client.ts from src/schemas/${module}.ts (TypeBox): the types the client uses. */`;
    files.set(module, `${header}\n${declarations.join('\n')}\n`);
  }
  return files;
}

/** The package's manifest: no dependencies; version, licence and engines are the service's. */
function manifest(): string {
  const service = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const entry = { types: './client/index.d.ts', default: './client/index.js' };
  const client = {
    name: 'petstore-client',
    version: service.version,
    description: 'The typed client of the petstore API: nothing at run time but fetch',
    type: 'module',
    license: service.license,
    // Like the service: a package to install from its tarball, not to publish.
    private: service.private,
    engines: service.engines,
    types: entry.types,
    exports: { '.': entry, './package.json': './package.json' },
  };
  return `${JSON.stringify(client, null, 2)}\n`;
}

/** The package's README (src/client/README.md), with the Node versions its manifest states. */
function readme(): string {
  const { engines } = JSON.parse(manifest()) as { engines: { node: string } };
  return readFileSync(join(ROOT, 'src', 'client', 'README.md'), 'utf8').replace('NODE_ENGINES', `\`${engines.node}\``);
}

const built = readdirSync(BUILT_CLIENT);
if (!built.includes('index.js')) throw new Error(`no ${join(BUILT_CLIENT, 'index.js')}: run \`npm run build\` first`);
const stage = mkdtempSync(join(tmpdir(), 'petstore-client-'));
try {
  mkdirSync(join(stage, 'client'));
  mkdirSync(join(stage, 'schemas'));
  for (const name of built.filter((each) => each.endsWith('.d.ts'))) {
    copyFileSync(join(BUILT_CLIENT, name), join(stage, 'client', name));
  }
  // The source maps point at src/, which the package does not hold.
  for (const name of built.filter((each) => each.endsWith('.js'))) {
    const code = readFileSync(join(BUILT_CLIENT, name), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n');
    writeFileSync(join(stage, 'client', name), code);
  }
  const declarationFiles = built.filter((each) => each.endsWith('.d.ts')).map((name) => join(BUILT_CLIENT, name));
  for (const [module, text] of expandedSchemas(schemaImports(declarationFiles))) {
    writeFileSync(join(stage, 'schemas', `${module}.d.ts`), text);
  }
  writeFileSync(join(stage, 'package.json'), manifest());
  writeFileSync(join(stage, 'README.md'), readme());
  mkdirSync(outDir, { recursive: true });
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', outDir, stage], { encoding: 'utf8' }),
  ) as [{ filename: string }];
  console.log(join(outDir, packed[0].filename));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
