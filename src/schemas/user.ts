// Wire type of the marketplace's "who am I" answer (GET /api/user), as gh's GET /user: the account
// a credential belongs to, so `mkt auth login marketplace` can name it before saving the token.
import { Type, type Static } from '@sinclair/typebox';

export const CurrentUserSchema = Type.Object({
  id: Type.String(),
  name: Type.String({ description: 'the account name (the owner part of its repositories)' }),
  email: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  via: Type.Union([Type.Literal('token'), Type.Literal('session')], { description: 'the credential the request presented' }),
  scope: Type.Optional(Type.Union([Type.Literal('read'), Type.Literal('push')], { description: "a token's scope; absent for a session" })),
});
export type CurrentUser = Static<typeof CurrentUserSchema>;
