import type { Load } from './load.js';

export const SCENARIO_NAMES = [
  'list-20',
  'list-100',
  'list-sold',
  'get-by-id',
  'create',
  'create-webhook',
  'mix-90-10',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export interface Scenario {
  readonly name: ScenarioName;
  readonly description: string;
  /** Read-only scenarios must see no error responses at all. */
  readonly readOnly: boolean;
  readonly load: Load;
  /** Measured with one webhook endpoint subscribed to these event types, pointing to a local receiver. */
  readonly webhookEvents?: readonly string[];
}

const CREATE_BODY = JSON.stringify({ name: 'Bench', categoryId: 1 });

const LIST_20_REQUEST = { method: 'GET', path: '/v1/pets?limit=20' } as const;
/** The list-20 scenario's load, which the ceiling is measured with too. */
export const LIST_20: Load = { requests: [{ weight: 1, request: LIST_20_REQUEST }] };

/** Every scenario, against a database of `pets` pets with ids 1 to `pets`. */
export function scenarios(pets: number): readonly Scenario[] {
  const create = { method: 'POST', path: '/v1/pets', body: CREATE_BODY } as const;
  const createOnly: Load = { requests: [{ weight: 1, request: create }] };
  return [
    { name: 'list-20', description: 'GET /v1/pets?limit=20', readOnly: true, load: LIST_20 },
    {
      name: 'list-100',
      description: 'GET /v1/pets?limit=100',
      readOnly: true,
      load: { requests: [{ weight: 1, request: { method: 'GET', path: '/v1/pets?limit=100' } }] },
    },
    {
      name: 'list-sold',
      description: 'GET /v1/pets?status=sold (0.01 % of pets)',
      readOnly: true,
      load: { requests: [{ weight: 1, request: { method: 'GET', path: '/v1/pets?status=sold' } }] },
    },
    {
      name: 'get-by-id',
      description: `GET /v1/pets/{random id 1–${pets}}`,
      readOnly: true,
      load: { requests: [{ weight: 1, request: { method: 'GET', path: '/v1/pets/', randomIdUpTo: pets } }] },
    },
    {
      name: 'create',
      description: 'POST /v1/pets',
      readOnly: false,
      load: createOnly,
    },
    {
      name: 'create-webhook',
      description: 'POST /v1/pets, one webhook endpoint subscribed to pet.created',
      readOnly: false,
      load: createOnly,
      webhookEvents: ['pet.created'],
    },
    {
      name: 'mix-90-10',
      description: '90 % list-20, 10 % create',
      readOnly: false,
      load: {
        requests: [
          { weight: 0.9, request: LIST_20_REQUEST },
          { weight: 0.1, request: create },
        ],
      },
    },
  ];
}
