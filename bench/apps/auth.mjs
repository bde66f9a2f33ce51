/** The bearer token from `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(req) {
  const header = req.headers.authorization;
  return typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : undefined;
}
