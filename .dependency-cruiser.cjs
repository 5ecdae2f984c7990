/**
 * The import rules of docs/architecture.md, checked by `npm run layers` (part of `npm test`).
 * Layers, lowest first: domain/ (and clock.ts); config/ and schemas/; store/; errors/; representations/;
 * the request side (plugins, routes, caches, limits, events, webhooks, …); server/ (transport); app.ts
 * (the composition root); process/; commands/ and cli.ts. A layer imports only layers below it.
 * Type-only imports count: a type from above is knowledge of the layer above all the same, and a lower
 * file that names it must change when it does.
 */

const forbid = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to });

/** The request side below the routes (api/), by level: the features, then the helpers they share. */
const FEATURES = 'events|webhooks|plugins|rate-limit|openapi|portal';
const HELPERS = 'http|cache|schema-compilers|observability|services';
const REQUEST_SIDE = `api|${FEATURES}|${HELPERS}`;

/** Files under `from` import nothing in src/ but their own folder and the `allowed` ones below it. */
const onlyBelow = (name, comment, from, allowed) =>
  forbid(
    name,
    comment,
    { path: `^src/(${from})` },
    { path: '^src/', pathNot: [from, ...allowed].map((path) => `^src/(${path})`) },
  );

module.exports = {
  forbidden: [
    onlyBelow('domain-imports-nothing', 'domain/ holds rules without I/O: it is the bottom layer.', 'domain/', []),
    onlyBelow('clock-imports-nothing', 'clock.ts is as low as domain/.', 'clock\\.ts$', []),
    onlyBelow(
      'config-imports-domain-only',
      'config/ reads the environment and knows nothing above domain/.',
      'config/',
      ['domain/'],
    ),
    onlyBelow(
      'schemas-import-domain-only',
      'schemas/ is the API contract and knows nothing above domain/.',
      'schemas/',
      ['domain/'],
    ),
    onlyBelow(
      'store-imports-domain-and-config',
      'store/ keeps records: it knows no API, HTTP or error wording.',
      'store/',
      ['domain/', 'config/'],
    ),
    onlyBelow(
      'catalogue-imports-contract-only',
      'The error catalogue (messages, ApiError) imports only the rules and codes it words.',
      'errors/(catalogue|api-error|url-refusal-message)\\.ts$',
      ['domain/', 'schemas/error'],
    ),
    onlyBelow(
      'errors-import-below-only',
      'errors/ words every error; its handler translates store failures and schema violations.',
      'errors/',
      ['domain/', 'schemas/', 'store/'],
    ),
    onlyBelow(
      'representations-import-below-only',
      'representations/ maps store records to API shapes, for the routes and the webhook sender alike.',
      'representations/',
      ['domain/', 'schemas/', 'store/'],
    ),
    forbid(
      'domain-without-io',
      'domain/ rules do no I/O and use no framework: only computing modules of Node.',
      { path: '^src/domain/' },
      {
        dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        pathNot: '^(node:)?(crypto|zlib|net)$',
      },
    ),
    forbid(
      'sender-not-http',
      'The webhook sender runs apart from requests: it knows no route, HTTP helper or request plugin.',
      { path: '^src/webhooks/' },
      { path: '^src/(api|http|plugins|openapi|validation|cache|server|process|commands)/|^src/(app|cli)\\.ts$' },
    ),
    forbid(
      'transport-not-process',
      'server/ is the transport app.ts builds on; the process (process/, app.ts, the CLI) sits above it.',
      { path: '^src/server/' },
      { path: '^src/(process|commands)/|^src/(app|cli)\\.ts$' },
    ),
    forbid(
      'process-not-cli',
      'process/ starts the service; the command line (commands/, cli.ts) calls it, not the reverse.',
      { path: '^src/process/' },
      { path: '^src/commands/|^src/cli\\.ts$' },
    ),
    forbid(
      'composition-root-from-process-only',
      'Only the process builds the app: nothing the app is built from imports app.ts.',
      { path: '^src/', pathNot: '^src/(process/|app\\.ts$)' },
      { path: '^src/app\\.ts$' },
    ),
    forbid(
      'cli-on-top',
      'Nothing imports the command line.',
      { path: '^src/', pathNot: '^src/(commands/|cli\\.ts$)' },
      { path: '^src/(commands/|cli\\.ts$)' },
    ),
    forbid(
      'client-stands-alone',
      'petstore/client ships alone (npm run pack:client): it imports only the API contract.',
      { path: '^src/client/' },
      { path: '^src/', pathNot: '^src/(client|schemas|domain)/' },
    ),
    forbid(
      'request-side-not-transport',
      'The request side is what app.ts is built from: it imports no transport (server/), process or command line.',
      { path: `^src/(${REQUEST_SIDE})/` },
      { path: '^src/(server|process|commands)/|^src/(app|cli)\\.ts$' },
    ),
    forbid(
      'routes-from-app-only',
      'The routes (api/) are the top of the request side: only app.ts registers them.',
      { path: '^src/', pathNot: '^src/(api/|app\\.ts$)' },
      { path: '^src/api/' },
    ),
    forbid(
      'features-apart',
      'The features below the routes (the feed, the sender, the checks, the limits, the document, the portal) know nothing of each other: the routes and app.ts join them.',
      { path: `^src/(${FEATURES})/` },
      { path: `^src/(${FEATURES})/`, pathNot: '^src/$1/' },
    ),
    forbid(
      'helpers-below-features',
      'The request helpers (HTTP shapes, caches, validation, observability, key issuing) serve the features and routes, and know none of them.',
      { path: `^src/(${HELPERS})/` },
      { path: `^src/(api|${FEATURES})/` },
    ),
    forbid(
      'portal-on-the-request-side',
      'portal/ serves partners over HTTP like the routes: no transport, process or command line, no store backend.',
      { path: '^src/portal/' },
      {
        path: '^src/(server|process|commands)/|^src/(app|cli)\\.ts$|^src/store/(sqlite|postgres|shared)/|^src/store/(open-store|migrate-database)\\.ts$',
      },
    ),
    forbid(
      'portal-page-stands-alone',
      'portal/page/ runs in the browser, compiled apart (its own tsconfig.json): it imports only its own modules.',
      { path: '^src/portal/page/' },
      { pathNot: '^src/portal/page/' },
    ),
    forbid(
      'no-circular',
      'No import cycles, type-only ones included: the files of a cycle cannot be read or changed apart.',
      {},
      { circular: true },
    ),
    forbid(
      'not-to-unresolvable',
      'An import that does not resolve would leave the rules blind to it.',
      {},
      {
        couldNotResolve: true,
      },
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
