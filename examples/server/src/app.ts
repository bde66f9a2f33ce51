import express, { type Express, type RequestHandler } from 'express';
import { apiError, checkRoutes, conventions, csrfTokens, errorHandler, notFound } from 'express-api-conventions';
import { dpopAuth } from 'express-api-conventions/oauth2';
import { deviceCookies, signInGuard } from 'express-api-conventions-authorization-server';
import { namesOnlyClient, REALM, requireBearer, type TokenSettings, tokenSettings } from './auth.js';
import { consentsRouter } from './authorize/consents.js';
import { authorizationPages } from './authorize/pages.js';
import { exportsRouter } from './exports.js';
import { CONSENT_PAGE, SIGN_IN_PAGE } from './page-paths.js';
import { presetOptions } from './preset-options.js';
import type { Services } from './services.js';
import { sessionsRouter } from './sessions/routes.js';
import { browserSignIn } from './sessions/sign-in.js';
import type { Settings } from './settings.js';
import { accessTokenKeys } from './signing-key.js';
import { tokenService } from './token-service.js';
import { representUser, usersRouter } from './users/routes.js';

/** GET /v1/me: the token's own user; bearer only, and confidential (no-store, the default of caching()). */
function meRoute(settings: Settings, services: Services, tokens: TokenSettings): RequestHandler[] {
  // With DPoP on (the default) it also takes DPoP-bound tokens, each request with a proof of the token's key.
  const auth = settings.dpop
    ? dpopAuth({ ...tokens, realm: REALM, origin: new URL(services.issuer).origin, dpop: { replay: services.dpopReplay } })
    : requireBearer(tokens);
  return [
    auth,
    async (req, res) => {
      // A client credentials token is valid here but names no user: 403, not the 404 of a user deleted since.
      if (namesOnlyClient(req.auth)) {
        throw apiError('forbidden', {
          message: "This access token is a client's own (client credentials): /v1/me needs a user's token.",
        });
      }
      const user = await services.users.get(BigInt(req.auth?.subject ?? '0'));
      if (!user) throw apiError('resourceNotFound', { message: 'The user of this token no longer exists.' });
      res.json(representUser(user));
    },
  ];
}

/**
 * The reference server: every rule of docs/conventions.md on one small users service,
 * assembled from the library's public exports, in the order they must run.
 */
export function createApp(settings: Settings, services: Services): Express {
  const { users, sessions, accounts, secrets } = services;
  const tokens = tokenSettings(
    accessTokenKeys(settings.accessTokenAlg, secrets.token, services.signingKey),
    services.issuer,
    services.revokedFamilies,
    users,
    services.clients,
  );
  const csrf = csrfTokens({ secret: secrets.csrf });
  // One sign-in guard for every door that checks a password (token endpoint, browser sign-in, the sign-in page), on the shared counts.
  const guard = signInGuard({ store: services.signIns });
  const oauth = tokenService(settings, services, tokens, guard);
  const app = express();

  app.use(conventions(presetOptions(settings, services, { tokens, csrf, tokenRouter: oauth })));
  app.use(usersRouter(users));
  app.get('/v1/me', ...meRoute(settings, services, tokens));
  app.use(
    exportsRouter({
      state: services.state,
      users,
      delaySeconds: settings.exportDelay,
      keptSeconds: settings.exportKept,
      limit: settings.exportLimit,
      callerLimit: settings.exportCallerLimit,
    }),
  );
  // The device cookie is signed with the token secret (under its own label): the same on every instance.
  const devices = deviceCookies({ secret: secrets.token });
  const signIn = browserSignIn({ sessions, accounts, guard, devices, passwordCost: settings.passwordCost, users });
  app.use(sessionsRouter({ sessions, signIn, csrf, users }));
  app.use(authorizationPages({ sessions, signIn, csrf, authorization: oauth.authorization }));
  app.use(
    consentsRouter({
      consents: services.consents,
      clients: services.clients,
      withdrawConsent: oauth.authorization.withdrawConsent,
    }),
  );

  // A wrong URI is 404 (or 405 with Allow), told apart from a missing record; every error is JSON.
  // A 401 without a challenge of its own (a failed browser sign-in) names the bearer scheme of this API.
  app.use(notFound(), errorHandler({ production: settings.production, challenge: `Bearer realm="${REALM}"` }));

  // The server's own routes follow the path rules (docs/conventions.md section 3), or it does not start.
  // `me` names the caller, not a collection. Well-known URIs (RFC 8615) are names fixed by their RFCs,
  // outside the API's versioned paths; the sign-in and consent pages are HTML for people, not resources.
  checkRoutes(app, {
    exceptions: { plural: ['me'] },
    ignore: [/^\/\.well-known\//, SIGN_IN_PAGE, CONSENT_PAGE],
  });
  console.log('route check: every route follows the path rules (docs/conventions.md §3)');
  return app;
}
