import path from 'node:path';
import ts from 'typescript';

/**
 * The checker's public surface, pinned: every name its one entry point
 * offers, types included. These are the names `express-api-conventions/conformance`
 * offered before the checker became a package of its own, plus the class of
 * the errors checkConventions() throws (the library's root used to give it).
 * A name added or removed fails this test until the list says so.
 */
const PINNED = [
  'BaselineEntry',
  'CHECK_TRIAGE',
  'CONFORMANCE_CAUSES',
  'CONFORMANCE_CHECKS',
  'CONFORMANCE_CHECK_IDS',
  'CONFORMANCE_DEFAULT_REQUESTS',
  'CONFORMANCE_REQUEST_CAP',
  'CONFORMANCE_SECTIONS',
  'Cause',
  'CauseGroup',
  'CauseId',
  'CheckDefinition',
  'CheckEvidence',
  'CheckId',
  'CheckOutcome',
  'CheckResult',
  'CheckStatus',
  'ConfigurationError',
  'ConfigurationErrorCode',
  'ConformanceBaseline',
  'ConformanceChange',
  'ConformanceCredentials',
  'ConformanceOptions',
  'ConformancePhase',
  'ConformanceReport',
  'ConformanceSection',
  'ConformanceTarget',
  'ExchangeRecord',
  'SEVERITIES',
  'SarifOptions',
  'Severity',
  'Suppression',
  'checkConventions',
  'formatHtml',
  'formatJunit',
  'formatReport',
  'formatSarif',
  'readBaseline',
  'updatedBaseline',
];

describe("the checker's public surface", () => {
  it('is the pinned list', () => {
    const entry = path.join(__dirname, '..', 'src', 'index.ts');
    const program = ts.createProgram([entry], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    });
    const source = program.getSourceFile(entry);
    const module = source && program.getTypeChecker().getSymbolAtLocation(source);
    if (!module) throw new Error(`no module for ${entry}`);
    const names = program
      .getTypeChecker()
      .getExportsOfModule(module)
      .map((symbol) => symbol.getName())
      .sort();
    expect(names).toEqual(PINNED);
  }, 60_000);
});
