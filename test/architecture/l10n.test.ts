/**
 * Localisation stays complete: every string the extension passes to `vscode.l10n.t` is in
 * l10n/bundle.l10n.json (the translators' template, `npx @vscode/l10n-dev export --outDir ./l10n
 * ./src/vscode`), and every `%key%` of package.json is in package.nls.json, with no key left over.
 */
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

// out/test/architecture → the repository root.
const ROOT = path.join(__dirname, '..', '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The first arguments of `vscode.l10n.t(…)` calls in `file` that are string literals, and the calls whose first argument is not one. */
function l10nStrings(file: string): { strings: string[]; dynamic: number } {
  const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.ES2022, true);
  const out = { strings: [] as string[], dynamic: 0 };
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.expression.getText(source) === 'vscode.l10n.t') {
      const first = node.arguments[0];
      if (first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first))) out.strings.push(first.text);
      else out.dynamic++;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe('localisation', () => {
  it('every vscode.l10n.t string of src/vscode is in l10n/bundle.l10n.json, and none is built at run time', () => {
    const bundle = JSON.parse(read('l10n/bundle.l10n.json')) as Record<string, string>;
    const files = readdirSync(path.join(ROOT, 'src/vscode')).filter((f) => f.endsWith('.ts'));
    let count = 0;
    for (const f of files) {
      const { strings, dynamic } = l10nStrings(`src/vscode/${f}`);
      assert.equal(dynamic, 0, `${f}: a vscode.l10n.t message must be a literal (placeholders {0} for values)`);
      for (const s of strings) assert.ok(Object.hasOwn(bundle, s), `${f}: "${s}" is missing from l10n/bundle.l10n.json (run the export)`);
      count += strings.length;
    }
    assert.ok(count >= 50, `found ${count} strings`);
  });

  it('every title, category and description a person reads in package.json contributes goes through package.nls.json', () => {
    const contributes = (JSON.parse(read('package.json')) as { contributes: unknown }).contributes;
    const literal: string[] = [];
    const visit = (v: unknown, where: string): void => {
      if (Array.isArray(v)) v.forEach((x, i) => visit(x, `${where}[${i}]`));
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) visit(x, `${where}.${k}`);
      else if (typeof v === 'string' && /\.(title|category|markdownDescription|description|shortTitle|contextualTitle|name)$/.test(where) && !/^%[^%]+%$/.test(v))
        literal.push(`${where}: ${v}`);
    };
    visit(contributes, 'contributes');
    assert.deepEqual(literal, [], 'literal text a translation cannot reach');
  });

  it('every %key% of package.json is in package.nls.json, and every key there is used', () => {
    const pkg = read('package.json');
    const nls = JSON.parse(read('package.nls.json')) as Record<string, string>;
    const used = new Set([...pkg.matchAll(/"%([^"%]+)%"/g)].map((m) => m[1]));
    for (const k of used) assert.ok(Object.hasOwn(nls, k), `package.nls.json lacks "${k}"`);
    assert.deepEqual(
      Object.keys(nls).filter((k) => !used.has(k)),
      [],
      'keys no part of package.json uses',
    );
  });
});
