/* global module */
/**
 * Jest's resolver, with one change: the optional `e2b` SDK resolves to the ES module entry its
 * package.json declares (`module`), not to `main`. Jest runs a package's `main` (CommonJS) in its own
 * CommonJS runtime, which cannot `require()` the ES-module-only packages the SDK's CommonJS build
 * requires (chalk 5); Node itself can (require of ES modules), so only tests need this.
 */
module.exports = (request, options) =>
  options.defaultResolver(request, {
    ...options,
    packageFilter: (pkg) =>
      pkg.name === 'e2b' && typeof pkg.module === 'string' ? { ...pkg, main: pkg.module } : pkg,
  });
