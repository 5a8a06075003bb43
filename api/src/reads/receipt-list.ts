// The receipts as listReceipts reads them: filters checked, a page of receipts (accepted and
// refused, newest first) and a cursor sealed to the shop, paged as the events list pages.
import { AppError } from '../errors/problem.ts';
import { INTAKE_ERRORS } from '../errors/codes/intake.ts';
import { isErrorCode } from '../errors/catalog.ts';
import { isId } from '../ids.ts';
import type { OperationContext } from '../core/types.ts';
import { receiptViews, shopReceiptsPage } from './receipts.ts';
import { cursorPosition, listScope } from './paging.ts';
import { sealCursor } from './shared.ts';

/** The filters and page of listReceipts (validated by the operation). */
export interface ReceiptListInput {
  endpoint_id?: string;
  result?: 'accepted' | 'refused';
  error_code?: string;
  received_after?: string;
  received_before?: string;
  cursor?: string;
  limit: number;
}

/** A page of the shop's receipts, filtered, with a sealed cursor for the next page (listReceipts). */
export async function listReceiptsPage({ ctx, input }: { ctx: OperationContext; input: ReceiptListInput }) {
  const p = ctx.principal;
  if (input.error_code !== undefined && !isErrorCode(input.error_code)) {
    throw new AppError('invalid_request', {
      detail: `Unknown error code ${input.error_code}. Intake refuses with: ${Object.keys(INTAKE_ERRORS).join(', ')} (and the request errors, e.g. payload_too_large).`,
      errors: [{ path: 'error_code', message: 'Not an error code of the catalog' }],
    });
  }
  // A cursor pages one shop's receipts (the one list shape, ADR 0013); the filters may change between pages.
  const cursorScope = listScope('receipts', p.shopId);
  const beforeId =
    cursorPosition(ctx.services.secrets, cursorScope, input.cursor, (id) => isId('receipt', id)) ?? undefined;
  const { db } = ctx.services;
  const { rows, hasMore } = await shopReceiptsPage(db, p.shopId, {
    endpointId: input.endpoint_id,
    result: input.result,
    errorCode: input.error_code,
    receivedAfter: input.received_after ? Date.parse(input.received_after) : undefined,
    receivedBefore: input.received_before ? Date.parse(input.received_before) : undefined,
    beforeId,
    limit: input.limit,
  });
  const last = rows.at(-1);
  return {
    data: await receiptViews(db, rows, ctx.services.now()),
    page: {
      next_cursor: hasMore && last ? sealCursor(ctx.services.secrets, cursorScope, last.id) : null,
      has_more: hasMore,
      limit: input.limit,
    },
  };
}
