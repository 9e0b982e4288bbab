// Wire types every service shares: the error body `{"error": "<text>"}` that answers each
// non-2xx request of every API (daemon/plugins/errors.ts writes it), defined once.
import { Type } from '@sinclair/typebox';

export const ErrorSchema = Type.Object({ error: Type.String() });
