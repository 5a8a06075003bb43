// The OpenAPI document, derived from the registry without starting anything.
import { OPERATIONS } from '../operations/registry.ts';
import type { AnyOperation } from '../core/types.ts';
import { buildAgentRouter, openApiDocument } from './agent-router.ts';
import { applyRecordedExamples, type Recordings, readRecordings } from './openapi-examples.ts';

/** The document, with the recorded examples of openapi/examples/ (ADR 0009) as its request and response examples. */
export function buildOpenApiDocument(
  operations: readonly AnyOperation[] = OPERATIONS,
  recordings: Recordings = readRecordings(),
) {
  const router = buildAgentRouter(() => {
    throw new Error('services are not available while generating the OpenAPI document');
  }, operations);
  return applyRecordedExamples(openApiDocument(router), recordings);
}

/** Stable serialisation (2-space JSON + newline) so regeneration is byte-identical. */
export function buildOpenApiJson(operations: readonly AnyOperation[] = OPERATIONS): string {
  return `${JSON.stringify(buildOpenApiDocument(operations), null, 2)}\n`;
}
