// The operation registry: the single list every surface is derived from
// (HTTP routes, OpenAPI, MCP tools, CLI commands, reference pages).
// Add an operation: write its file, then add it here. Keep the list grouped by family.
import { getGrant } from './grant/get.ts';
import { getDocsPage } from './docs/get-page.ts';
import { searchDocsOperation } from './docs/search.ts';
import { getManifest } from './manifest/get.ts';
import { getOpenApiOperation } from './openapi/get-operation.ts';
import { getPlanUsage } from './plan/get-usage.ts';
import { listAudit } from './audit/list.ts';
import { getDiagnostics } from './diagnostics/get.ts';
import { getEndpointOperation } from './endpoints/get.ts';
import { listEndpointsOperation } from './endpoints/list.ts';
import { getEvent } from './events/get.ts';
import { getEventReceipt } from './events/get-receipt.ts';
import { listEventsOperation } from './events/list.ts';
import { getReceipt } from './receipts/get.ts';
import { listReceipts } from './receipts/list.ts';
import { getSetup } from './setup/get.ts';
import { listFlowReadinessHistory } from './setup/list-readiness-history.ts';
import type { AnyOperation } from '../core/types.ts';
// action intents (intents area)
import { cancelActionIntent } from './intents/cancel.ts';
import { confirmActionIntent } from './intents/confirm.ts';
import { getActionIntent } from './intents/get.ts';
import { listActionIntents } from './intents/list.ts';
import { PREVIEW_OPERATIONS } from './intents/previews.ts';
import { listIncidents } from './incidents/list.ts';
import { listAlertSubscriptions } from './alert-subscriptions/list.ts';
import { listBulkReplayItems } from './intents/list-items.ts';

export const OPERATIONS: readonly AnyOperation[] = [
  // docs and manifest
  getManifest,
  searchDocsOperation,
  getDocsPage,
  getOpenApiOperation,
  // account (grants/reads area)
  getGrant,
  getPlanUsage,
  listAudit,
  // setup and endpoints (grants/reads area)
  getSetup,
  listFlowReadinessHistory,
  listEndpointsOperation,
  getEndpointOperation,
  // events, receipts, diagnostics (grants/reads area)
  listEventsOperation,
  getEvent,
  getEventReceipt,
  getReceipt,
  listReceipts,
  getDiagnostics,
  // action intents: previews (one per kind), then the common read/confirm/cancel
  ...PREVIEW_OPERATIONS,
  listActionIntents,
  getActionIntent,
  listBulkReplayItems,
  listIncidents,
  listAlertSubscriptions,
  confirmActionIntent,
  cancelActionIntent,
];
