import { Router } from 'express';
import { apiError } from 'express-api-conventions';
import type { ConsentStore, RegisteredClientStore, WithdrawConsent } from 'express-api-conventions-authorization-server';
import { scriptOnlyForCookies, signedIn } from '../sessions/auth.js';

export interface ConsentsRouterOptions {
  readonly consents: ConsentStore;
  /** To name each client as the consent page named it. */
  readonly clients: RegisteredClientStore;
  /**
   * The router's `authorization.withdrawConsent`: it forgets the consent and
   * revokes the client's tokens of that user, on every instance
   * (docs/authorization-code.md); the store's withdraw() alone leaves them.
   */
  readonly withdrawConsent: WithdrawConsent;
}

/**
 * The consents a user gave third-party clients, listed and withdrawn as
 * sessions are (`/v1/sessions`): by the session cookie (the page's own
 * scripts for reads, its CSRF token for the withdrawal, checked by the
 * preset) or by a bearer token.
 */
export function consentsRouter(options: ConsentsRouterOptions): Router {
  const { consents, clients, withdrawConsent } = options;
  const router = Router();

  router.get('/v1/consents', scriptOnlyForCookies(), signedIn, async (req, res) => {
    const given = await consents.list(req.auth?.subject ?? '');
    const named = await Promise.all(
      given.map(async ({ clientId, scopes, grantedAt }) => {
        const client = await clients.findById(clientId);
        return { clientId, clientName: client?.name ?? clientId, scopes, grantedAt };
      }),
    );
    res.json({ consents: named });
  });

  // The client is cut off (its refresh tokens for this user refused), and its next authorization request asks again.
  router.delete('/v1/consents/:id', signedIn, async (req, res) => {
    const { withdrawn } = await withdrawConsent(req.auth?.subject ?? '', String(req.params.id), { request: req });
    if (!withdrawn) throw apiError('resourceNotFound', { message: 'No consent given to this client.' });
    res.status(204).end();
  });

  return router;
}
