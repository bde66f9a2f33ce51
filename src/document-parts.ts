import { ConfigurationError } from './config/configuration-error.js';

/**
 * The registration point of OpenAPI document parts (docs/extend.md): what a
 * package that answers at a stage of conventions() (the authorization
 * server's router, at `tokenRouter`) adds to withConventions()'s document.
 * The library describes the stage only through the part the package gives:
 * it names none of that package's paths, operations or grants. A file at
 * the top of src/ that loads nothing, so that the preset's contract
 * (oauth2/token-service.ts) and express-api-conventions/openapi both read it.
 */

type Json = Record<string, unknown>;

/** What withConventions() lends a part: its own way of adding, so a part never replaces what the team wrote. */
export interface DocumentTools {
  /** Adds `value` under `components[kind][name]` unless the document has one of that name, and returns its `$ref`. */
  addComponent(kind: string, name: string, value: Json): { $ref: string };
  /** `parent[key]` as an object, made (empty) when absent. */
  objectAt(parent: Json, key: string): Json;
  /** The sentence that states RFC 8725 (JWT Best Current Practices) the way the OWASP ruleset looks for it. */
  readonly jwtPractices: string;
}

/** A package's part of the document: its operations, and where its errors take RFC 6749's shape. */
export interface DocumentPart {
  /**
   * The paths whose error answers are RFC 6749 §5.2's `{ error, error_description }`
   * (the preset's first stage gives them that shape): their 4xx and 5xx
   * answers are described so, with `Pragma: no-cache`.
   */
  readonly oauthErrorPaths: readonly string[];
  /** Adds the part's operations, schemas and security schemes, each only where the document has none at that path or name. */
  describe(document: Json, tools: DocumentTools): void;
}

/** The stages of conventions() that take a package's router, whose part a package may register. */
export type DescribedStage = 'tokenRouter';

/** Makes a stage's part from its options written as data (a document's options are JSON). */
export type DocumentPartFromOptions = (options: Readonly<Json>) => DocumentPart;

// One registry per process, under a registry symbol: the package may load the library's ESM build and a
// script its CommonJS build (or the other way round), and both must see the one registration.
const REGISTRY: unique symbol = Symbol.for('express-api-conventions.documentParts');
type Holder = { [REGISTRY]?: Map<DescribedStage, DocumentPartFromOptions> };

function registry(): Map<DescribedStage, DocumentPartFromOptions> {
  const holder = globalThis as Holder;
  holder[REGISTRY] ??= new Map();
  return holder[REGISTRY];
}

/**
 * Registers how a stage's options written as data are described: a package
 * calls it when it loads, so that `withConventions(document, { tokenRouter:
 * { issuer: … } })` describes its router without the router being built. A
 * second registration for the same stage replaces the first (the package's
 * two builds register the same maker).
 */
export function registerDocumentPart(stage: DescribedStage, fromOptions: DocumentPartFromOptions): void {
  if (typeof fromOptions !== 'function') {
    throw new ConfigurationError(
      'EAC_OPTION_INVALID',
      `registerDocumentPart(stage, fromOptions): \`fromOptions\` must be a function of the stage's options; received ${typeof fromOptions}.`,
      { option: 'fromOptions', problem: 'must be a function of the stage’s options' },
    );
  }
  registry().set(stage, fromOptions);
}

/** Whether a value carries a document part (the router of a package): `documentPart` with its `describe()`. */
export function carriesDocumentPart(value: unknown): value is { readonly documentPart: DocumentPart } {
  const part = (value as { documentPart?: Partial<DocumentPart> } | undefined)?.documentPart;
  return typeof part === 'object' && part !== null && typeof part.describe === 'function' && Array.isArray(part.oauthErrorPaths);
}

/**
 * The document part of a stage's value: the part its router carries, the
 * registered maker's part for options written as data, or undefined when
 * the stage is off. Options as data with nothing registered for the stage
 * throw: the package that describes them was not loaded.
 */
export function documentPartOf(caller: string, stage: DescribedStage, value: unknown): DocumentPart | undefined {
  if (value === undefined || value === false) return undefined;
  if (carriesDocumentPart(value)) return value.documentPart;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigurationError(
      'EAC_OPTION_INVALID',
      `${caller}: \`${stage}\` must be the router of the package that answers there, or its options as data; received ${Array.isArray(value) ? 'an array' : typeof value}.`,
      { option: stage, problem: 'must be a router or its options as data' },
    );
  }
  const fromOptions = registry().get(stage);
  if (fromOptions !== undefined) return fromOptions(value as Json);
  throw new ConfigurationError(
    'EAC_PEER_MISSING',
    `${caller}: \`${stage}\` written as data is described by the package that answers there, and none registered its description: ` +
      `import that package first (\`import 'express-api-conventions-authorization-server'\`), or give the router itself.`,
    { option: stage, problem: 'is described by a package that was not loaded' },
  );
}
