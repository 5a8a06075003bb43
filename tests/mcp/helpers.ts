// MCP test helpers: connect the two real clients (v2 SDK on 2026-07-28, 1.x SDK
// on the 2025 era) to a running Flowport, and shared assertions.
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_PATH } from '../../api/src/lib/package-info.ts';

export interface ConnectedClient {
  era: 'modern' | 'legacy';
  protocolVersion: string | undefined;
  listTools(): Promise<{ tools: ListedTool[] }>;
  callTool(name: string, args: Record<string, unknown>): Promise<ToolCallResult>;
  listResources(): Promise<{ resources: { uri: string; name: string; mimeType?: string }[] }>;
  readResource(uri: string): Promise<{ contents: { uri: string; text?: string; mimeType?: string }[] }>;
  close(): Promise<void>;
}

export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface ToolCallResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string; uri?: string; name?: string; mimeType?: string }[];
  _meta?: Record<string, unknown>;
}

/** v2 SDK client pinned to the 2026-07-28 revision (no initialize, per-request _meta). */
export async function connectModern(baseUrl: string, token: string): Promise<ConnectedClient> {
  const client = new ModernClient(
    { name: 'flowport-test-modern', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const transport = new ModernTransport(new URL(`${baseUrl}${MCP_PATH}`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return wrap(client, 'modern', client.getNegotiatedProtocolVersion());
}

/** 1.x @modelcontextprotocol/sdk client: the 2025-era initialize handshake. */
export async function connectLegacy(baseUrl: string, token: string): Promise<ConnectedClient> {
  const client = new LegacyClient({ name: 'flowport-test-legacy', version: '1.0.0' });
  const transport = new LegacyTransport(new URL(`${baseUrl}${MCP_PATH}`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return wrap(client, 'legacy', transport.protocolVersion);
}

// any: the two SDK generations type their clients differently; both are used through the same four calls.
function wrap(client: any, era: 'modern' | 'legacy', protocolVersion: string | undefined): ConnectedClient {
  return {
    era,
    protocolVersion,
    listTools: () => client.listTools(),
    callTool: (name, args) => client.callTool({ name, arguments: args }),
    listResources: () => client.listResources(),
    readResource: (uri) => client.readResource({ uri }),
    close: () => client.close(),
  };
}

/** The problem object of an isError tool result (first text block is its JSON). */
export function problemOf(result: ToolCallResult): Record<string, unknown> & {
  code: string;
  docs_url: string;
  refusal?: { layer: string; reason: string; required_scope?: string; next_steps: { kind: string; url?: string }[] };
} {
  const text = result.content.find((c) => c.type === 'text')?.text;
  if (!text) throw new Error(`tool result has no text block: ${JSON.stringify(result)}`);
  return JSON.parse(text);
}

export async function rawMcpPost(
  baseUrl: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<Response> {
  return fetch(`${baseUrl}${MCP_PATH}`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: method === 'POST' ? JSON.stringify(body) : undefined,
  });
}

export const INITIALIZE_2025 = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
