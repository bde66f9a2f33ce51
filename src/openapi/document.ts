/**
 * Small helpers over an OpenAPI document held as plain JSON: local `$ref`s,
 * components added under a name that never replaces the team's, and
 * headers matched the way HTTP matches them (case-insensitively).
 */

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The HTTP methods an OpenAPI path item holds operations for. */
export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The object a local `$ref` (`#/...`) points to, following a few in a row; the value itself when it is no ref. */
export function resolve(doc: Json, value: unknown): Json | undefined {
  let current = value;
  for (let depth = 0; depth < 10 && isObject(current) && typeof current.$ref === 'string'; depth++) {
    const ref = current.$ref;
    if (!ref.startsWith('#/')) return undefined;
    let target: unknown = doc;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isObject(target) ? target[key] : undefined;
    }
    current = target;
  }
  return isObject(current) ? current : undefined;
}

/** `parent[key]` as an object, made (empty) when absent. */
export function child(parent: Json, key: string): Json {
  const value = parent[key];
  if (isObject(value)) return value;
  const made: Json = {};
  parent[key] = made;
  return made;
}

/**
 * Adds `value` under `components[kind][name]` and returns its `$ref`. A
 * component of that name that is already there is the team's and is used as
 * it is written (never replaced): a header component is named after its
 * header, an error answer after its status.
 */
export function addComponent(doc: Json, kind: string, name: string, value: Json): { $ref: string } {
  const components = child(child(doc, 'components'), kind);
  if (components[name] === undefined) components[name] = value;
  return { $ref: `#/components/${kind}/${name}` };
}

/** Whether a header map already names `name`, in any case (RFC 9110 §5.1). */
export const hasHeader = (headers: Json, name: string): boolean => {
  const lower = name.toLowerCase();
  return Object.keys(headers).some((key) => key.toLowerCase() === lower);
};

/** The security requirements in force for an operation: its own, else the document's. */
export function requirementsOf(doc: Json, operation: Json): Json[] {
  const requirements = operation.security ?? doc.security;
  return Array.isArray(requirements) ? requirements.filter(isObject) : [];
}

/** Whether an operation declares a security requirement that names a scheme. */
export const isProtected = (doc: Json, operation: Json): boolean =>
  requirementsOf(doc, operation).some((requirement) => Object.keys(requirement).length > 0);
