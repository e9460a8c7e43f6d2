// Lint a Dockerfile with dockerfile-utils and fail on any error or warning.
// usage: node lint_dockerfile.mjs [path/to/Dockerfile]
import { readFileSync } from 'node:fs';
import { validate, ValidationSeverity } from 'dockerfile-utils';

const path = process.argv[2] ?? new URL('../../Dockerfile', import.meta.url).pathname;
const text = readFileSync(path, 'utf8');

// Everything the validator can flag counts; nothing is downgraded.
const W = ValidationSeverity.WARNING;
const settings = {
  deprecatedMaintainer: W,
  directiveCasing: W,
  emptyContinuationLine: W,
  instructionCasing: W,
  instructionCmdMultiple: W,
  instructionEntrypointMultiple: W,
  instructionHealthcheckMultiple: W,
  instructionJSONInSingleQuotes: W,
  instructionWorkdirRelative: W,
};

// LSP DiagnosticSeverity: 1 error, 2 warning, 3 information, 4 hint.
const names = { 1: 'error', 2: 'warning', 3: 'info', 4: 'hint' };
const diags = validate(text, settings);
let bad = 0;
for (const d of diags) {
  const sev = d.severity ?? 1;
  if (sev <= 2) bad++;
  console.log(`${path}:${d.range.start.line + 1}:${d.range.start.character + 1}: ` +
              `${names[sev] ?? sev}: ${d.message}`);
}
if (bad > 0) {
  console.log(`dockerfile-lint: ${bad} problem(s) in ${path}`);
  process.exit(1);
}
console.log(`dockerfile-lint: ${path} ok (${diags.length} diagnostics)`);
