// The one module of the tests that imports the engine's entry points from src/, so a move of the
// engine (src/reconcile.ts → src/reconcile/) changes one line. Free of vitest: reconcile-child.ts,
// bundled into a process of its own, imports it too.
export { forkHint, reconcile, refuseCrossNamespaceRefs, type Hooks } from '../../src/reconcile/index.js';
