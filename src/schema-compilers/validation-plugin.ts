import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { SHARED_SCHEMAS } from '../schemas/shared.js';
import { validatorCompiler } from './validator-compiler.js';

/** The shared schemas, and the validators every route's schemas compile to (strict bodies, strict coercion). */
export const validation = fp(
  async (app: FastifyInstance) => {
    app.setValidatorCompiler(validatorCompiler(SHARED_SCHEMAS));
    for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  },
  { name: 'validation' },
);
