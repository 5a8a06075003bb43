// Product identity read once from package.json.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8')) as {
  version: string;
};

export const PRODUCT = {
  name: 'Flowport',
  edition: 'Shopify Flow',
  version: pkg.version,
} as const;

export const API_VERSION = 'v1';
export const AGENT_API_PREFIX = '/agent/v1';
export const MCP_PATH = `${AGENT_API_PREFIX}/mcp`;
/** Where Shopify's privacy (compliance) webhooks arrive. */
export const COMPLIANCE_WEBHOOK_PATH = '/shopify/webhooks/compliance';
export const INGEST_PATH_PREFIX = '/in';
