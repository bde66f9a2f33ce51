import { ConfigurationError } from '../config/configuration-error.js';
import type { SecurityEventName } from '../events/index.js';
import { type CatalogueEntry, ERROR_CATALOGUE } from './catalogue.js';

/**
 * The registration point of error entries (docs/extend.md): a package that
 * answers with errors of its own (the authorization server's RFC 6749 and
 * sign-in refusals) registers them here as it loads, each with the security
 * event its refusal publishes, so that refuse() and errorHandler() publish
 * them like the library's own, named by the package's entry. The library's
 * catalogue (catalogue.ts) keeps only the errors its own middlewares answer.
 */

/** One entry a package registers: a catalogue entry, and the event its refusal is (none: it publishes nothing). */
export interface ErrorEntryRegistration extends CatalogueEntry {
  /** The security event, a name of the names table (its level is the table's: src/events/names.ts). */
  readonly event?: { readonly event: SecurityEventName };
}

/** A registered entry, its name and the package that registered it. */
export interface RegisteredEntry {
  readonly name: string;
  readonly owner: string;
  readonly entry: ErrorEntryRegistration;
}

// One registry per process, under a registry symbol: the package's ESM and CommonJS builds, and the library's, share it.
const REGISTRY: unique symbol = Symbol.for('express-api-conventions.errorEntries');
type Holder = { [REGISTRY]?: Map<number, RegisteredEntry> };

function byCode(): Map<number, RegisteredEntry> {
  const holder = globalThis as Holder;
  holder[REGISTRY] ??= new Map();
  return holder[REGISTRY];
}

const CATALOGUED_CODES = new Set<number>(Object.values(ERROR_CATALOGUE).map((entry) => entry.code));

function conflict(message: string, option: string, problem: string): ConfigurationError {
  return new ConfigurationError('EAC_OPTIONS_CONFLICT', `registerErrorEntries(owner, entries): ${message}`, { option, problem });
}

/** The entry as the catalogue writes one: an error status, a code of that status (docs/errors.md), a message. */
function checkEntry(name: string, entry: ErrorEntryRegistration): void {
  const { status, code, message } = entry ?? ({} as ErrorEntryRegistration);
  const valid =
    Number.isInteger(status) &&
    status >= 400 &&
    status <= 599 &&
    Number.isInteger(code) &&
    Math.floor(code / 100) === status &&
    typeof message === 'string' &&
    message !== '';
  if (!valid) {
    throw new ConfigurationError(
      'EAC_OPTION_INVALID',
      `registerErrorEntries(owner, entries): \`entries.${name}\` must be { status (400 to 599), code (the status followed by two digits), message }; received ${JSON.stringify(entry)}.`,
      { option: `entries.${name}`, problem: 'must be { status, code, message } with a code of its status' },
    );
  }
}

/**
 * Registers a package's error entries. A name or a code the library's
 * catalogue has, or another package registered, is refused
 * (`EAC_OPTIONS_CONFLICT`): a code names one situation. The same package
 * registering again (its other build) replaces its own entries.
 */
export function registerErrorEntries(owner: string, entries: Readonly<Record<string, ErrorEntryRegistration>>): void {
  const registry = byCode();
  const names = new Map([...registry.values()].filter((held) => held.owner !== owner).map((held) => [held.name, held]));
  for (const [name, entry] of Object.entries(entries)) {
    checkEntry(name, entry);
    const taken = registry.get(entry.code);
    if (name in ERROR_CATALOGUE || CATALOGUED_CODES.has(entry.code)) {
      throw conflict(
        `\`${name}\` (code ${entry.code}) is the library's own entry; give ${owner}'s entry another name and code.`,
        `entries.${name}`,
        'is the library’s own entry',
      );
    }
    const other = names.get(name) ?? (taken !== undefined && taken.owner !== owner ? taken : undefined);
    if (other !== undefined) {
      throw conflict(
        `\`${name}\` (code ${entry.code}) is registered by ${other.owner} already (\`${other.name}\`, code ${other.entry.code}).`,
        `entries.${name}`,
        `is registered by ${other.owner}`,
      );
    }
  }
  for (const [code, held] of registry) if (held.owner === owner) registry.delete(code);
  for (const [name, entry] of Object.entries(entries)) registry.set(entry.code, Object.freeze({ name, owner, entry }));
}

/** The registered entry of a code, if a package registered one. */
export const registeredEntryOfCode = (code: number): RegisteredEntry | undefined => byCode().get(code);

/** Every registered entry, by code (docs/errors.md lists them with the library's). */
export const registeredErrorEntries = (): readonly RegisteredEntry[] => [...byCode().values()];
