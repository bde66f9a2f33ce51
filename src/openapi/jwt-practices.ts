import type { DocumentPart, DocumentTools } from '../document-parts.js';
import { addComponent, child, isObject, type Json } from './document.js';

/**
 * What withConventions() adds beside the preset's answers: a package's
 * document part (docs/extend.md), and RFC 8725 stated on every JWT bearer
 * scheme.
 */

/** RFC 8725 (JWT Best Current Practices), as the OWASP ruleset looks for it (`RFC8725`). */
export const JWT_PRACTICES =
  'Access tokens are JWTs (RFC 9068) issued and checked as RFC8725 (JSON Web Token Best Current Practices) says: one algorithm per key, `typ` `at+jwt`, issuer and audience checked, short lifetime.';

/** Adds a package's operations and schemes, with the document's own helpers (they never replace what the team wrote). */
export function addDocumentPart(doc: Json, part: DocumentPart): void {
  const tools: DocumentTools = {
    addComponent: (kind, name, value) => addComponent(doc, kind, name, value),
    objectAt: child,
    jwtPractices: JWT_PRACTICES,
  };
  part.describe(doc, tools);
}

/** States RFC 8725 on every JWT bearer scheme that does not yet (OWASP API2: JWT best practices). */
export function stateJwtPractices(doc: Json): void {
  const securitySchemes = isObject(doc.components) ? doc.components.securitySchemes : undefined;
  if (!isObject(securitySchemes)) return;
  for (const scheme of Object.values(securitySchemes)) {
    if (!isObject(scheme) || scheme.type !== 'http' || String(scheme.bearerFormat).toLowerCase() !== 'jwt') continue;
    const said = typeof scheme.description === 'string' ? scheme.description : '';
    if (!said.includes('RFC8725')) scheme.description = said === '' ? JWT_PRACTICES : `${said}\n\n${JWT_PRACTICES}`;
  }
}
