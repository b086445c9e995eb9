/**
 * A suite that only runs as native ESM (`import.meta`, a top-level dynamic import): jest-bare.test.ts
 * runs it through a bare `npx jest`, which must work the same as `npm test`.
 */
const { pathToFileURL } = await import('node:url');

test('runs as an ES module', () => {
  expect(import.meta.url).toBe(pathToFileURL(new URL(import.meta.url).pathname).href);
});
