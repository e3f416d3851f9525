/**
 * ESLint rule `local/no-import-cycle`: reports an import that closes a cycle between modules of one
 * source tree, and an import that makes two of its top-level folders import each other.
 *
 * Why a rule of our own: the plugins that do this (eslint-plugin-import's no-cycle) are a large
 * dependency for a small check. The tree is small (a few hundred files), so the rule reads every file's
 * imports with TypeScript's preProcessFile (no type checking), resolves relative ones (`.js` is the
 * `.ts` file, as NodeNext writes it) and looks for strongly connected components. Type-only imports
 * count: a cycle of types is still two modules that cannot be understood one without the other.
 *
 * Options: `{ root: 'src' }` (relative to ESLint's cwd; files outside it are not checked) and
 * `{ folders: true }` to also report top-level folders that import each other, directly or through
 * any loop of folders (strongly connected folders): an import is reported when its target's folder can
 * reach its own folder back. Files directly in the root (the entry points) are not a folder.
 * `{ allowFolderPairs: [['a', 'b']] }` lets a known edge between two folders be while it is being
 * untangled (each entry should say why in the config).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const EXTENSIONS = ['.ts', '.mts', '.tsx', '.js', '.mjs'];

/** Source files read before, by path: their imports, kept while the file's mtime is unchanged. */
const fileCache = new Map();

function listFiles(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) listFiles(full, out);
    else if (EXTENSIONS.includes(extname(entry.name)) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** The file an import specifier names, or undefined (a package, or a file outside the tree). */
function resolveSpecifier(from, specifier, files) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|tsx?)$/, '');
  for (const candidate of [
    base,
    ...EXTENSIONS.map((e) => stem + e),
    ...EXTENSIONS.map((e) => join(base, 'index' + e)),
  ]) {
    if (files.has(candidate)) return candidate;
  }
  return undefined;
}

function specifiersOf(text) {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

function importsOf(file, files, liveText) {
  let specs;
  if (liveText !== undefined) specs = specifiersOf(liveText);
  else {
    const mtime = statSync(file).mtimeMs;
    const cached = fileCache.get(file);
    if (cached?.mtime === mtime) specs = cached.specs;
    else {
      specs = specifiersOf(readFileSync(file, 'utf8'));
      fileCache.set(file, { mtime, specs });
    }
  }
  return specs.map((s) => resolveSpecifier(file, s, files)).filter((f) => f !== undefined);
}

/** Tarjan's strongly connected components: node -> component id, and the components' sizes. */
function components(graph) {
  const index = new Map();
  const low = new Map();
  const comp = new Map();
  const stack = [];
  const onStack = new Set();
  let next = 0;
  let id = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        comp.set(w, id);
      } while (w !== v);
      id++;
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return comp;
}

/** A shortest path from `from` to `to` in `graph` (both included), or undefined. */
function pathBetween(graph, from, to) {
  const prev = new Map([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const v = queue.shift();
    if (v === to) {
      const path = [];
      for (let x = to; x !== undefined; x = prev.get(x)) path.unshift(x);
      return path;
    }
    for (const w of graph.get(v) ?? []) {
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return undefined;
}

/** The top-level folder of a file under root ('' for a file directly in root). */
function folderOf(root, file) {
  const parts = relative(root, file).split(sep);
  return parts.length > 1 ? parts[0] : '';
}

/** @type {import('eslint').Rule.RuleModule} */
export const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Disallow import cycles between modules and between top-level folders of a source tree' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          folders: { type: 'boolean' },
          allowFolderPairs: {
            type: 'array',
            items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 },
          },
        },
        additionalProperties: false,
      },
    ],
    messages: {
      module: 'Import cycle: {{cycle}}. Move what both need into a module that neither imports back.',
      folder:
        'Folders import each other: {{cycle}} ({{example}}). Move what both need to where it belongs (often src/objects/ or src/util/).',
    },
  },
  create(context) {
    const options = context.options[0] ?? {};
    const root = resolve(context.cwd, options.root ?? 'src');
    const filename = resolve(context.filename);
    if (relative(root, filename).startsWith('..')) return {};

    const files = new Set(listFiles(root));
    if (!files.has(filename)) return {};
    const graph = new Map();
    for (const f of files) {
      graph.set(f, importsOf(f, files, f === filename ? context.sourceCode.text : undefined));
    }
    const comp = components(graph);
    const name = (f) => relative(root, f).split(sep).join('/');

    // Folder graph: for each folder edge, one file-level import that makes it (for the message).
    const folderGraph = new Map();
    const example = new Map();
    if (options.folders) {
      for (const [f, targets] of graph) {
        const a = folderOf(root, f);
        for (const t of targets) {
          const b = folderOf(root, t);
          if (a === '' || b === '' || a === b) continue;
          if (!folderGraph.has(a)) folderGraph.set(a, new Set());
          folderGraph.get(a).add(b);
          if (!example.has(`${a}>${b}`)) example.set(`${a}>${b}`, `${name(f)} imports ${name(t)}`);
        }
      }
    }

    const check = (node) => {
      const specifier = node.source?.value;
      if (typeof specifier !== 'string') return;
      const target = resolveSpecifier(filename, specifier, files);
      if (target === undefined) return;
      if (target === filename || comp.get(target) === comp.get(filename)) {
        const back = target === filename ? [filename] : pathBetween(graph, target, filename);
        const cycle = [filename, ...(back ?? [])].map(name).join(' → ');
        context.report({ node: node.source, messageId: 'module', data: { cycle } });
        return;
      }
      const a = folderOf(root, filename);
      const b = folderOf(root, target);
      if (!options.folders || a === '' || b === '' || a === b) return;
      const allowed = (options.allowFolderPairs ?? []).some(([x, y]) => (x === a && y === b) || (x === b && y === a));
      if (allowed) return;
      // The way back from b's folder to a's, over folder edges not allowed by the options.
      const usable = new Map(
        [...folderGraph].map(([x, ys]) => [
          x,
          new Set(
            [...ys].filter(
              (y) => !(options.allowFolderPairs ?? []).some(([p, q]) => (p === x && q === y) || (p === y && q === x)),
            ),
          ),
        ]),
      );
      const back = pathBetween(usable, b, a);
      if (back === undefined) return;
      const steps = back.slice(0, -1).map((x, i) => example.get(`${x}>${back[i + 1]}`));
      context.report({
        node: node.source,
        messageId: 'folder',
        data: { cycle: [a, ...back].join(' → '), example: steps.join('; ') },
      });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

export default { rules: { 'no-import-cycle': noImportCycle } };
